"""Build and execute the example notebooks: ``python notebooks/build.py [NAME ...]``.

Each notebook is written from the cell lists below, executed in a fresh kernel with cwd = notebooks/ (so the bundled
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

SETUP = """\
%matplotlib inline
from pathlib import Path

import polars as pl

import tauk
from tauk import plot, stats, widgets

pl.Config.set_tbl_width_chars(140)
pl.Config.set_tbl_rows(30)
pl.Config.set_fmt_str_lengths(40)
SAMPLE = Path("../data")        # the bundled synthetic sample (3 agents x airline, retail; 25 tasks x 4 trials)
SHARED = Path("../../shared/data")  # real τ²-bench / τ-bench logs, when present beside the project"""

CHECK = "# NBVAL_CHECK_OUTPUT\n"


def md(text: str) -> tuple[str, str]:
    return ("markdown", text.strip("\n"))


def code(text: str) -> tuple[str, str]:
    return ("code", text.strip("\n"))


NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}

# ------------------------------------------------------------------------------------------------ 01 quickstart
NOTEBOOKS["01_quickstart"] = [
    md("""
# Quickstart: load trial logs, summarise, pass^k with intervals

**tauk** reads τ²-bench / τ-bench results files into tidy Polars frames and reports the upstream metrics
(avg reward, pass^k) with *task-level* uncertainty. This notebook runs on the bundled synthetic sample in
`../data` (three agents × airline/retail, 25 tasks × 4 trials) in a few seconds.
"""),
    code(SETUP),
    md("## Load\n`tauk.load` takes a file, a directory, a glob, a list or `{label: path}`; one run per results file."),
    code('res = tauk.load(SAMPLE)\nres'),
    code('res.trials.select("run_id", "task_id", "trial", "agent", "domain", "termination_reason", "reward", "agent_cost").head(5)'),
    md("""
## Summary: the upstream numbers, plus intervals

`stats.summarize` gives τ²-bench's own metrics per group (point estimates equal the upstream code's) and, with
`ci=0.95`, a BCa interval from resampling **tasks** (never trials within a task — that would bias pass^k upward).
A fixed `seed` makes the intervals reproducible.
"""),
    code(CHECK + """\
summary = stats.summarize(res, by=["agent", "domain"], ci=0.95, resamples=2000, seed=0)
print(summary)"""),
    md("""
## pass^k per agent

pass^k is the chance that **all k** independent trials of a task succeed, averaged over tasks (the unbiased
C(c, k) / C(n, k) per task). `se_tasks` answers "how would this move on new tasks from the same pool", `se_rerun`
"how would it move if we re-ran these same tasks" (defined when every task has ≥ 2k trials).
"""),
    code(CHECK + """\
pk = stats.pass_hat_k(res, by="agent", ci=0.95, resamples=2000, seed=0)
print(pk)"""),
    code("plot.pass_k_curve(pk)"),
    code("plot.domain_estimates(summary, k=1)"),
    md("""
## The frames are plain Polars

Everything above is built on frames you can query directly, e.g. the share of successful trials per way the
conversation ended:
"""),
    code(CHECK + """\
ended = (
    res.trials.group_by("agent", "termination_reason")
    .agg(pl.len().alias("trials"), pl.col("reward").is_between(1 - 1e-6, 1 + 1e-6).mean().round(3).alias("success_rate"))
    .sort("agent", "termination_reason")
)
print(ended)"""),
    md("""
Next: `02_explore_with_widgets` (interactive explorer), `03_compare_agents` (paired tests, Holm, power),
`04_paper_figures`, `05_failure_analysis`.
"""),
]

# ------------------------------------------------------------------------------------------------ 02 explorer
NOTEBOOKS["02_explore_with_widgets"] = [
    md("""
# Explore with widgets

`tauk.widgets.explorer(results)` picks agents, domains, k, the infrastructure-error convention and the evaluation
type (or a reward-basis override) and shows the pass^k table and a figure. The task bootstrap runs **once per
selection** (every k at once); moving the k slider only re-slices the cached summary and redraws.

Run this notebook in Jupyter to interact; on GitHub you see the static snapshots printed below each widget.
"""),
    code(SETUP + "\nfrom IPython.display import HTML, Image, display"),
    code("res = tauk.load(SAMPLE)\nex = widgets.explorer(res, resamples=2000, seed=0)\nex"),
    md("""
The widget is an object with its controls as attributes (`ex.agents`, `ex.domains`, `ex.k`, `ex.infra`,
`ex.evaluation`, `ex.reward_basis`, `ex.figure`) and its outputs (`ex.table`, `ex.status`, `ex.output`), so it
can be driven from code too. Moving k does not re-run the bootstrap:
"""),
    code(CHECK + """\
for k in (1, 2, 3, 4):
    ex.k.value = k
print("summaries computed:", ex.n_computed, "| figures drawn:", ex.n_drawn)
print(ex.summary)"""),
    md("A static snapshot of the widget's current table and figure (k = 4):"),
    code("display(HTML(ex.table.value))\ndisplay(Image(ex.figure_png))"),
    md("""
## Another evaluation

Re-score every simulation with `tauk.score` under another evaluation type or reward basis — here every task is
graded on DB × COMMUNICATE × ACTION, i.e. the gold actions must also be matched — and count infrastructure errors
as failures. Each new selection costs one bootstrap; going back to one seen before comes from the cache.
"""),
    code(CHECK + """\
with ex.hold():  # several controls at once: one computation on leaving the block
    ex.evaluation.value = "all"
    ex.reward_basis.value = "DB+COMMUNICATE+ACTION"
    ex.infra.value = "fail"
    ex.k.value = 1
print("summaries computed:", ex.n_computed)
print(ex.summary)"""),
    code("display(HTML(ex.status.value + ex.table.value))\ndisplay(Image(ex.figure_png))"),
    md("## The pass^k curve of one agent"),
    code("""\
with ex.hold():
    ex.evaluation.value = "recorded"
    ex.infra.value = "drop"
    ex.agents.value = ("atlas-large",)
    ex.figure.value = "pass_k_curve"
display(HTML(ex.table.value))
display(Image(ex.figure_png))"""),
    md("""
## Two agents side by side

`tauk.widgets.comparison(results)` pairs two agents on their shared tasks: the `tauk.stats.compare` table and the
forest plot.
"""),
    code('cw = widgets.comparison(res, a="atlas-large", b="atlas-small", resamples=2000, seed=0)\ncw'),
    code("display(HTML(cw.table.value))\ndisplay(Image(cw.figure_png))"),
]

# ------------------------------------------------------------------------------------------------ 03 compare
NOTEBOOKS["03_compare_agents"] = [
    md("""
# Is agent A really better than agent B?

Agents in τ²-bench run on the **same tasks**, so the right comparison is *paired by task*: per task the difference
of the per-task pass^k estimates, d_t = Û_k(A) − Û_k(B). tauk reports the mean difference with a paired task
bootstrap interval, an exact sign-flip permutation p-value (plus Wilcoxon and McNemar cross-checks), adjusts many
comparisons with Holm (or Benjamini–Hochberg) and answers *how many tasks would I need?*
"""),
    code(SETUP),
    code("res = tauk.load(SAMPLE)"),
    md("## One pair, per domain"),
    code(CHECK + """\
cmp = stats.compare(res, "atlas-large", "atlas-small", k=1, by="domain", resamples=2000, seed=0)
print(cmp)"""),
    md("The per-task differences behind it:"),
    code('cmp.tasks.filter(pl.col("d") != 0).head(8)'),
    md("""
## Every pair, Holm-adjusted, with rank intervals

Three agents on two domains make six comparisons; the p-values are adjusted over the whole family. The rank
intervals come from one bootstrap over the tasks every agent ran, applied to all agents at once.
"""),
    code(CHECK + """\
mc = stats.compare_all(res, k=1, by="domain", adjust="holm", resamples=2000, seed=0)
print(mc)"""),
    code("plot.forest(mc)"),
    md("pass^2 asks for consistency — both of two trials must succeed — and separates the agents differently:"),
    code(CHECK + """\
mc2 = stats.compare_all(res, k=2, adjust="holm", resamples=2000, seed=0)
print(mc2)"""),
    md("""
## How many tasks would I need?

`stats.power_analysis` turns a pilot (here the paired atlas-small vs baseline runs) into the number of tasks needed
to detect a pass^1 difference δ with 80 % power at α = 0.05 — and shows how more trials per task reduce it (only
the within-task part of the variance shrinks with more trials).
"""),
    code(CHECK + """\
pilot = stats.compare(res, "atlas-small", "baseline", k=1, resamples=2000, seed=0)
for delta in (0.05, 0.10, 0.20):
    pw = stats.power_analysis(pilot, delta=delta)
    print(f"delta = {delta:.2f}: {pw.tasks_needed} tasks at the pilot's trials per task")
print()
print(stats.power_analysis(pilot, delta=0.10))"""),
    md("""
Without a pilot, give the per-task variance of the difference directly, e.g. a guess of 0.15:
"""),
    code(CHECK + "print(stats.power_analysis(delta=0.10, var_d=0.15).tasks_needed)"),
    md("""
## Real logs: gpt-4.1 vs its fine-tune on the τ²-bench test split

When the shared τ²-bench logs are present beside the project (`../../shared/data`), the same paired comparison runs
on the published gpt-4.1 and fine-tuned gpt-4.1 runs (one trial per task, so McNemar applies too).
"""),
    code("""\
t2 = SHARED / "tau2"
pairs = {f"{agent}/{dom}": t2 / f"v0.1_{agent}_{dom}-test_1trial.json"
         for agent in ("gpt-4.1", "ft-gpt-4.1") for dom in ("airline", "retail", "telecom")}
if all(p.exists() for p in pairs.values()):
    real = tauk.load([str(p) for p in pairs.values()], agent={str(p): k.split("/")[0] for k, p in pairs.items()})
    print(stats.compare(real, "ft-gpt-4.1", "gpt-4.1", k=1, by="domain", resamples=2000, seed=0))
else:
    print("shared data not found: skipped")"""),
]

# ------------------------------------------------------------------------------------------------ 04 figures
NOTEBOOKS["04_paper_figures"] = [
    md("""
# Paper figures

Every figure of `tauk.plot` from the public API, written as PDF and PNG to `figures/` (git-ignored; regenerate at
will). Colours are fixed per agent across figures (`plot.agent_color`).
"""),
    code(SETUP),
    code("""\
OUT = Path("figures")
OUT.mkdir(exist_ok=True)
res = tauk.load(SAMPLE)
summary = stats.summarize(res, by=["agent", "domain"], ci=0.95, resamples=2000, seed=0)
written = []

def keep(fig, name):
    for ext in ("pdf", "png"):
        plot.save(fig, OUT / f"{name}.{ext}")
        written.append(f"{name}.{ext}")
    return fig"""),
    md("## pass^k against k, with task-bootstrap intervals"),
    code('keep(plot.pass_k_curve(summary), "pass_k_curve")'),
    md("## pass^1 by domain"),
    code('keep(plot.domain_estimates(summary, k=1), "domain_estimates_k1")'),
    md("## Paired comparisons (Holm-adjusted)"),
    code("""\
mc = stats.compare_all(res, k=1, by="domain", resamples=2000, seed=0)
keep(plot.forest(mc), "forest")"""),
    md("## Which tasks each agent solves, trial by trial"),
    code('keep(plot.success_heatmap(res.trials), "success_heatmap")'),
    md("## Why trials fail, and how they end"),
    code('scored = tauk.score(res)\nkeep(plot.failure_breakdown(scored), "failure_breakdown")'),
    code('keep(plot.termination_reasons(res.trials), "termination_reasons")'),
    md("## Cost against pass^1"),
    code('keep(plot.cost_vs_pass(summary), "cost_vs_pass")'),
    md("Files written (the sample's figures):"),
    code(CHECK + "print(\"\\n\".join(written))"),
    md("""
## The published leaderboard beside recomputed numbers

With the shared data present, the published pass^1 of the τ²-bench leaderboard submissions (grey) next to pass^1
recomputed here, with its task-bootstrap interval, from the public gpt-4.1 runs on the test split (a subset of the
tasks the leaderboard used, hence the wide intervals).
"""),
    code("""\
board = SHARED / "leaderboard"
runs = [SHARED / "tau2" / f"v0.1_gpt-4.1_{d}-test_1trial.json" for d in ("airline", "retail", "telecom")]
if board.exists() and all(p.exists() for p in runs):
    real = tauk.load([str(p) for p in runs])
    recomputed = stats.summarize(real, by=["agent", "domain"], ci=0.95, resamples=2000, seed=0)
    fig = plot.leaderboard(board, recomputed=recomputed, top=10)
    for ext in ("pdf", "png"):
        plot.save(fig, OUT / f"leaderboard.{ext}")
else:
    fig = None
    print("shared data not found: skipped")
fig"""),
]

# ------------------------------------------------------------------------------------------------ 05 failures
NOTEBOOKS["05_failure_analysis"] = [
    md("""
# Failure analysis

Why did the trials fail? `tauk.score` recomputes the τ²-bench reward as columns (termination gate, DB,
ENV_ASSERTION, NL_ASSERTION, ACTION, COMMUNICATE) and names the failing components in a `failure` column;
`tauk.audit` checks the recomputation against what the files recorded; the trajectory viewer shows a conversation
with the reason it failed highlighted. Real failures come from the shared τ²-bench logs when present, else from the
bundled sample.
"""),
    code(SETUP + "\nfrom IPython.display import HTML, display"),
    md("## Audit: does the recomputed reward agree with the recorded one?"),
    code(CHECK + "res = tauk.load(SAMPLE)\naudit = tauk.audit(res)\nprint(audit)"),
    md("## Failure attribution"),
    code(CHECK + """\
scored = tauk.score(res)
print(scored.tauk.failure_counts(by="agent"))"""),
    code("plot.failure_breakdown(scored)"),
    md("""
Component by component: the share of simulations (that reached the reward) passing each check, per agent. A null
component is one the task's basis does not use or the record does not have.
"""),
    code(CHECK + """\
components = (
    scored.filter(pl.col("gate") == 1)
    .group_by("agent")
    .agg(pl.len().alias("n"), *[pl.col(c).mean().round(3) for c in ("db", "communicate", "action")])
    .sort("agent")
)
print(components)"""),
    code("plot.termination_reasons(res.trials)"),
    md("""
## Real failures in the trajectory viewer

Pick run, task and trial; the box at the top says why the simulation failed: a premature ending
(`termination_reason`), a communicate string the agent never said, a gold action it never matched, or the
component that was zero. All text from the logs is HTML-escaped.
"""),
    code("""\
real_files = {
    "gpt-4.1": SHARED / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json",
    "ft-gpt-4.1": SHARED / "tau2" / "v0.1_ft-gpt-4.1_airline-test_1trial.json",
    "qwen2.5-7b": SHARED / "tau2" / "v0.1_qwen2.5-7b_airline_1trial_premature-endings.json",
}
if all(p.exists() for p in real_files.values()):
    logs = tauk.load({k: str(v) for k, v in real_files.items()})
    print("real τ²-bench logs:", ", ".join(real_files))
else:
    logs = res
    print("shared data not found: using the bundled sample")
logs_scored = tauk.score(logs)
print(logs_scored.tauk.failure_counts(by="agent"))"""),
    code("viewer = widgets.trajectory_viewer(logs, logs_scored, failures_only=True)\nviewer"),
    md("A premature ending:"),
    code("""\
premature = logs_scored.filter(pl.col("failure").str.starts_with("premature:")).sort("run_id", "simulation_id")
if premature.height:
    row = premature.row(0, named=True)
    viewer.show(row["run_id"], row["simulation_id"])
    display(HTML(viewer.html.value))"""),
    md("A simulation that failed on a component (DB, COMMUNICATE, ACTION …) although it ended normally:"),
    code("""\
component = logs_scored.filter((pl.col("gate") == 1) & pl.col("failure").is_not_null()).sort("run_id", "simulation_id")
if component.height:
    row = component.row(0, named=True)
    viewer.show(row["run_id"], row["simulation_id"])
    display(HTML(viewer.html.value))"""),
    md("On the sample, a communicate string never said (from `tauk.scoring.communicate_checks`):"),
    code("""\
unsaid = tauk.scoring.communicate_checks(res).filter(~pl.col("met")).sort("run_id", "simulation_id")
print(len(unsaid), "communicate strings never said in the sample")
sample_viewer = widgets.trajectory_viewer(res, scored)
row = unsaid.row(0, named=True)
sample_viewer.show(row["run_id"], row["simulation_id"])
display(HTML(sample_viewer.html.value))"""),
]


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
