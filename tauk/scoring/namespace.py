"""``DataFrame.tauk``: a few verbs on scored frames (registered on ``import tauk.scoring``).

Examples
--------
>>> import tauk, polars as pl
>>> scored = tauk.score(tauk.load("data/baseline_airline.json"))
>>> scored.tauk.success()["success"].mean()
0.3
>>> scored.tauk.failure_counts().row(0)
('DB', 32)
"""

from __future__ import annotations

import polars as pl

from tauk import conventions


def success_expr(column: str = "score_reward") -> pl.Expr:
    """docs/spec.md §3 success on ``column``: the rule of :func:`tauk.conventions.success_expr` (``1 - SUCCESS_TOL <=
    reward <= 1 + SUCCESS_TOL``; a null reward is not a success), named after the column.

    Parameters
    ----------
    column
        The reward column (default ``"score_reward"``, the reward of :func:`tauk.score`).

    Returns
    -------
    polars.Expr
        A boolean expression.

    Examples
    --------
    >>> pl.DataFrame({"score_reward": [1.0, 0.5, None]}).select(success_expr())["score_reward"].to_list()
    [True, False, False]
    """
    return conventions.success_expr(column).alias(column)


@pl.api.register_dataframe_namespace("tauk")
class TaukFrame:
    def __init__(self, df: pl.DataFrame):
        self._df = df

    def success(self, column: str | None = None) -> pl.DataFrame:
        """Add a boolean ``success`` column (from ``score_reward``, else ``reward``)."""
        col = column or ("score_reward" if "score_reward" in self._df.columns else "reward")
        return self._df.with_columns(success=success_expr(col))

    def failures(self) -> pl.DataFrame:
        """The rows of a scored frame whose reward was not 1 (``failure`` not null)."""
        return self._df.filter(pl.col("failure").is_not_null())

    def failure_counts(self, by: str | list[str] | None = None) -> pl.DataFrame:
        """Count simulations per ``failure`` (optionally per ``by`` too), most frequent first."""
        keys = ([by] if isinstance(by, str) else list(by or [])) + ["failure"]
        return self.failures().group_by(keys).agg(n=pl.len()).sort("n", *keys, descending=[True] + [False] * len(keys))
