"""An unknown grouping column is one line naming it and the choices (exit 2), before any grouping: never a Polars
traceback, in every command and function that takes ``--by`` / ``by=``."""

from __future__ import annotations

import pytest

import tauk
from conftest import SAMPLE_DATA
from tauk.cli import main

S = str(SAMPLE_DATA)


@pytest.mark.parametrize("argv", [
    ["summary", S, "--by", "agnet"],
    ["summary", S, "--by", "agent,domian", "--ci", "0"],
    ["summary", S, "--by", "agnet", "--pool-setups"],
    ["compare", S, "--a", "baseline", "--b", "atlas-large", "--by", "domian"],
    ["consistency", S, "--by", "agnet"],
    ["reliability", S, "--by", "agnet"],
])  # fmt: skip
def test_cli_unknown_by_is_one_line_exit_2(capsys, argv):
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    bad = "agnet" if any("agnet" in a for a in argv) else "domian"
    assert err[0].startswith("tauk: error: ") and f"'{bad}'" in err[0]
    assert "choose from" in err[0] and "agent" in err[0] and "domain" in err[0] and "_kept" not in err[0]
    assert "Traceback" not in err[0] and "polars" not in err[0].lower()


@pytest.mark.parametrize("call", [
    lambda r: tauk.stats.summarize(r, by="agnet", ci=None),
    lambda r: tauk.stats.summarize(r, by=("agnet",), ci=None, pool_setups=True),
    lambda r: tauk.stats.pass_hat_k(r, by="agnet", ci=None),
    lambda r: tauk.stats.compare_all(r, by="agnet", ci=None),
    lambda r: tauk.stats.compare(r, "baseline", "atlas-large", by="agnet", ci=None),
    lambda r: tauk.stats.consistency(r, by="agnet"),
    lambda r: tauk.stats.task_counts(r, by="agnet"),
])  # fmt: skip
def test_api_unknown_by_is_a_tauk_error(call):
    res = tauk.load(SAMPLE_DATA)
    with pytest.raises(tauk.TaukError, match=r"'agnet': not a column \(did you mean 'agent'\?\); choose from"):
        call(res)
