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

# %% [markdown]
# ## Action by action: the first decisive deviation
#
# The DB check compares end states and says nothing about *what* went wrong. `tauk.scoring.trial_deviations`
# compares each trial's tool calls with the gold actions as multisets of (tool, canonical arguments), state-changing
# tools apart from read-only ones (which tools change state: the same shipped tool table as the validity audit):
# `missing`, `extra`, `wrong_args` (which argument), `order` (across the agent / user sides), each state-changing one
# **decisive** unless the record shows it may be harmless (an errored call, cancelling toggles, the same list in
# another order, …). On the τ-bench gpt-4o airline run (50 tasks × 4 trials) each extra state-changing deviation
# cuts the success rate sharply; the task-clustered interval is the one to read (a task's trials are not
# independent):

# %%
TAUBENCH = SHARED / "taubench" / "gpt-4o_airline_4trials.json"
dev_res = tauk.load(TAUBENCH) if TAUBENCH.exists() else res
dev_profile = stats.deviation_profile(dev_res)
print(dev_profile.summary().to_text(width=110, digits=3))
print(dev_profile.groups.select("agent", "failures", "failures_with_deviation", "extra_or_wrong", "missing_only"))

# %%
plot.deviation_success(dev_profile)

# %% [markdown]
# Per task: how often a trial deviates, and the most common first decisive deviation (kind and tool):

# %%
print(dev_profile.tasks.sort("deviation_rate", "task_id", descending=[True, False])
      .select("task_id", "trials", pl.col("success", "deviation_rate").round(2), "most_common_deviation").head(8))

# %% [markdown]
# The trajectory viewer names the first decisive deviation in its "why" box and outlines that call (here the first
# failed trial whose first decisive deviation is a wrong argument):

# %%
dev_trials = tauk.scoring.trial_deviations(dev_res)
first_wrong = dev_trials.filter(pl.col("deviation") == "wrong_args").sort("run_id", "simulation_id")
if first_wrong.height:
    dev_viewer = widgets.trajectory_viewer(dev_res)
    row = first_wrong.row(0, named=True)
    print(row["simulation_id"], row["first_tool"], row["first_wrong_args"], "turn", row["first_turn"])
    dev_viewer.show(row["run_id"], row["simulation_id"])
    display(HTML(dev_viewer.html.value))

# %% [markdown]
# ## How reliable is the agent? The reliability profile
#
# Outcome consistency (2p − 1)² per task — 1 when a task always or never succeeds — estimated without bias by the
# U-statistic 1 − 4c(n − c)/(n(n − 1)); HAL's plug-in (2p̂ − 1)² is shown beside it for comparison with published
# numbers (its bias 4p(1 − p)/K makes agents run with different K incomparable). Resource consistency: the
# coefficient of variation of cost, turns and tool calls across a task's trials; trajectory consistency: the
# Jensen–Shannon divergence of tool-name distributions and the edit similarity of tool-call sequences between
# successful trials. Each with a task-level interval.

# %%
rel = stats.reliability(dev_res)
print(rel.summary().to_text(width=110, digits=3))

# %%
plot.reliability_profile(rel)

# %% [markdown]
# ## What the score can see: tasks that pass by doing nothing
#
# A reward is the product of the components in the task's `reward_basis`. Where no gold action changes state
# (the gold database *is* the initial one) and every other component of the basis has an empty check list, an agent
# that calls no tool and ends the conversation normally gets reward 1: the task is **inaction-passable**.
# `tauk.tasks.validity` flags them per task (which gold actions change state: the tool types a file records, else
# tauk's per-domain tool table from τ²-bench's own tool decorators — unknown tools are never guessed), with the
# components that pass by themselves, NL assertions written but never scored, and gold actions nothing checks.
# On the bundled sample:

# %%
# NBVAL_CHECK_OUTPUT
sample_validity = tauk.tasks.validity(res)
print(sample_validity.tasks.group_by("task_set").agg(
    pl.len().alias("tasks"), pl.col("inaction_passable").sum().alias("inaction_passable")).sort("task_set"))

# %% [markdown]
# And how much of each agent's score comes from them: pass^1 on all tasks and on the **substantive** ones (point
# estimates), and the share of successes that fall on inaction-passable tasks.

# %%
# NBVAL_CHECK_OUTPUT
print(tauk.tasks.inaction_section(res, by=("agent", "domain")))

# %% [markdown]
# Every summary carries the same figures with intervals: `n_tasks_inaction_passable`, pass^k on the substantive
# tasks (`substantive_*`, its own interval by the same method) beside pass^k on all, and the share of successes on
# inaction-passable tasks — from the definitions each run embeds (`task_definitions`; "none": not known).

# %%
# NBVAL_CHECK_OUTPUT
s = stats.summarize(res, by=("agent", "domain"), k=1)
short = {"n_tasks_inaction_passable": "passable", "estimate": "all", "ci_low": "lo", "ci_high": "hi",
         "substantive_estimate": "subst", "substantive_ci_low": "s_lo", "substantive_ci_high": "s_hi",
         "share_successes_inaction_passable": "share"}
with pl.Config(tbl_cols=12):
    print(s.groups.join(s.pass_hat_k, on=["agent", "domain"]).select(
        "agent", "domain", *(pl.col(c).round(3).alias(a) if c != "n_tasks_inaction_passable" else pl.col(c).alias(a)
                             for c, a in short.items())))

# %%
plot.substantive_estimates(s)

# %% [markdown]
# On real runs the gap is wide. Head airline's 50 tasks (the v1.0 whissle file) include 23 a do-nothing agent
# passes; v0.1.0 airline (qwen2.5-7b; the τ-bench gpt-4o run, whose records carry their tasks) 19:

# %%
# NBVAL_CHECK_OUTPUT
airline_files = [SHARED / "tau2" / "v1.0_whissle_airline_1trial.json",
                 SHARED / "tau2" / "v0.1_qwen2.5-7b_airline_1trial_premature-endings.json",
                 SHARED / "taubench" / "gpt-4o_airline_4trials.json"]
if all(p.exists() for p in airline_files):
    airline = stats.summarize(tauk.load(airline_files, progress=False), by=("agent",), k=1)
    with pl.Config(tbl_cols=12):
        print(airline.groups.join(airline.pass_hat_k, on=["agent"]).select(
            "agent", "n_tasks", *(pl.col(c).round(3).alias(a) if c != "n_tasks_inaction_passable" else
                                  pl.col(c).alias(a) for c, a in short.items())))
else:
    print("shared logs not found: skipped")

# %% [markdown]
# ### The shared task versions
#
# Every task file of τ²-bench in `../../shared/data/tasks` (v0.1.0, v1.0.0, head; split files add a bound per
# split). Head airline: 24 of 50 tasks have no state-changing gold action, 23 are inaction-passable (COMMUNICATE is
# in every basis but empty in 44) — a do-nothing agent scores **46 % pass^1**; head retail: NL_ASSERTION is in the
# basis of 112 tasks but empty in 72, 40 need an LLM judge, 6 are inaction-passable. *unknown*: telecom's ENV
# assertions (and live NL assertions) cannot be evaluated offline on the initial state — the bound is then a range
# (`do_nothing_pass1` … `do_nothing_pass1_max`).

# %%
TASKS = SHARED / "tasks"
if TASKS.exists():
    validity = tauk.tasks.validity(TASKS)
    print(validity.summary().to_text(width=120))
    print(validity.bounds.filter(pl.col("split").is_not_null())
          .select("task_set", "split", "n_tasks", "n_inaction_passable", "n_inaction_unknown", "do_nothing_pass1"))
else:
    print("shared task files not found: skipped")

# %% [markdown]
# The flagged tasks of head airline, with what fails for a do-nothing agent and what nobody scores:

# %%
if TASKS.exists():
    print(validity.tasks.filter(pl.col("task_set") == "head_airline_tasks", pl.col("inaction_passable"))
          .select("task_id", "auto_pass", "nl_unscored", "n_unscored_actions").head(10))

# %% [markdown]
# ## Is a re-grade valid?
#
# Re-grading old trajectories against new task definitions is valid only where nothing the grade depends on moved.
# From v0.1.0 to head, 12 airline tasks changed their gold actions and 22 their user scenario (retail: 10 and 21):

# %%
if TASKS.exists():
    for d in ("airline", "retail"):
        ch = tauk.tasks.task_changes(TASKS / f"v0.1.0_{d}_tasks.json", TASKS / f"head_{d}_tasks.json")
        print(d, ch.select(pl.col("gold_actions_changed", "gold_state_changed", "scenario_changed", "nl_assertions_changed",
                                  "basis_changed").sum()).row(0, named=True))

# %% [markdown]
# `tauk.score(results, tasks=NEW)` classifies every (run, task) — `unchanged`, `regradable` (offline: only
# COMMUNICATE / ACTION / the basis changed), `needs_replay` (the gold state or ENV assertions moved), `needs_judge`
# (live NL assertions), `not_comparable` (another scenario, initial state or graded definition) — and reports a
# re-graded reward only for the first two. Filter on `regrade_class` before statistics:

# %%
import warnings

run_file = SHARED / "tau2" / "v0.1_gpt-4.1_retail-test_1trial.json"
if run_file.exists():
    run = tauk.load(run_file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.scoring.RegradeWarning)
        regraded = tauk.score(run, tasks=TASKS / "head_retail_tasks.json")
    print(regraded.group_by("regrade_class").agg(pl.len().alias("simulations"),
                                                 pl.col("score_reward").is_not_null().sum().alias("re-graded"))
          .sort("regrade_class"))
    print(regraded.select("task_id", "regrade_class", "regrade_reason").unique("regrade_class", keep="first", maintain_order=True)
          .sort("regrade_class"))
    eligible = regraded.filter(pl.col("regrade_class").is_in(tauk.tasks.REGRADED))
    print("pass^1, recorded (all 40 tasks):",
          round(stats.pass_hat_k(run.trials, k=1, by=("agent",)).to_frame()["estimate"][0], 3),
          "| re-graded on the", eligible["task_id"].n_unique(), "eligible tasks:",
          round(stats.pass_hat_k(eligible, k=1, by=("agent",), reward="score_reward").to_frame()["estimate"][0], 3))
else:
    print("shared data not found: skipped")
