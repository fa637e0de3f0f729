"""Shared helpers of the Python module's tests: the built `pipewright` program
(PIPEWRIGHT_CLI, set by tests/python/CMakeLists.txt) to compare with, and
the shipped examples."""

import json
import os
import pathlib
import subprocess

import pytest

ASSETS = pathlib.Path(os.environ.get("PIPEWRIGHT_ASSETS_DIR",
                                     pathlib.Path(__file__).resolve().parents[2] / "assets"))
EXAMPLES = sorted((ASSETS / "examples").glob("*.json"))


def cli_path() -> str:
    path = os.environ.get("PIPEWRIGHT_CLI")
    if not path or not os.path.exists(path):
        pytest.fail("PIPEWRIGHT_CLI must name the built pipewright program (ctest sets it)")
    return path


def cli(*arguments, check=True):
    """(exit code, stdout, stderr) of the pipewright program."""
    done = subprocess.run([cli_path(), *map(str, arguments)], capture_output=True, text=True,
                          timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"pipewright {' '.join(map(str, arguments))} exited "
                             f"{done.returncode}: {done.stderr}")
    return done.returncode, done.stdout, done.stderr


def cli_json(*arguments, check=True):
    _, out, _ = cli(*arguments, check=check)
    return json.loads(out)


@pytest.fixture(params=EXAMPLES, ids=[p.stem for p in EXAMPLES])
def example(request) -> pathlib.Path:
    return request.param
