# %% [markdown]
# # Failure analysis
#
# Why did the trials fail? `tauk.score` recomputes the τ²-bench reward as columns (termination gate, DB,
# ENV_ASSERTION, NL_ASSERTION, ACTION, COMMUNICATE) and names the failing components in a `failure` column;
# `tauk.audit` checks the recomputation against what the files recorded; the trajectory viewer shows a conversation
# with the reason it failed highlighted. Real failures come from the shared τ²-bench logs when present, else from the
# bundled sample.

# %%
%matplotlib inline
from pathlib import Path

import polars as pl

import tauk
from tauk import plot, stats, widgets

pl.Config.set_tbl_width_chars(140)
pl.Config.set_tbl_rows(30)
pl.Config.set_fmt_str_lengths(40)
SAMPLE = Path("../data")        # the bundled synthetic sample (3 agents x airline, retail; 25 tasks x 4 trials)
SHARED = Path("../../shared/data")  # real τ²-bench / τ-bench logs, when present beside the project
from IPython.display import HTML, display

# %% [markdown]
# ## Audit: does the recomputed reward agree with the recorded one?

# %%
# NBVAL_CHECK_OUTPUT
res = tauk.load(SAMPLE)
audit = tauk.audit(res)
print(audit)

# %% [markdown]
# ## Failure attribution

# %%
# NBVAL_CHECK_OUTPUT
scored = tauk.score(res)
print(scored.tauk.failure_counts(by="agent"))

# %%
plot.failure_breakdown(scored)

# %% [markdown]
# Component by component: the share of simulations (that reached the reward) passing each check, per agent. A null
# component is one the task's basis does not use or the record does not have.

# %%
# NBVAL_CHECK_OUTPUT
components = (
    scored.filter(pl.col("gate") == 1)
    .group_by("agent")
    .agg(pl.len().alias("n"), *[pl.col(c).mean().round(3) for c in ("db", "communicate", "action")])
    .sort("agent")
)
print(components)

# %%
plot.termination_reasons(res.trials)

# %% [markdown]
# ## Real failures in the trajectory viewer
#
# Pick run, task and trial; the box at the top says why the simulation failed: a premature ending
# (`termination_reason`), a communicate string the agent never said, a gold action it never matched, or the
# component that was zero. All text from the logs is HTML-escaped.

# %%
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
print(logs_scored.tauk.failure_counts(by="agent"))

# %%
viewer = widgets.trajectory_viewer(logs, logs_scored, failures_only=True)
viewer

# %% [markdown]
# A premature ending:

# %%
premature = logs_scored.filter(pl.col("failure").str.starts_with("premature:")).sort("run_id", "simulation_id")
if premature.height:
    row = premature.row(0, named=True)
    viewer.show(row["run_id"], row["simulation_id"])
    display(HTML(viewer.html.value))

# %% [markdown]
# A simulation that failed on a component (DB, COMMUNICATE, ACTION …) although it ended normally:

# %%
component = logs_scored.filter((pl.col("gate") == 1) & pl.col("failure").is_not_null()).sort("run_id", "simulation_id")
if component.height:
    row = component.row(0, named=True)
    viewer.show(row["run_id"], row["simulation_id"])
    display(HTML(viewer.html.value))

# %% [markdown]
# On the sample, a communicate string never said (from `tauk.scoring.communicate_checks`):

# %%
unsaid = tauk.scoring.communicate_checks(res).filter(~pl.col("met")).sort("run_id", "simulation_id")
print(len(unsaid), "communicate strings never said in the sample")
sample_viewer = widgets.trajectory_viewer(res, scored)
row = unsaid.row(0, named=True)
sample_viewer.show(row["run_id"], row["simulation_id"])
display(HTML(sample_viewer.html.value))
