# %% [markdown]
# # How much of a score is the agent, and how much is the dice?
#
# Run the same agent on the same tasks twice and pass^1 moves. `stats.consistency` measures that run-to-run noise
# from the trials a results file already has (n ≥ 2 per task), per agent × domain:
#
# - **per-trial pass^1** — the score each trial index alone would have given, and their spread;
# - **flip rate** — the share of tasks that neither always pass nor always fail (the *flaky tasks*);
# - **ICC(1)** — the share of success variance that lies *between* tasks (one-way ANOVA, F interval), and its
#   model twin, the beta-binomial over-dispersion **ρ** (maximum marginal likelihood);
# - **SD of a single run** — how far one run's pass^1 strays from the fixed-task mean, estimated without bias as
#   √(Σ_t c_t(n_t − c_t)/(n_t(n_t − 1)))/T, and the same for an m-trial average (÷√m);
# - **the noise floor (MDD)** — the smallest gap between two runs of the *same* setup that is significant at α = 0.05,
#   from the exact null distribution of the difference (mid-p on the lattice of 1/T steps);
# - for several agents in a domain, the **signal-to-noise ratio** of the ranking and the **trials per task** that
#   would resolve every adjacent pair.

# %%
%matplotlib inline
from pathlib import Path

import numpy as np
import polars as pl

import tauk
from tauk import plot, stats

pl.Config.set_tbl_width_chars(140)
pl.Config.set_tbl_rows(20)
SAMPLE = Path("../data")        # the bundled synthetic sample (3 agents x airline, retail; 25 tasks x 4 trials)
SHARED = Path("../../shared/data")  # real τ²-bench / τ-bench logs, when present beside the project
TAUBENCH = SHARED / "taubench" / "gpt-4o_airline_4trials.json"

# %% [markdown]
# ## τ-bench gpt-4o on airline: 50 tasks × 4 trials
#
# The run behind the τ-bench paper's airline figures. Its pass^1 is 0.42 — but how far would a re-run land?

# %%
# (not output-checked: without ../shared it prints the skip line; tests/stats/noise/test_consistency.py checks pass^1,
# flip rate, ICC and the single-run SD on the real file)
if TAUBENCH.exists():
    gpt = stats.consistency(tauk.load(TAUBENCH))
    r = gpt.records()[0]
    print(f"pass^1 {r['pass1']:.3f}; per trial {r['pass1_per_trial']} (spread {r['pass1_spread']:.2f})")
    print(f"flaky tasks: {r['n_flaky']} of {r['n_tasks']} (flip rate {r['flip_rate']:.2f})")
    print(f"ICC(1) {r['icc']:.3f} [{r['icc_low']:.3f}, {r['icc_high']:.3f}]; beta-binomial rho {r['bb_rho']:.3f}")
    print(f"SD of one run's pass^1 on these tasks: {r['sd_single_run']:.4f}")
    print(f"noise floor, two single runs: {r['mdd_single_runs']:.2f} "
          f"({round(r['mdd_single_runs'] * r['n_tasks'])} of {r['n_tasks']} tasks; "
          f"a gap that large between identical setups: {r['mdd_single_runs_size']:.3f})")
    for m in (2, 4, 8):
        print(f"noise floor, two {m}-trial averages: {r[f'mdd_m{m}']:.3f}")
else:
    gpt = None
    print("shared data not found: skipped")

# %% [markdown]
# Two single runs of this very agent would have to differ by 16 points — 8 of the 50 tasks — before the gap means
# anything. About 40 % of the success variance is between tasks (ICC and ρ agree); the rest is the dice. The four
# trials scatter well inside the band where one run lands 95 % of the time:

# %%
if gpt is not None:
    display(plot.noise_floor(gpt))

# %% [markdown]
# Which tasks are the dice? The flaky ones, most undecided (2 of 4) first:

# %%
if gpt is not None:
    display(plot.flaky_tasks(gpt, only_flaky=True))

# %% [markdown]
# ## Three agents, two domains: the bundled sample

# %%
res = tauk.load(SAMPLE)
cons = stats.consistency(res)

# %%
# NBVAL_CHECK_OUTPUT
print(cons.summary())

# %% [markdown]
# The ranking within each domain: the gap to the next agent and the trials per task (for every agent) at which that
# gap would clear the noise floor of two such runs. Signal/noise above 1 means the agents differ by more than one
# run's noise.

# %%
# NBVAL_CHECK_OUTPUT
print(cons.ranking.select("domain", "agent", "rank", "pass1", "gap_to_next", "trials_to_resolve_next"))
print(cons.rankings)

# %%
plot.noise_floor(cons)

# %%
plot.flaky_tasks(cons, group=("atlas-small", "airline"))

# %% [markdown]
# The most undecided tasks of every group, as a table (text, HTML or LaTeX like every tauk summary):

# %%
cons.flaky_summary(limit=3)

# %% [markdown]
# ## Is the noise floor honest?
#
# A synthetic benchmark with known success probabilities p_t (40 tasks, 4 trials each): the estimated single-run SD
# against the true √(Σ p_t(1 − p_t))/T, and how often two independent single runs of the same setup differ by at
# least the noise floor (it should be about α = 5 %; `benchmarks/calibrate_consistency.py` runs the full grid).

# %%
# NBVAL_CHECK_OUTPUT
rng = np.random.default_rng(7)
T, n = 40, 4
p = rng.beta(0.63, 0.87, T)
trials = pl.DataFrame({
    "run_id": "synthetic", "agent": "model", "domain": "toy",
    "task_id": [str(t) for t in range(T) for _ in range(n)],
    "trial": [j for _ in range(T) for j in range(n)],
    "reward": rng.binomial(1, np.repeat(p, n)).astype(float),
})
syn = stats.consistency(trials).records()[0]
print(f"sd_single_run {syn['sd_single_run']:.4f}  (true {np.sqrt(np.sum(p * (1 - p))) / T:.4f})")
runs = rng.binomial(1, p, size=(2, 20000, T)).sum(axis=2)  # 20,000 pairs of single re-runs
gap = np.abs(runs[0] - runs[1]) / T
print(f"noise floor {syn['mdd_single_runs']:.3f}: {np.mean(gap >= syn['mdd_single_runs'] - 1e-12):.3f} of identical pairs reach it")
