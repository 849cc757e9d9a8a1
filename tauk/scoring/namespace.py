"""``DataFrame.tauk``: a few verbs on scored frames (registered on ``import tauk.scoring``).

>>> scored = tauk.score(res)                                  # doctest: +SKIP
>>> scored.tauk.success().group_by("agent").agg(pl.col("success").mean())   # doctest: +SKIP
>>> scored.tauk.failure_counts()                              # doctest: +SKIP
"""

from __future__ import annotations

import polars as pl

TOL = 1e-6


def success_expr(column: str = "score_reward") -> pl.Expr:
    """SPEC §3 success: ``1 - 1e-6 <= reward <= 1 + 1e-6``; a null reward is not a success."""
    c = pl.col(column)
    return ((c >= 1 - TOL) & (c <= 1 + TOL)).fill_null(False)


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
