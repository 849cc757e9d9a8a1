# %% [markdown]
# # Paper figures
#
# Every figure of `tauk.plot` from the public API, written as PDF and PNG to `figures/` (git-ignored; regenerate at
# will). Colours are fixed per agent across figures (`plot.agent_color`).

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

# %%
OUT = Path("figures")
OUT.mkdir(exist_ok=True)
res = tauk.load(SAMPLE)
summary = stats.summarize(res, by=["agent", "domain"], ci=0.95, seed=0)
written = []

def keep(fig, name):
    for ext in ("pdf", "png"):
        plot.save(fig, OUT / f"{name}.{ext}")
        written.append(f"{name}.{ext}")
    return fig

# %% [markdown]
# ## pass^k against k, with intervals (the beta-binomial model, tauk's default; the caption says so)

# %%
keep(plot.pass_k_curve(summary), "pass_k_curve")

# %% [markdown]
# ## pass^1 by domain

# %%
keep(plot.domain_estimates(summary, k=1), "domain_estimates_k1")

# %% [markdown]
# ## Paired comparisons (Holm-adjusted)

# %%
mc = stats.compare_all(res, k=1, by="domain", seed=0)
keep(plot.forest(mc), "forest")

# %% [markdown]
# ## Which tasks each agent solves, trial by trial

# %%
keep(plot.success_heatmap(res.trials), "success_heatmap")

# %% [markdown]
# ## Why trials fail, and how they end

# %%
scored = tauk.score(res)
keep(plot.failure_breakdown(scored), "failure_breakdown")

# %%
keep(plot.termination_reasons(res.trials), "termination_reasons")

# %% [markdown]
# ## Cost against pass^1

# %%
keep(plot.cost_vs_pass(summary), "cost_vs_pass")

# %% [markdown]
# Files written (the sample's figures):

# %%
# NBVAL_CHECK_OUTPUT
print("\n".join(written))

# %% [markdown]
# ## The published leaderboard beside recomputed numbers
#
# With the shared data present, the published pass^1 of the τ²-bench leaderboard submissions (grey) next to pass^1
# recomputed here, with its interval (one trial per task: Clopper–Pearson), from the public gpt-4.1 runs on the test split (a subset of the
# tasks the leaderboard used, hence the wide intervals).

# %%
board = SHARED / "leaderboard"
runs = [SHARED / "tau2" / f"v0.1_gpt-4.1_{d}-test_1trial.json" for d in ("airline", "retail", "telecom")]
if board.exists() and all(p.exists() for p in runs):
    real = tauk.load([str(p) for p in runs])
    recomputed = stats.summarize(real, by=["agent", "domain"], ci=0.95, seed=0)
    fig = plot.leaderboard(board, recomputed=recomputed, top=10)
    for ext in ("pdf", "png"):
        plot.save(fig, OUT / f"leaderboard.{ext}")
else:
    fig = None
    print("shared data not found: skipped")
fig
