# %% [markdown]
# # Quickstart: load trial logs, summarise, pass^k with intervals
#
# **tauk** reads τ²-bench / τ-bench results files into tidy Polars frames and reports the upstream metrics
# (avg reward, pass^k) with *task-level* uncertainty. This notebook runs on the bundled synthetic sample in
# `../data` (three agents × airline/retail, 25 tasks × 4 trials) in a few seconds.

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

# %% [markdown]
# ## Load
# `tauk.load` takes a file, a directory, a glob, a list or `{label: path}`; one run per results file.

# %%
res = tauk.load(SAMPLE)
res

# %%
res.trials.select("run_id", "task_id", "trial", "agent", "domain", "termination_reason", "reward", "agent_cost").head(5)

# %% [markdown]
# ## Summary: the upstream numbers, plus intervals
#
# `stats.summarize` gives τ²-bench's own metrics per group (point estimates equal the upstream code's) and, with
# `ci=0.95`, an interval from the default method, `method="model"`: a beta-binomial model of the tasks (each task
# has its own success probability, drawn from a Beta), which stays calibrated at the 10–50 tasks benchmarks have,
# where a task bootstrap misses E[p^4] up to 22 % of the time. A posterior predictive check guards it: where the
# check fails the interval is joined with a BCa task interval, and the notes say so. `method="bca"` gives
# the task bootstrap (resampling **tasks**, never trials within a task — that would bias pass^k upward). A fixed
# `seed` makes every interval reproducible. Each run here has 4 trials per task — 4 passes over the benchmark — so a
# run effect shared by every task of a pass is tested too (Cochran's Q: `run_effect_p`, `run_var`); where its
# variance is estimated above 0 the intervals include it (`adjusted_for`; `run_effects="report"` leaves them as they
# were). `cluster=` makes them robust to task families.

# %%
# NBVAL_CHECK_OUTPUT
summary = stats.summarize(res, by=["agent", "domain"], ci=0.95, seed=0)
print(summary)

# %% [markdown]
# ## pass^k per agent
#
# pass^k is the chance that **all k** independent trials of a task succeed, averaged over tasks (the unbiased
# C(c, k) / C(n, k) per task). `se_tasks` and `ci_low`/`ci_high` answer "how would this move on new tasks from the
# same pool"; `se_rerun` and `rerun_low`/`rerun_high` "how would it move if we re-ran these same tasks" (the
# model's re-run interval is defined for every k; se_rerun when every task has ≥ 2k trials). The frame says what
# made each interval (`interval_method`) and what the model check said (`model_check_p`).
#
# Each agent ran two domains, which are different setups (a setup is the domain, mode, user model and reward
# bases), not repeated trials of one experiment: asked for `by="agent"`, tauk groups by `setup` too and says so in
# the notes. `pool_setups=True` pools them on purpose; `stats.overall(pk)` gives the leaderboard's mean of the
# per-setup figures.

# %%
# NBVAL_CHECK_OUTPUT
pk = stats.pass_hat_k(res, by="agent", ci=0.95, seed=0)
print(pk)

# %%
# NBVAL_CHECK_OUTPUT
print(pk.to_frame().select("agent", "k", "interval_method", "rerun_interval_method", "model_check_p").head(4))

# %% [markdown]
# One number per agent, the leaderboard's way (each setup counts once, weights 1/setups; its interval combines the
# per-setup intervals with those weights):

# %%
# NBVAL_CHECK_OUTPUT
print(stats.overall(pk))

# %%
plot.pass_k_curve(pk)

# %%
plot.domain_estimates(summary, k=1)

# %% [markdown]
# ## The frames are plain Polars
#
# Everything above is built on frames you can query directly, e.g. the share of successful trials per way the
# conversation ended:

# %%
# NBVAL_CHECK_OUTPUT
ended = (
    res.trials.group_by("agent", "termination_reason")
    .agg(pl.len().alias("trials"), pl.col("reward").is_between(1 - 1e-6, 1 + 1e-6).mean().round(3).alias("success_rate"))
    .sort("agent", "termination_reason")
)
print(ended)

# %% [markdown]
# Next: `02_explore_with_widgets` (interactive explorer), `03_compare_agents` (paired tests, Holm, power),
# `04_paper_figures`, `05_failure_analysis`.
