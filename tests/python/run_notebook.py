#!/usr/bin/env python3
"""Runs a notebook's code cells in order, in one namespace, as Jupyter's
Python kernel would, and writes the notebook with their outputs.

    run_notebook.py NOTEBOOK.ipynb OUTPUT.ipynb

A stand-in for `jupyter nbconvert --to notebook --execute`, which needs
Jupyter's ~50 Debian packages: cells run in the notebook's own folder, with
matplotlib's Agg backend; printed text becomes a stream output, a cell's last
expression an execute_result (text/plain and, when it has _repr_html_,
text/html), and every figure a cell leaves open an image/png display_data.
The first cell that raises stops the run with that cell's number and source.
Cells must be plain Python: no %magics or !shell lines.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import json
import os
import pathlib
import sys
import traceback


class CellError(Exception):
    pass


def split_lines(text: str) -> list[str]:
    """Notebook JSON stores multi-line strings as lists of lines."""
    return text.splitlines(keepends=True)


def figure_outputs() -> list[dict]:
    if "matplotlib.pyplot" not in sys.modules:
        return []
    import matplotlib.pyplot as plt
    outputs = []
    for number in plt.get_fignums():
        figure = plt.figure(number)
        png = io.BytesIO()
        figure.savefig(png, format="png", bbox_inches="tight")
        width, height = (int(v) for v in figure.get_size_inches() * figure.dpi)
        outputs.append({
            "output_type": "display_data",
            "data": {"image/png": base64.b64encode(png.getvalue()).decode("ascii"),
                     "text/plain": [f"<Figure size {width}x{height} with "
                                    f"{len(figure.axes)} Axes>"]},
            "metadata": {},
        })
    plt.close("all")
    return outputs


def result_output(value, count: int) -> dict:
    data = {"text/plain": split_lines(repr(value))}
    html = getattr(value, "_repr_html_", None)
    if callable(html):
        data["text/html"] = split_lines(html())
    return {"output_type": "execute_result", "execution_count": count, "data": data,
            "metadata": {}}


def run_cell(source: str, namespace: dict, count: int) -> list[dict]:
    name = f"<cell {count}>"
    tree = ast.parse(source, filename=name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    printed = io.StringIO()
    value = None
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(tree, name, "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
    except Exception as error:
        raise CellError(f"code cell {count} raised {type(error).__name__}: {error}\n"
                        f"--- cell {count} ---\n{source}\n--- traceback ---\n"
                        f"{traceback.format_exc()}") from error
    outputs = []
    if printed.getvalue():
        outputs.append({"output_type": "stream", "name": "stdout",
                        "text": split_lines(printed.getvalue())})
    # As IPython: a last expression that is None, or ends with ";", shows nothing.
    if value is not None and not source.rstrip().endswith(";"):
        outputs.append(result_output(value, count))
    return outputs + figure_outputs()


def execute(notebook: dict, folder: pathlib.Path) -> dict:
    """The notebook with every code cell run; raises CellError."""
    if notebook.get("nbformat") != 4:
        raise ValueError("not a version 4 notebook")
    os.environ.setdefault("MPLBACKEND", "Agg")
    executed = json.loads(json.dumps(notebook))
    namespace = {"__name__": "__main__"}
    count = 0
    before = os.getcwd()
    os.chdir(folder)
    try:
        for cell in executed["cells"]:
            if cell["cell_type"] != "code":
                continue
            count += 1
            source = "".join(cell["source"])
            cell["outputs"] = run_cell(source, namespace, count)
            cell["execution_count"] = count
    finally:
        os.chdir(before)
    return executed


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, output = pathlib.Path(argv[1]).resolve(), pathlib.Path(argv[2])
    notebook = json.loads(source.read_text())
    try:
        executed = execute(notebook, source.parent)
    except CellError as error:
        print(f"{source.name}: {error}", file=sys.stderr)
        return 1
    output.write_text(json.dumps(executed, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
