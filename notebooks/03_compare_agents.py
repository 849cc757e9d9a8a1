# %% [markdown]
# # Is agent A really better than agent B?
#
# Agents in τ²-bench run on the **same tasks**, so the right comparison is *paired by task*: per task the difference
# of the per-task pass^k estimates, d_t = Û_k(A) − Û_k(B). tauk reports the mean difference with a **score test**
# and its own interval, so the interval excludes 0 exactly when p < 0.05: Tango's score interval with the exact
# unconditional p-value where every d_t is −1, 0 or 1 (type-I ≤ 5 % at every rate of differing tasks), the paired t
# (widened towards a skewed tail) where d_t is not and at least 5 tasks differ. Unlike the paired t interval alone it covers a true difference away
# from 0 when few tasks differ, and it is never [0, 0]. The paired t (`t_low`, `t_high`, `p_t`), the exact sign-flip
# p (`p_signflip`, = exact McNemar with one trial per task), Wilcoxon and McNemar are cross-checks; `test="t"` makes
# the paired t the headline, `method="bca"` gives the paired task-bootstrap interval instead. tauk adjusts many
# comparisons with Holm (or Benjamini–Hochberg) and answers *how many tasks would I need?*

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
res = tauk.load(SAMPLE)

# %% [markdown]
# ## One pair, per domain

# %%
# NBVAL_CHECK_OUTPUT
cmp = stats.compare(res, "atlas-large", "atlas-small", k=1, by="domain", seed=0)
print(cmp)

# %% [markdown]
# The per-task differences behind it:

# %%
cmp.tasks.filter(pl.col("d") != 0).head(8)

# %% [markdown]
# ## Every pair, Holm-adjusted, with rank intervals
#
# Three agents on two domains make six comparisons; the p-values are adjusted over the whole family. The rank
# intervals invert the same paired tests on the tasks every agent ran: `[lo, hi]` covers each agent's rank with
# probability ≥ 95 %, `{lo, hi}` (`rank_low_simultaneous`, `rank_high_simultaneous`) all agents' ranks at once.

# %%
# NBVAL_CHECK_OUTPUT
mc = stats.compare_all(res, k=1, by="domain", adjust="holm", seed=0)
print(mc)

# %%
plot.forest(mc)

# %% [markdown]
# pass^2 asks for consistency — both of two trials must succeed — and separates the agents differently (each
# pair is compared within a setup, here a domain: trials of different setups are never pooled silently):

# %%
# NBVAL_CHECK_OUTPUT
mc2 = stats.compare_all(res, k=2, adjust="holm", seed=0)
print(mc2)

# %% [markdown]
# ## How many tasks would I need?
#
# `stats.power_analysis` turns a pilot (here the paired atlas-small vs baseline runs) into the number of tasks needed
# to detect a pass^1 difference δ with 80 % power at α = 0.05 for the paired t test (noncentral
# t) — and shows how more trials per task reduce it (only the within-task part of the variance shrinks with more
# trials). A pilot of one agent works too: the two future agents are assumed to share its task difficulty
# (`disagreement=` states how much they differ task by task).

# %%
# NBVAL_CHECK_OUTPUT
pilot = stats.compare(res, "atlas-small", "baseline", k=1, seed=0)
for delta in (0.05, 0.10, 0.20):
    pw = stats.power_analysis(pilot, delta=delta)
    print(f"delta = {delta:.2f}: {pw.tasks_needed} tasks at the pilot's trials per task")
print()
print(stats.power_analysis(pilot, delta=0.10))
print(stats.power_analysis(res.filter(agent="baseline"), delta=0.10, trials_per_task=[1, 4]).to_frame())

# %% [markdown]
# Without a pilot, give the per-task variance of the difference directly, e.g. a guess of 0.15:

# %%
# NBVAL_CHECK_OUTPUT
print(stats.power_analysis(delta=0.10, var_d=0.15).tasks_needed)

# %% [markdown]
# ## Real logs: gpt-4.1 vs its fine-tune on the τ²-bench test split
#
# When the shared τ²-bench logs are present beside the project (`../../shared/data`), the same paired comparison runs
# on the published gpt-4.1 and fine-tuned gpt-4.1 runs (one trial per task, so McNemar applies too).

# %%
t2 = SHARED / "tau2"
pairs = {f"{agent}/{dom}": t2 / f"v0.1_{agent}_{dom}-test_1trial.json"
         for agent in ("gpt-4.1", "ft-gpt-4.1") for dom in ("airline", "retail", "telecom")}
if all(p.exists() for p in pairs.values()):
    real = tauk.load([str(p) for p in pairs.values()], agent={str(p): k.split("/")[0] for k, p in pairs.items()})
    print(stats.compare(real, "ft-gpt-4.1", "gpt-4.1", k=1, by="domain", seed=0))
else:
    print("shared data not found: skipped")
