"""The exception every problem with a project raises."""

from __future__ import annotations


class ProjectError(ValueError):
    """A project that cannot be used, with every problem found at once.

    ``problems`` is the list of ``(path, message)`` pairs that
    ``pipewright validate`` prints, in the same order: ``path`` is the JSON
    path of the field (``"training.microbatches"``), empty for a problem of
    the whole file.
    """

    def __init__(self, what: str, problems: list[tuple[str, str]]):
        self.what = what
        self.problems = [(str(path), str(message)) for path, message in problems]
        count = len(self.problems)
        lines = [f"{what}: {count} problem{'' if count == 1 else 's'}:"]
        lines += [f"  {path}: {message}" if path else f"  {message}"
                  for path, message in self.problems]
        super().__init__("\n".join(lines))

    @property
    def paths(self) -> list[str]:
        """The JSON paths of the problems, in order."""
        return [path for path, _ in self.problems]
