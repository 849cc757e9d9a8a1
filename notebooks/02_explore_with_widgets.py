# %% [markdown]
# # Explore with widgets
#
# `tauk.widgets.explorer(results)` picks agents, domains, k, the infrastructure-error convention and the evaluation
# type (or a reward-basis override) and shows the pass^k table and a figure. The intervals (the beta-binomial model
# by default, as everywhere in tauk) are computed **once per selection** (every k at once); moving the k slider only
# re-slices the cached summary and redraws.
#
# Run this notebook in Jupyter to interact; on GitHub you see the static snapshots printed below each widget.

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
from IPython.display import HTML, Image, display

# %%
res = tauk.load(SAMPLE)
ex = widgets.explorer(res, seed=0)
ex

# %% [markdown]
# The widget is an object with its controls as attributes (`ex.agents`, `ex.domains`, `ex.k`, `ex.infra`,
# `ex.evaluation`, `ex.reward_basis`, `ex.figure`) and its outputs (`ex.table`, `ex.status`, `ex.output`), so it
# can be driven from code too. Moving k does not recompute the intervals:

# %%
# NBVAL_CHECK_OUTPUT
for k in (1, 2, 3, 4):
    ex.k.value = k
print("summaries computed:", ex.n_computed, "| figures drawn:", ex.n_drawn)
print(ex.summary)

# %% [markdown]
# A static snapshot of the widget's current table and figure (k = 4):

# %%
display(HTML(ex.table.value))
display(Image(ex.figure_png))

# %% [markdown]
# ## Another evaluation
#
# Re-score every simulation with `tauk.score` under another evaluation type or reward basis — here every task is
# graded on DB × COMMUNICATE × ACTION, i.e. the gold actions must also be matched — and count infrastructure errors
# as failures. Each new selection costs one computation; going back to one seen before comes from the cache.

# %%
# NBVAL_CHECK_OUTPUT
with ex.hold():  # several controls at once: one computation on leaving the block
    ex.evaluation.value = "all"
    ex.reward_basis.value = "DB+COMMUNICATE+ACTION"
    ex.infra.value = "fail"
    ex.k.value = 1
print("summaries computed:", ex.n_computed)
print(ex.summary)

# %%
display(HTML(ex.status.value + ex.table.value))
display(Image(ex.figure_png))

# %% [markdown]
# ## The pass^k curve of one agent

# %%
with ex.hold():
    ex.evaluation.value = "recorded"
    ex.infra.value = "drop"
    ex.agents.value = ("atlas-large",)
    ex.figure.value = "pass_k_curve"
display(HTML(ex.table.value))
display(Image(ex.figure_png))

# %% [markdown]
# ## Two agents side by side
#
# `tauk.widgets.comparison(results)` pairs two agents on their shared tasks: the `tauk.stats.compare` table and the
# forest plot.

# %%
cw = widgets.comparison(res, a="atlas-large", b="atlas-small", seed=0)
cw

# %%
display(HTML(cw.table.value))
display(Image(cw.figure_png))
