"""The Debian package python3-pipewright: built with CPack from this build tree
(component `python` only, a few seconds), its control fields, its files, and
the module imported from the unpacked package with nothing of the build tree
on the path. Needs dpkg-deb and dpkg-shlibdeps (dpkg-dev, scripts/setup-debian.sh);
tests/python/CMakeLists.txt passes the build tree, cpack and the version."""

import importlib.machinery
import json
import os
import pathlib
import re
import stat
import subprocess
import sys

import pytest

from conftest import ASSETS, cli_json

SOURCE_PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "pipewright"
DIST_PACKAGES = "usr/lib/python3/dist-packages"
EXAMPLE = ASSETS / "examples" / "resnet50-2gpu-pipelined.json"


def setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} must be set (ctest sets it)")
    return value


def run(*command, **options) -> str:
    done = subprocess.run(list(map(str, command)), capture_output=True, text=True, timeout=240,
                          **options)
    assert done.returncode == 0, f"{' '.join(map(str, command))}: {done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("packages")
    run(setting("PIPEWRIGHT_CPACK"), "--config",
        pathlib.Path(setting("PIPEWRIGHT_BUILD_DIR")) / "CPackConfig.cmake",
        "-G", "DEB", "-D", "CPACK_COMPONENTS_ALL=python", "-B", out)
    arch = run("dpkg", "--print-architecture").strip()
    path = out / f"python3-pipewright_{setting('PIPEWRIGHT_VERSION')}-1_{arch}.deb"
    assert path.is_file(), f"no {path.name} in {sorted(p.name for p in out.iterdir())}"
    return path


@pytest.fixture(scope="module")
def root(deb, tmp_path_factory) -> pathlib.Path:
    unpacked = tmp_path_factory.mktemp("root")
    run("dpkg-deb", "-x", deb, unpacked)
    return unpacked


def field(deb: pathlib.Path, name: str) -> str:
    return run("dpkg-deb", "--field", deb, name).strip()


def test_control_fields(deb):
    version = f"{setting('PIPEWRIGHT_VERSION')}-1"
    assert field(deb, "Package") == "python3-pipewright"
    assert field(deb, "Version") == version
    assert field(deb, "Section") == "python"
    assert field(deb, "Architecture") == run("dpkg", "--print-architecture").strip()
    depends = [d.strip() for d in field(deb, "Depends").split(",")]
    major, minor = sys.version_info[:2]
    # The command line that pipewright.run() starts, and the very Python the
    # extension was built for (its ABI tag).
    for expected in (f"pipewright (= {version})", f"python3 (>= {major}.{minor}~)",
                     f"python3 (<< {major}.{minor + 1})"):
        assert expected in depends, f"Depends lacks {expected}: {depends}"
    assert any(d.startswith("libstdc++6") for d in depends), depends
    assert not [d for d in depends if d.startswith(("libqt6", "libtorch", "libc10"))], depends
    assert "python3-matplotlib" in field(deb, "Suggests")


def test_maintainer_scripts_byte_compile_and_clean(deb, tmp_path):
    run("dpkg-deb", "-e", deb, tmp_path / "control")
    for script, command in (("postinst", "py3compile -p python3-pipewright"),
                            ("prerm", "py3clean -p python3-pipewright")):
        path = tmp_path / "control" / script
        assert path.stat().st_mode & stat.S_IXUSR, f"{script} is not executable"
        assert command in path.read_text()
        run("sh", "-n", path)


def test_files_are_the_package_in_dist_packages(root):
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if not p.is_dir()}
    extension = f"_core{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    expected = {f"{DIST_PACKAGES}/pipewright/{p.name}" for p in SOURCE_PACKAGE.iterdir()
                if p.is_file()} | {f"{DIST_PACKAGES}/pipewright/{extension}"}
    assert f"{DIST_PACKAGES}/pipewright/__init__.pyi" in expected
    assert files == expected, (f"missing: {sorted(expected - files)}; "
                               f"unexpected: {sorted(files - expected)}")
    core = root / DIST_PACKAGES / "pipewright" / extension
    assert ".debug_info" not in run("readelf", "--section-headers", core), "not stripped"
    needed = run("readelf", "--dynamic", core)
    assert "libQt" not in needed and "libtorch" not in needed and "libc10" not in needed


def test_unpacked_module_imports_and_simulates(root):
    """Only the unpacked package on the path: neither the build tree's
    package (ctest's PYTHONPATH) nor the build's extension can stand in."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = str(root / DIST_PACKAGES)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    script = (
        "import json, sys, pipewright\n"
        "result = pipewright.load(sys.argv[1]).simulate()\n"
        "print(json.dumps({'file': pipewright.__file__, 'version': pipewright.__version__,\n"
        "                  'core': pipewright._core.__file__, 'report': result.to_dict()}))\n")
    out = json.loads(run(sys.executable, "-c", script, EXAMPLE, env=env, cwd=root))
    package = root / DIST_PACKAGES / "pipewright"
    assert pathlib.Path(out["file"]).parent == package
    assert pathlib.Path(out["core"]).parent == package
    assert out["version"] == setting("PIPEWRIGHT_VERSION")
    assert out["report"] == cli_json("simulate", EXAMPLE, "--json")


def test_pyproject_builds_this_version_and_only_the_python_component():
    """`pip install .` is not run here (it needs PyPI); what pyproject.toml
    says to CMake is checked against the tree instead."""
    tomllib = pytest.importorskip("tomllib")
    root = SOURCE_PACKAGE.parents[1]
    settings = tomllib.loads((root / "pyproject.toml").read_text())
    build = settings["tool"]["scikit-build"]
    version = build["metadata"]["version"]
    assert version["input"] == "CMakeLists.txt"
    match = re.search(version["regex"], (root / version["input"]).read_text())
    assert match and match["value"] == setting("PIPEWRIGHT_VERSION")
    assert build["build"]["targets"] == ["pipewright_python"]
    assert build["install"]["components"] == ["python"]
    assert "COMPONENT python" in (root / "python" / "CMakeLists.txt").read_text()
    options = set(re.findall(r"option\((PIPEWRIGHT_\w+)", (root / "CMakeLists.txt").read_text()))
    defined = build["cmake"]["define"]
    assert set(defined) <= options, f"not options: {sorted(set(defined) - options)}"
    assert {k for k, v in defined.items() if v == "OFF"} >= {
        "PIPEWRIGHT_BUILD_GUI", "PIPEWRIGHT_BUILD_BACKEND", "PIPEWRIGHT_BUILD_TESTS"}
