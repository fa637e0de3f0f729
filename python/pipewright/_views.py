"""Live views of a project's document: attributes and lists that edit it.

``project.training.schedule = "gpipe"`` and ``project.model.layers[3].out_features = 512``
go through here. A view holds its path in the document, not a copy, so it
stays current after other edits; each assignment hands the whole edited
document to the project, which parses it again and refuses (ProjectError)
what the file format refuses, keeping the project as it was.
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping, MutableSequence
from typing import Any


def plain(value: Any) -> Any:
    """Views replaced by the plain dicts and lists they show (for assignments)."""
    if isinstance(value, Section):
        return value.to_dict()
    if isinstance(value, ListView):
        return value.to_list()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def wrap(project: Any, path: tuple, value: Any) -> Any:
    """A view for dicts and lists, the value itself for numbers and strings."""
    if isinstance(value, dict):
        return Section(project, path)
    if isinstance(value, list):
        return ListView(project, path)
    return value


def path_text(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


class Section(MutableMapping):
    """An object of the project (``project.training``, a layer, a node).

    Its fields read and write as attributes or items; ``to_dict()`` copies it.
    """

    __slots__ = ("_project", "_path")

    def __init__(self, project: Any, path: tuple):
        object.__setattr__(self, "_project", project)
        object.__setattr__(self, "_path", path)

    def _document(self) -> dict:
        return self._project._resolve(self._path)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        document = self._document()
        if name not in document:
            fields = ", ".join(document) or "none"
            raise AttributeError(f"{path_text(self._path)} has no field {name!r} "
                                 f"(its fields: {fields})")
        return wrap(self._project, self._path + (name,), document[name])

    def __setattr__(self, name: str, value: Any) -> None:
        self._project._assign(self._path + (name,), value)

    def __delattr__(self, name: str) -> None:
        self._project._remove(self._path + (name,))

    def __getitem__(self, key: str) -> Any:
        document = self._document()
        if key not in document:
            raise KeyError(key)
        return wrap(self._project, self._path + (key,), document[key])

    def __setitem__(self, key: str, value: Any) -> None:
        self._project._assign(self._path + (key,), value)

    def __delitem__(self, key: str) -> None:
        if key not in self._document():
            raise KeyError(key)
        self._project._remove(self._path + (key,))

    def __iter__(self):
        return iter(list(self._document()))

    def __len__(self) -> int:
        return len(self._document())

    def __dir__(self):
        return list(self._document()) + ["to_dict"]

    def __eq__(self, other: Any) -> bool:
        return self._document() == plain(other)

    def to_dict(self) -> dict:
        return copy.deepcopy(self._document())

    def __repr__(self) -> str:
        return f"{path_text(self._path)} {self._document()!r}"


class ListView(MutableSequence):
    """A list of the project (``project.model.layers``, ``project.placement``)."""

    __slots__ = ("_project", "_path")

    def __init__(self, project: Any, path: tuple):
        self._project = project
        self._path = path

    def _document(self) -> list:
        return self._project._resolve(self._path)

    def __getitem__(self, index):
        document = self._document()
        if isinstance(index, slice):
            return [wrap(self._project, self._path + (i,), document[i])
                    for i in range(*index.indices(len(document)))]
        position = range(len(document))[index]  # IndexError as lists raise it
        return wrap(self._project, self._path + (position,), document[position])

    def _replace(self, edit) -> None:
        items = copy.deepcopy(self._document())
        edit(items)
        self._project._assign(self._path, items)

    def __setitem__(self, index, value) -> None:
        def edit(items):
            items[index] = plain(value)
        self._replace(edit)

    def __delitem__(self, index) -> None:
        def edit(items):
            del items[index]
        self._replace(edit)

    def insert(self, index: int, value: Any) -> None:
        self._replace(lambda items: items.insert(index, plain(value)))

    def __len__(self) -> int:
        return len(self._document())

    def __eq__(self, other: Any) -> bool:
        return self._document() == plain(other)

    def to_list(self) -> list:
        return copy.deepcopy(self._document())

    def __repr__(self) -> str:
        return f"{path_text(self._path)} {self._document()!r}"
