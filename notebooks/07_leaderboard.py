# %% [markdown]
# # The leaderboard with honest uncertainty
#
# The τ²-bench leaderboard shows points: pass^1 … pass^4 per domain, one run per submission, no interval, no noise
# floor, no word on which convention produced a row. Most rows have no public trajectories. But a row that
# publishes pass^1 … pass^n over T tasks with n trials each determines the whole per-task success histogram:
# pass^k = Σ_c h_c·C(c, k)/C(n, k) / T for k = 1 … n and Σ_c h_c = T is a triangular system. `tauk.leaderboard`
# recovers each histogram exactly within the row's rounding (or flags the row with its residual in points), and then
# every tauk statistic applies:
#
# - **per row** — pass^k with the default calibrated interval and the re-run interval, the noise floor;
# - **per domain** — rank intervals, the rows that could be first, tie groups, adjacent pairs (unpaired and
#   conservative from the histograms; paired where trajectories exist);
# - **voice rows** — the interaction metrics read with their counts, each rate with an exact interval;
# - **verification** of a submission against its own trajectories, under both infrastructure conventions.

# %%
%matplotlib inline
import json
import shutil
import tempfile
from pathlib import Path

import polars as pl

import tauk
from tauk import leaderboard as lb
from tauk import plot

pl.Config.set_tbl_width_chars(140)
pl.Config.set_tbl_rows(20)
SAMPLE = Path("../data")            # the bundled synthetic sample (3 agents x airline, retail; 25 tasks x 4 trials)
SHARED = Path("../../shared/data")  # real τ²-bench / τ-bench logs and the leaderboard, when present beside the project
BOARD = SHARED / "leaderboard"

# %% [markdown]
# ## One row: τ-bench gpt-4o on airline
#
# The τ-bench README publishes 42.0 / 27.3 / 22.0 / 20.0 for gpt-4o on airline (50 tasks × 4 trials). From those four
# numbers alone:

# %%
# NBVAL_CHECK_OUTPUT
row = lb.recover_row({1: 42.0, 2: 27.3, 3: 22.0, 4: 20.0}, tasks=50, trials=4)
print(row.status, "- tasks with 0, 1, 2, 3, 4 successes:", row.histogram)
print(f"rounding read from the figures: {row.decimals} decimal (±{row.tolerance:.3f} points); "
      f"figures of that precision fit a 50 x 4 histogram by accident with chance <= {row.fit.false_fit_chance:.1e}")
counts = lb.histogram_counts(row.cells, run_id="gpt-4o/airline", domain="airline")
print(tauk.stats.pass_hat_k(counts).summary())

# %% [markdown]
# The run's 200 trajectories are public too. The histogram recovered from the four published figures is the real
# one, and so is every interval computed from it (the default interval depends on the tasks only through their
# counts):

# %%
# (not output-checked: without ../shared it prints the skip line; tests/test_leaderboard_recovery.py checks this)
TAUBENCH = SHARED / "taubench" / "gpt-4o_airline_4trials.json"
if TAUBENCH.exists():
    real = tauk.stats.task_counts(tauk.load(TAUBENCH))
    print("histogram of the trajectories:", tuple((real["successes"] == c).sum() for c in range(5)))
    a = tauk.stats.pass_hat_k(real).to_frame()
    b = tauk.stats.pass_hat_k(counts).to_frame()
    cols = ["estimate", "ci_low", "ci_high", "rerun_ci_low", "rerun_ci_high"]
    print("max |difference| of the intervals:", max((a[c] - b[c]).abs().max() for c in cols))
else:
    print("shared data not found: skipped")

# %% [markdown]
# ## Every row of the leaderboard
#
# `lb.analyze` reads every submission, recovers each row, and computes the per-row, per-domain and voice tables
# (upstream's `A_EXAMPLE_*` templates are left out). Rows that publish only pass^1 over four trials per task cannot
# be recovered (*insufficient*); voice rows publish pass^1 over one simulation per task, which is enough.

# %%
if BOARD.exists():
    an = lb.analyze(BOARD)
    rec = an.recovery.to_frame()
    print(rec.group_by("published_ks", "status").len().sort("published_ks", "status"))
else:
    an = None
    print("shared data not found: skipped")

# %% [markdown]
# Of the 74 rows with pass^1 … pass^4, 60 reconstruct exactly; 14 are flagged. Each flag comes with the residual of
# the *nearest* integer histogram (a global minimum over all histograms), and the other infrastructure convention
# (tasks lost whole, tasks one trial short) and the domain's other task sets were tried before giving up:

# %%
if an is not None:
    flagged = rec.filter(pl.col("status") == "flagged").select(
        "submission_id", "domain", "decimals", "tolerance", "residual", "n_alternatives", "explanation")
    print(flagged)

# %% [markdown]
# Twelve flags are the four 2024-06-20 paper baselines in every domain: their airline pass^1 (e.g. 64.2) is not a
# multiple of 0.5, so they are not 50 tasks × 4 trials of one run. Four rows miss by a hair — three one-decimal rows
# 0.051–0.058 points off (their rounding allows 0.05) and distyl's two-decimal banking row 0.047 off (its rounding
# allows 0.005). A uniform tolerance of 0.06 points admits them, which is how one counts 64:

# %%
if an is not None:
    loose = lb.recover(BOARD, tolerance=0.06).to_frame().filter(pl.col("published_ks") == "1-4")
    print(loose.group_by("status").len().sort("status"))

# %% [markdown]
# ## Per row: intervals and the noise floor
#
# For each recovered row: pass^1 with the default calibrated interval for a new draw of tasks and the re-run
# interval for the same tasks; the noise floor (**MDD**: the smallest gap between two single runs of this setup
# that is significant at α = 0.05 — on the lattice of 1/T, so a multiple of 2 points on airline) and the share of
# tasks that flip between trials.

# %%
if an is not None:
    print(an.rows.summary(domain="airline").to_text(width=140))

# %% [markdown]
# ## Per domain: who could be first, and which gaps mean anything
#
# Rows are compared by Welch's t on their per-task values. The rows ran the *same* tasks (though not always the same
# setup: where the ranked rows of a domain published different user simulators, τ²-bench versions or retrieval
# configurations, `ranking.domains`' `setups_differ` lists them and the table says that a gap between such rows is
# not the agents' alone, as in most rankings of the shared board), so their values are
# positively correlated and the unpaired test is **conservative** (measured: at T = 114, n = 4 and shared task
# difficulty ρ = 0.9 it rejects 0.3 % of true ties and has 50 % power for a 10-point gap, where the paired t on the
# same tasks has 5.1 % and 89 %; `benchmarks/results/leaderboard_calibration_2000_seed0.txt`). Rank intervals invert these tests
# with Holm's adjustment; a tie group is a run of rows no adjacent step of which is separable.

# %%
if an is not None:
    print(an.ranking.summary(domain=["airline", "retail"]).to_text(width=140))

# %%
if an is not None:
    fig = plot.leaderboard_ranks(an.ranking, domains=["airline", "retail", "telecom"])
    display(fig)

# %%
if an is not None:
    text = an.ranking.pairs.filter(pl.col("adjacent") & (pl.col("modality") == "text"))
    print(f"text rows: {text.height} adjacent pairs; separable at p < 0.05 unadjusted: "
          f"{int((text['p_unpaired'] <= 0.05).sum())}, after Holm within each domain: {int(text['separable'].sum())}")
    print(an.ranking.domains.select("domain", "modality", "n_ranked", "n_possibly_best", "n_tiers",
                                    "adjacent_separable", "n_adjacent", "mdd_min", "mdd_max"))

# %% [markdown]
# ## Paired where trajectories exist
#
# With trajectories for two rows, the paired t on their shared tasks replaces the unpaired test for that pair, and
# the tables show both views. Your own runs become leaderboard rows with `lb.board_from_runs` — here the bundled
# sample (three agents, 25 tasks × 4 trials per domain). Both views are shown; the paired one is tauk.stats's own
# rank intervals.

# %%
# NBVAL_CHECK_OUTPUT
runs = lb.board_from_runs(tauk.load(SAMPLE))
mine = lb.analyze(runs.board, trajectories=runs.trajectories, tasks=runs.tasks)
print(mine.ranking.summary().to_text(width=140))
print(mine.ranking.pairs.select("domain", "a", "b", "difference", "p_unpaired", "p_paired"))

# %% [markdown]
# Among the shared leaderboard files' own runs, only toolorchestra's airline run has trajectories in the shared data
# (one trial per task), so no *pair* of published rows can be paired there. Two real runs on the same tasks — gpt-4.1
# and its fine-tune on telecom's 40 test tasks (v0.1, one trial each) — show the two views on real data:

# %%
if (SHARED / "tau2").exists():
    res = tauk.load({a: SHARED / "tau2" / f"v0.1_{a}_telecom-test_1trial.json" for a in ("gpt-4.1", "ft-gpt-4.1")})
    pair_runs = lb.board_from_runs(res)
    pa = lb.analyze(pair_runs.board, trajectories=pair_runs.trajectories, tasks=pair_runs.tasks)
    print(pa.ranking.summary().to_text(width=140))
    print(pa.ranking.pairs.select("a", "b", "difference", "p_unpaired", "p_paired"))
else:
    print("shared data not found: skipped")

# %% [markdown]
# ## Voice rows: interaction metrics with their counts
#
# `load_leaderboard` keeps pass^k only; `tauk.io.leaderboard.load_interaction_metrics` reads the voice panel with
# the counts behind it. Every rate is a whole count over a published denominator, so each gets an exact interval
# (Clopper–Pearson for shares, Garwood for the interruption rate). Events cluster within simulations, so these
# intervals are a **lower bound** on the uncertainty (measured: with an intra-simulation correlation of 0.2 and 20
# events per simulation, the Clopper–Pearson coverage falls to 61–63 %; 95–97 % when events are independent).

# %%
if an is not None:
    print(an.voice.summary(metric="response_rate", domain="airline").to_text(width=140))
    shares = an.voice.adjacent.filter(pl.col("metric") != "agent_interruption_rate")
    print(f"adjacent pairs of shares with overlapping exact intervals: {int(shares['n_overlapping'].sum())} of "
          f"{int(shares['n_adjacent'].sum())}")

# %% [markdown]
# ## Verifying a submission against its trajectories
#
# `lb.verify_submission(folder)` (and `tauk leaderboard --verify FOLDER`) recomputes every published pass^k from the
# rewards recorded in the trajectories the submission names, with infrastructure errors dropped and counted as
# failures, and lists the differences; it also re-grades each domain's trajectories (`tauk.audit`) and says when
# recorded rewards do not follow from them (toolorchestra's airline: 3 of 50, so "verified from the recorded
# rewards"). Here toolorchestra's published airline 56.0 against its trajectories, and a run with one
# infrastructure error published as 98.0:

# %%
if BOARD.exists():
    tmp = Path(tempfile.mkdtemp())
    cases = {"toolorchestra": (json.loads((BOARD / "toolorchestra_nvidia_2025-12-02.json").read_text()),
                               SHARED / "nonconformant" / "toolorchestra_airline_1trial.json"),
             "adaptive": ({"model_name": "adaptive-agent", "model_organization": "-", "submitting_organization": "-",
                           "submission_date": "2026-01-01", "results": {"airline": {"pass_1": 98.0}}},
                          SHARED / "nonconformant" / "adaptive-agent_airline_wrapper_infra-error.json")}
    for name, (doc, traj) in cases.items():
        sub = tmp / name / "trajectories"
        sub.mkdir(parents=True)
        doc = {**doc, "results": {"airline": doc["results"]["airline"]}, "trajectory_files": {"airline": traj.name}}
        (tmp / name / "submission.json").write_text(json.dumps(doc))
        shutil.copy(traj, sub / traj.name)
        print(lb.verify_submission(tmp / name).summary().to_text(width=140), "\n")
else:
    print("shared data not found: skipped")

# %% [markdown]
# The second row is reproduced only with the infrastructure error counted as a failure (98.0); τ²-bench ≥ 1.0 drops
# it and gives 100.0. The figures come from the command line too: `tauk leaderboard ../shared/data/leaderboard
# --domain airline`, `--table rows|recovery|pairs|voice`, `--format json|csv|markdown|latex`.
