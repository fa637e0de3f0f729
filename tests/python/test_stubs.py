"""The type stubs (pipewright/__init__.pyi) against the module itself, so that
they cannot drift: the same public names, the same members of every class,
and the same parameters (names, kinds, which have defaults) of every function
and method written in Python."""

import ast
import inspect
import pathlib

import pytest

import pipewright
from conftest import ASSETS

STUB = pathlib.Path(pipewright.__file__).with_name("__init__.pyi")
# Names the stub defines for its own annotations, not part of the module.
STUB_ALIASES = {"PathLike", "Actions", "Count", "Calibrations"}


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(), filename=str(STUB))


def is_public(name: str) -> bool:
    return not name.startswith("_") or name in ("__version__", "_repr_html_")


def module_level(tree: ast.Module) -> dict:
    """Name -> node of what the stub declares at the top: classes, functions,
    annotated variables (type aliases are plain assignments)."""
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                assert target.id in STUB_ALIASES, f"the stub assigns {target.id}: an alias?"
    return found


def class_members(node: ast.ClassDef) -> dict:
    members = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            members[item.name] = item
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            members[item.target.id] = item
    return members


def own_classes(cls: type) -> list:
    """The classes of cls's MRO that belong to pipewright."""
    return [c for c in cls.__mro__ if c.__module__.startswith("pipewright")]


def runtime_public_members(cls: type) -> set:
    """Public names defined on the class (or a pipewright base) itself."""
    return {name for c in own_classes(cls) for name in vars(c) if is_public(name)}


def stub_parameters(function: ast.FunctionDef) -> list:
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    first_default = len(positional) - len(arguments.defaults)
    parameters = [(a.arg, "positional", i >= first_default) for i, a in enumerate(positional)]
    if arguments.vararg:
        parameters.append((arguments.vararg.arg, "*", False))
    parameters += [(a.arg, "keyword", d is not None)
                   for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)]
    if arguments.kwarg:
        parameters.append((arguments.kwarg.arg, "**", False))
    return parameters


KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.KEYWORD_ONLY: "keyword",
    inspect.Parameter.VAR_KEYWORD: "**",
}


def runtime_parameters(function) -> list:
    return [(p.name, KINDS[p.kind], p.default is not inspect.Parameter.empty)
            for p in inspect.signature(function).parameters.values()]


def python_function(value):
    """The plain function behind a class attribute, or None (properties,
    data, what Python or collections.abc define)."""
    if isinstance(value, (classmethod, staticmethod)):
        value = value.__func__
    if inspect.isfunction(value) and value.__module__.startswith("pipewright"):
        return value
    return None


def instances() -> dict:
    """One object of each public class, made the ordinary way."""
    project = pipewright.load(ASSETS / "examples" / "resnet50-2gpu-pipelined.json")
    try:
        pipewright.Project.from_dict({"name": "broken"})
    except pipewright.ProjectError as error:
        project_error = error
    else:
        pytest.fail("an empty project did not raise ProjectError")
    return {
        "Project": project,
        "Section": project.model,
        "ListView": project.placement,
        "SimulationResult": project.simulate(microbatches=4),
        "PlanResult": project.plan(schedule="1f1b", microbatches=4),
        "ScheduleComparison": project.compare_schedules(microbatches=4),
        "ProjectError": project_error,
        "RunError": pipewright.RunError("failed", 1, "pipewright: failed"),
        "RunResult": pipewright.RunResult({"out_dir": "runs/x", "iteration_time_s": 0.1}),
        "ImportedConfig": pipewright.import_config(ASSETS / "models" / "llama-3.2-1b.json"),
    }


def test_stub_and_py_typed_ship_beside_the_module():
    assert STUB.is_file()
    assert STUB.with_name("py.typed").is_file()


def test_stub_names_are_the_module_public_names():
    declared = set(module_level(stub_tree()))
    assert declared == set(pipewright.__all__), (
        f"only in the stub: {sorted(declared - set(pipewright.__all__))}; "
        f"only in __all__: {sorted(set(pipewright.__all__) - declared)}")
    public = {name for name in dir(pipewright) if is_public(name)}
    assert public == set(pipewright.__all__), (
        f"public but not in __all__: {sorted(public - set(pipewright.__all__))}")


def test_stub_classes_have_the_runtime_members():
    objects = instances()
    classes = {name: node for name, node in module_level(stub_tree()).items()
               if isinstance(node, ast.ClassDef)}
    assert set(classes) == set(objects), "a public class without an instance in this test"
    for name, node in classes.items():
        cls = getattr(pipewright, name)
        assert inspect.isclass(cls), f"{name} is a class in the stub only"
        declared = {m for m in class_members(node) if is_public(m)}
        missing = runtime_public_members(cls) - declared
        assert not missing, f"{name}: not in the stub: {sorted(missing)}"
        for member in declared:
            assert member in dir(objects[name]), f"{name}.{member} is in the stub only"


def test_stub_signatures_are_the_runtime_signatures():
    checked = 0
    for name, node in module_level(stub_tree()).items():
        if isinstance(node, ast.FunctionDef):
            function = python_function(getattr(pipewright, name))
            assert function, f"{name} is a function in the stub only"
            assert stub_parameters(node) == runtime_parameters(function), name
            checked += 1
        elif isinstance(node, ast.ClassDef):
            cls = getattr(pipewright, name)
            for member, item in class_members(node).items():
                if not isinstance(item, ast.FunctionDef):
                    continue
                owner = next((c for c in own_classes(cls) if member in vars(c)), None)
                function = python_function(vars(owner)[member]) if owner else None
                if function is None:  # a property, or inherited from Python itself
                    continue
                assert stub_parameters(item) == runtime_parameters(function), \
                    f"{name}.{member}"
                checked += 1
    assert checked >= 30, f"only {checked} signatures compared"
