"""Build and execute the example notebooks: ``python notebooks/build.py [NAME ...]``.

Each notebook ``NN_name.ipynb`` is written from its source ``NN_name.py`` (the percent format of jupytext: plain
text to review and diff), executed in a fresh kernel with cwd = notebooks/ (so the bundled
sample is ``../data`` and the shared logs ``../../shared/data``), and saved WITH its outputs. Cells whose first line
is ``# NBVAL_CHECK_OUTPUT`` are compared by ``pytest --nbval-lax``; they print only seeded, deterministic numbers.
Cell ids are fixed and execution timing is not recorded, so a rebuild changes only what really changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

CELL = re.compile(r"^# %%(?P<kind> \[markdown\])?[ \t]*$", re.M)


def read_source(path: Path) -> list[tuple[str, str]]:
    """The cells of a notebook source in the percent format: ``# %%`` starts a code cell, ``# %% [markdown]`` a
    Markdown cell whose lines are commented (``# text``, a bare ``#`` for an empty line)."""
    text = path.read_text(encoding="utf-8")
    heads = list(CELL.finditer(text))
    if not heads or text[: heads[0].start()].strip():
        raise ValueError(f"{path}: a notebook source starts with a '# %%' cell marker")
    cells = []
    for i, m in enumerate(heads):
        body = text[m.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)].strip("\n")
        if m.group("kind"):
            lines = [line[2:] if line.startswith("# ") else line.removeprefix("#") for line in body.split("\n")]
            cells.append(("markdown", "\n".join(lines)))
        else:
            cells.append(("code", body))
    return cells


NOTEBOOKS: dict[str, list[tuple[str, str]]] = {
    p.stem: read_source(p) for p in sorted(HERE.glob("[0-9][0-9]_*.py"))
}
"""Every notebook's cells, read from its source ``NN_name.py`` beside it (the reviewable text)."""


def build_notebook(name: str, cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, (kind, src) in enumerate(cells):
        cell = nbformat.v4.new_markdown_cell(src) if kind == "markdown" else nbformat.v4.new_code_cell(src)
        cell["id"] = f"{name[:2]}-{i:02d}"
        nb.cells.append(cell)
    return nb


def execute(nb: nbformat.NotebookNode, timeout: int = 120) -> None:
    env_backend = os.environ.pop("MPLBACKEND", None)  # the notebooks use the inline backend
    try:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                                resources={"metadata": {"path": str(HERE)}})  # fmt: skip
        client.execute()
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)


_ID = re.compile(r"[0-9a-f]{32}")


def stable_widget_ids(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """Replace the random widget model ids by ids numbered in a deterministic order, so that rebuilding an unchanged
    notebook gives the same bytes: the displayed widgets first (in output order), then the widgets never displayed
    (ordered by their content), each followed breadth first by the models it references."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    if not state:
        return nb
    refs = {k: [r for r in re.findall(r"IPY_MODEL_([0-9a-f]{32})", json.dumps(v, sort_keys=True)) if r in state]
            for k, v in state.items()}  # fmt: skip
    canon: dict[str, str] = {}

    def canonical(k: str, depth: int = 0) -> str:  # the model's content with references replaced by theirs
        if k not in canon:
            text = json.dumps(state[k], sort_keys=True)
            if depth < 50:
                text = re.sub(r"IPY_MODEL_([0-9a-f]{32})",
                              lambda m: canonical(m.group(1), depth + 1) if m.group(1) in state else "?", text)
            canon[k] = text
        return canon[k]

    roots: list[str] = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            if view and view.get("model_id") in state and view["model_id"] not in roots:
                roots.append(view["model_id"])
    referenced = {r for rs in refs.values() for r in rs}
    roots += sorted((k for k in state if k not in referenced and k not in roots), key=canonical)
    order: list[str] = []
    for root in roots + sorted(state, key=canonical):
        queue = [root]
        while queue:
            k = queue.pop(0)
            if k not in order:
                order.append(k)
                queue += refs[k]
    prefix = hashlib.sha256(name.encode()).hexdigest()[:20]
    mapping = {old: f"{prefix}{n:012x}" for n, old in enumerate(order)}
    text = _ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), nbformat.writes(nb))
    return nbformat.reads(text, as_version=4)


def merge_streams(nb: nbformat.NotebookNode) -> None:
    """Join consecutive stream outputs of the same name (how a print is split into messages varies)."""
    for cell in nb.cells:
        merged: list = []
        for out in cell.get("outputs", []):
            if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == out.name):  # fmt: skip
                merged[-1].text += out.text
            else:
                merged.append(out)
        if "outputs" in cell:
            cell.outputs = merged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="notebooks to build (default: all), e.g. 01_quickstart")
    ap.add_argument("--no-execute", action="store_true", help="write the notebooks without running them")
    args = ap.parse_args(argv)
    names = args.names or list(NOTEBOOKS)
    unknown = [n for n in names if n not in NOTEBOOKS]
    if unknown:
        ap.error(f"unknown notebook(s) {unknown}; have {list(NOTEBOOKS)}")
    for name in names:
        t0 = time.perf_counter()
        nb = build_notebook(name, NOTEBOOKS[name])
        if not args.no_execute:
            execute(nb)
            merge_streams(nb)
            nb = stable_widget_ids(nb, name)
        nbformat.validate(nb)
        path = HERE / f"{name}.ipynb"
        nbformat.write(nb, path)
        print(f"{path.name}: {len(nb.cells)} cells, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
