"""Unit tests of the scoring kernel on hand-built frames: every edge case of docs/spec.md §2."""

from __future__ import annotations

import pytest
from test_scoring_helpers import action, build, msg, sim, task

import tauk
from tauk.scoring import (
    EVALUATION_TYPES,
    RegradeWarning,
    action_checks,
    communicate_checks,
    score,
    task_frames,
)
from tauk.scoring._kernel import canonical_value


def one(sims, tasks, **kw) -> dict:
    out = score(build(sims, tasks), **kw)
    assert out.height == 1
    return out.row(0, named=True)


def comm(messages, info, fmt="tau2") -> float:
    return one([sim("s", "t", messages, fmt=fmt)], [task("t", communicate_info=info)])["communicate"]


def act(messages, actions) -> float:
    return one([sim("s", "t", messages)], [task("t", actions=actions)])["action"]


# ---------------------------------------------------------------------------------------------- COMMUNICATE
class TestCommunicate:
    def test_commas_stripped_from_message(self):
        assert comm([msg("assistant", "Your refund is $1,000.")], ["$1000"]) == 1.0

    def test_comma_in_string_never_matches(self):
        assert comm([msg("assistant", "Your refund is $1,000.")], ["$1,000"]) == 0.0
        assert comm([msg("assistant", "a, b")], ["a, b"]) == 0.0

    def test_case_insensitive(self):
        assert comm([msg("assistant", "Reservation ABC123 cancelled")], ["abc123 CANCELLED"]) == 1.0

    def test_literal_not_regex(self):
        assert comm([msg("assistant", "price is 1x5")], ["1.5"]) == 0.0
        assert comm([msg("assistant", "a.*b and (c)")], [".*b and (c"]) == 1.0

    def test_empty_and_null_list(self):
        assert comm([msg("assistant", "hello")], []) == 1.0
        assert comm([msg("assistant", "hello")], None) == 1.0
        assert comm([], None) == 1.0

    def test_every_string_must_be_met(self):
        assert comm([msg("assistant", "alpha"), msg("assistant", "beta")], ["alpha", "beta"]) == 1.0
        assert comm([msg("assistant", "alpha")], ["alpha", "gamma"]) == 0.0

    def test_string_must_be_within_one_message(self):
        assert comm([msg("assistant", "alpha"), msg("assistant", "beta")], ["alpha beta"]) == 0.0

    def test_canned_greeting_counts(self):
        assert comm([msg("assistant", "Hi! How can I help you today?"), msg("user", "hi")], ["how can i help"]) == 1.0

    def test_user_and_tool_messages_never_count(self):
        assert comm([msg("user", "the code is 42"), msg("tool", "the code is 42")], ["42"]) == 0.0
        assert comm([msg("system", "the code is 42")], ["42"]) == 0.0

    def test_assistant_message_with_tool_calls_counts(self):
        m = msg("assistant", "Cancelling ABC now", calls=[("cancel", {"id": "ABC"})])
        assert comm([m], ["cancelling abc"]) == 1.0

    def test_taubench_only_respond_messages_count(self):
        m = msg("assistant", "Cancelling ABC now", calls=[("cancel", {"id": "ABC"})])
        assert comm([m], ["cancelling abc"], fmt="taubench") == 0.0
        assert comm([m, msg("assistant", "Cancelling ABC now")], ["cancelling abc"], fmt="taubench") == 1.0

    def test_blank_and_null_content_do_not_count(self):
        # the empty string is in every string, so it tests "non-blank text content" directly
        assert comm([msg("assistant", None), msg("assistant", "  \n\t"), msg("assistant", "\x1c\u00a0")], [""]) == 0.0
        assert comm([msg("assistant", " x ")], [""]) == 1.0

    def test_blank_strings_mixed_with_others(self):
        # the blank test is applied only to blank strings: a whitespace string needs a non-blank message holding it
        assert comm([msg("assistant", "   "), msg("assistant", "ok")], ["  ", "ok"]) == 0.0
        assert comm([msg("assistant", "   "), msg("assistant", "o  k")], ["  ", "o  k"]) == 1.0
        assert comm([msg("assistant", "\u3000")], ["\u3000"]) == 0.0
        assert comm([msg("assistant", "a\u3000b")], ["\u3000"]) == 1.0
        # commas are stripped from the message only: "," alone is never met, ", " never matches a blank message
        assert comm([msg("assistant", ",")], [","]) == 0.0
        assert comm([msg("assistant", " , ")], [" "]) == 1.0

    def test_unicode_lowercase(self):
        assert comm([msg("assistant", "ÉTÉ À PARIS")], ["été à paris"]) == 1.0

    def test_lowercase_as_python_where_unicode_versions_differ(self):
        # τ²-bench lower-cases with Python; Polars follows a newer Unicode, which gave U+A7CB a lower case (ɤ) that
        # Python 3.11–3.12 does not know: the check must follow Python's, on the string and on the message
        for content, info in (("ɤ", "\ua7cb"), ("\ua7cb", "ɤ"), ("x \U00010d50 y", "\U00010d70"), ("ok \ua7cb", "\ua7cb")):
            want = 1.0 if info.lower() in content.lower().replace(",", "") else 0.0
            assert comm([msg("assistant", content)], [info]) == want, (content, info)
        # contexts where both lower-case alike stay on the vectorised path (final sigma, dotted I)
        assert comm([msg("assistant", "ΟΔΟΣ")], ["οδος"]) == (1.0 if "οδος" in "ΟΔΟΣ".lower() else 0.0)
        assert comm([msg("assistant", "İSTANBUL")], ["i̇stanbul"]) == 1.0

    def test_lowercase_mismatch_class_is_exact(self):
        import re

        import polars as pl

        from tauk.scoring._kernel import lowercase_mismatch_class

        def polars_lower(c):
            return pl.Series([c]).str.to_lowercase()[0]

        cls = lowercase_mismatch_class()
        listed = set() if cls is None else set(re.findall(r"\\?(.)", cls[1:-1], flags=re.S))
        odd = {c for c in listed if c.lower() != polars_lower(c)}  # the code points where the two differ
        assert listed == odd | {x for c in odd for x in (*c.lower(), *polars_lower(c))}  # and their lower cases
        cps = [chr(i) for i in range(0, 0x110000, 7) if not 0xD800 <= i <= 0xDFFF]
        low = pl.Series(cps).str.to_lowercase().to_list()
        assert {c for c, p in zip(cps, low) if c.lower() != p} <= odd

    def test_communicate_checks_first_message(self):
        r = build(
            [sim("s", "t", [msg("assistant", "hello"), msg("user", "x"), msg("assistant", "Total: $1,500"),
                            msg("assistant", "again 1500")])],
            [task("t", communicate_info=["1500", "nope"])],
        )  # fmt: skip
        cc = communicate_checks(r)
        assert cc.columns == ["run_id", "simulation_id", "task_id", "info_idx", "info", "met", "message_idx"]
        assert cc.select("info", "met", "message_idx").rows() == [("1500", True, 2), ("nope", False, None)]


# ---------------------------------------------------------------------------------------------------- ACTION
def call(name, args, role="assistant"):
    return msg(role, None, calls=[(name, args)])


class TestAction:
    def test_compare_args_none_uses_call_keys(self):
        gold = [action("book", {"a": 1, "b": 2})]
        assert act([call("book", {"a": 1, "b": 2})], gold) == 1.0
        assert act([call("book", {"a": 1})], gold) == 1.0  # omitted argument is not penalised
        assert act([call("book", {"a": 1, "b": 2, "c": 3})], gold) == 0.0  # an extra one fails
        assert act([call("book", {"a": 1, "b": 3})], gold) == 0.0
        assert act([call("book", {})], gold) == 1.0  # no keys => match

    def test_compare_args_empty_means_name_only(self):
        gold = [action("book", {"a": 1}, compare_args=[])]
        assert act([call("book", {"a": 99, "z": 0})], gold) == 1.0
        assert act([call("other", {"a": 1})], gold) == 0.0

    def test_compare_args_subset(self):
        gold = [action("book", {"a": 1, "b": 2}, compare_args=["a"])]
        assert act([call("book", {"a": 1, "b": 999, "c": 5})], gold) == 1.0
        assert act([call("book", {"b": 2})], gold) == 0.0  # a missing on the call side only
        gold2 = [action("book", {"b": 2}, compare_args=["a"])]
        assert act([call("book", {"b": 5})], gold2) == 1.0  # a absent on both sides
        assert act([call("book", {"a": None})], [action("book", {}, compare_args=["a"])]) == 0.0  # null != absent

    def test_arguments_that_are_not_an_object_match_only_by_name(self):
        for bad in ("not json at all", [1, 2], None):  # stored as the JSON texts '"not json at all"', '[1, 2]', 'null'
            assert act([call("cancel", bad)], [action("cancel", {"id": "A1"})]) == 0.0
            assert act([call("cancel", bad)], [action("cancel", {"id": "A1"}, compare_args=["id"])]) == 0.0
            assert act([call("cancel", bad)], [action("cancel", {"id": "A1"}, compare_args=[])]) == 1.0

    def test_json_equality(self):
        assert act([call("f", {"x": 1.0})], [action("f", {"x": 1})]) == 1.0
        assert act([call("f", {"x": "1"})], [action("f", {"x": 1})]) == 0.0
        assert act([call("f", {"x": True})], [action("f", {"x": 1})]) == 1.0
        assert act([call("f", {"x": False})], [action("f", {"x": 0.0})]) == 1.0
        assert act([call("f", {"x": 1.5})], [action("f", {"x": 1})]) == 0.0
        assert act([call("f", {"x": None})], [action("f", {"x": None})]) == 1.0

    def test_integers_beyond_64_bits_compared_exactly(self):
        # a double would make 10**30 and 10**30 + 1 the same number; Python (and τ²-bench) tells them apart
        assert act([call("f", {"x": 10**30 + 1})], [action("f", {"x": 10**30})]) == 0.0
        assert act([call("f", {"x": [10**30 + 1]})], [action("f", {"x": [10**30]})]) == 0.0
        assert act([call("f", {"x": 10**30})], [action("f", {"x": 10**30})]) == 1.0
        assert act([call("f", {"x": 2**53 + 1})], [action("f", {"x": float(2**53)})]) == 0.0

    def test_nested_lists_and_dicts(self):
        gold = [action("f", {"x": [{"a": 1, "b": [1, 2]}, 3]})]
        assert act([call("f", {"x": [{"b": [1.0, 2], "a": 1}, 3.0]})], gold) == 1.0  # dict order free
        assert act([call("f", {"x": [3, {"a": 1, "b": [1, 2]}]})], gold) == 0.0  # list order matters
        assert act([call("f", {"x": [{"a": 1, "b": [2, 1]}, 3]})], gold) == 0.0
        assert act([call("f", {"x": [{"a": "1", "b": [1, 2]}, 3]})], gold) == 0.0

    def test_requestor_ignored_and_user_calls_pooled(self):
        gold = [action("toggle", {"on": True}, requestor="user")]
        assert act([call("toggle", {"on": True}, role="assistant")], gold) == 1.0
        gold2 = [action("toggle", {"on": True}, requestor="assistant")]
        assert act([call("toggle", {"on": True}, role="user")], gold2) == 1.0

    def test_calls_on_system_and_tool_messages_never_count(self):
        """τ²-bench pools the calls of assistant and user messages only (its system and tool message models have no
        `tool_calls`: a recorded one is ignored). Found by benchmarks/fuzz_scoring_upstream.py."""
        gold = [action("f", {"x": 1})]
        assert act([call("f", {"x": 1}, role="system")], gold) == 0.0
        assert act([call("f", {"x": 1}, role="tool")], gold) == 0.0
        assert act([call("f", {"x": 1}, role="tool"), call("f", {"x": 1}, role="user")], gold) == 1.0
        checks = action_checks(build([sim("s", "t", [call("f", {"x": 1}, role="tool")])], [task("t", actions=gold)]))
        assert checks.select("matched", "call_idx").row(0) == (False, None)

    def test_calls_on_system_and_tool_messages_of_a_file_never_count(self, tmp_path):
        import json

        gold = {"action_id": "a", "name": "f", "arguments": {"x": 1}, "compare_args": None}
        t = {"id": "t", "user_scenario": {"instructions": "x"},
             "evaluation_criteria": {"actions": [gold], "reward_basis": ["ACTION"]}}  # fmt: skip
        msgs = [{"role": "assistant", "content": "hi"},
                {"role": "tool", "id": "c", "content": "ok", "requestor": "assistant",
                 "tool_calls": [{"id": "c", "name": "f", "arguments": {"x": 1}, "requestor": "assistant"}]},
                {"role": "system", "content": "s", "tool_calls": [{"id": "d", "name": "f", "arguments": {"x": 1}}]}]
        s = {"id": "s", "task_id": "t", "trial": 0, "termination_reason": "user_stop", "messages": msgs,
             "reward_info": {"reward": 0.0, "reward_basis": ["ACTION"]}}  # fmt: skip
        f = tmp_path / "r.json"
        f.write_text(json.dumps({"info": {"environment_info": {"domain_name": "mock"}}, "tasks": [t], "simulations": [s]}))
        row = score(tauk.load(f)).row(0, named=True)
        assert (row["action"], row["score_reward"], row["failure"]) == (0.0, 0.0, "ACTION")

    def test_one_call_matches_several_golds_and_order_free(self):
        golds = [action("f", {"x": 1}), action("f", {"x": 1, "y": 2})]
        assert act([call("f", {"x": 1})], golds) == 1.0
        golds2 = [action("g", {}), action("f", {"x": 1})]
        assert act([call("f", {"x": 1}), call("g", {})], golds2) == 1.0

    def test_every_gold_must_match(self):
        assert act([call("f", {"x": 1})], [action("f", {"x": 1}), action("g", {})]) == 0.0

    def test_empty_and_null_actions(self):
        assert act([call("f", {"x": 1})], []) == 1.0
        assert act([call("f", {"x": 1})], None) == 1.0
        assert act([], None) == 1.0

    def test_action_checks_first_call(self):
        r = build(
            [sim("s", "t", [call("f", {"x": 2}), call("f", {"x": 1}), call("f", {"x": 1})])],
            [task("t", actions=[action("f", {"x": 1}), action("g", {})])],
        )
        ac = action_checks(r)
        assert ac.select("action_idx", "name", "matched", "call_idx").rows() == [(0, "f", True, 1), (1, "g", False, None)]

    def test_canonical_value(self):
        assert canonical_value(1) == canonical_value(1.0) == canonical_value(True)
        assert canonical_value("1") != canonical_value(1)
        assert canonical_value({"a": 1, "b": 2}) == canonical_value({"b": 2.0, "a": True})
        assert canonical_value([1, 2]) != canonical_value([2, 1])
        assert canonical_value(2**53 + 1) != canonical_value(float(2**53))
        assert canonical_value(float("nan")) != canonical_value(float("nan"))


# ----------------------------------------------------------------------------------------------------- score
GOOD = [msg("assistant", "Hi! How can I help you today?"), msg("assistant", "done: code 42", calls=[("f", {"x": 1})])]


class TestScore:
    def test_columns_and_order(self):
        sims = [sim(f"s{i}", "t", GOOD) for i in range(5)]
        r = build(sims, [task("t", communicate_info=["code 42"])])
        out = score(r)
        assert out.get_column("simulation_id").to_list() == [f"s{i}" for i in range(5)]
        assert out.columns[: len(r.trials.columns)] == r.trials.columns
        for c in ["gate", "db", "env_assertion", "nl_assertion", "communicate", "action", "score_reward", "failure",
                  "score_basis", "communicate_source", "action_source", "task_defined", "db_env_nl_reverifiable"]:  # fmt: skip
            assert c in out.columns
        assert out.get_column("score_reward").to_list() == [1.0] * 5

    @pytest.mark.parametrize("reason", ["max_steps", "too_many_errors", "agent_error", "user_error", "timeout",
                                        "infrastructure_error", "some_future_reason"])  # fmt: skip
    def test_premature_endings(self, reason):
        row = one([sim("s", "t", GOOD, termination_reason=reason)], [task("t")])
        assert row["gate"] == 0.0 and row["score_reward"] == 0.0
        assert row["failure"] == f"premature:{reason}"

    def test_agent_stop_passes_gate(self):
        assert one([sim("s", "t", GOOD, termination_reason="agent_stop")], [task("t")])["score_reward"] == 1.0

    def test_premature_before_no_criteria(self):
        row = one([sim("s", "t", GOOD, termination_reason="max_steps")], [task("t", criteria=False)])
        assert row["score_reward"] == 0.0

    def test_no_criteria_is_one(self):
        row = one([sim("s", "t", GOOD, db=0.0)], [task("t", criteria=False)])
        assert row["score_reward"] == 1.0 and row["failure"] is None and row["has_criteria"] is False

    def test_default_basis_db_communicate(self):
        row = one([sim("s", "t", GOOD, db=1.0, env=0.0)], [task("t", communicate_info=["nothing said"])])
        assert row["score_basis"] == ["DB", "COMMUNICATE"]
        assert row["score_reward"] == 0.0 and row["failure"] == "COMMUNICATE"  # env outside the basis

    def test_absent_db_is_one(self):
        assert one([sim("s", "t", GOOD, db=None)], [task("t")])["db"] == 1.0

    def test_failure_names_in_fixed_order(self):
        t = task("t", communicate_info=["missing"], actions=[action("g", {})],
                 reward_basis=["COMMUNICATE", "ACTION", "NL_ASSERTION", "ENV_ASSERTION", "DB"])  # fmt: skip
        row = one([sim("s", "t", GOOD, db=0.0, env=0.0, nl=0.0)], [t])
        assert row["failure"] == "DB+ENV_ASSERTION+NL_ASSERTION+ACTION+COMMUNICATE"
        row = one([sim("s", "t", GOOD, db=0.0, env=1.0, nl=1.0)], [task("t", communicate_info=["missing"])])
        assert row["failure"] == "DB+COMMUNICATE"

    def test_no_reward_info(self):
        row = one([sim("s", "t", GOOD, has_reward_info=False)], [task("t")])
        assert row["score_reward"] is None and row["failure"] == "no_reward_info" and row["db"] is None
        # but a recomputed zero still tells
        row = one([sim("s", "t", GOOD, has_reward_info=False)], [task("t", communicate_info=["zzz"])])
        assert row["score_reward"] == 0.0 and row["failure"] == "COMMUNICATE"

    def test_no_messages_falls_back_to_record(self):
        row = one([sim("s", "t", None, recorded_communicate=0.0)], [task("t", communicate_info=["x"])])
        assert row["communicate_source"] == "record" and row["score_reward"] == 0.0
        row = one([sim("s", "t", None)], [task("t", communicate_info=["x"])])
        assert row["communicate"] is None and row["score_reward"] is None

    def test_basis_override_gates_action(self):
        t = task("t", actions=[action("g", {})])
        assert one([sim("s", "t", GOOD)], [t])["score_reward"] == 1.0
        row = one([sim("s", "t", GOOD)], [t], reward_basis=["DB", "COMMUNICATE", "ACTION"])
        assert row["score_reward"] == 0.0 and row["failure"] == "ACTION"
        assert row["score_basis"] == ["DB", "COMMUNICATE", "ACTION"]

    def test_basis_names_normalised(self):
        row = one([sim("s", "t", GOOD, db=0.0)], [task("t", reward_basis=["db"])])
        assert row["score_reward"] == 0.0 and row["failure"] == "DB"

    def test_taubench_reward_is_r_actions_times_r_outputs(self):
        m = [msg("assistant", "refund 100", calls=[("f", {})]), msg("assistant", "Your refund: 1,00")]
        t = task("t", communicate_info=["100"])
        assert one([sim("s", "t", m, fmt="taubench", db=1.0)], [t])["score_reward"] == 1.0
        assert one([sim("s", "t", m, fmt="taubench", db=0.0)], [t])["score_reward"] == 0.0
        row = one([sim("s", "t", m[:1], fmt="taubench", db=1.0)], [t])
        assert row["score_reward"] == 0.0 and row["failure"] == "COMMUNICATE"

    def test_namespace(self):
        out = score(build([sim("a", "t", GOOD), sim("b", "t", GOOD, db=0.0)], [task("t")]))
        s = out.tauk.success()
        assert s.get_column("success").to_list() == [True, False]
        assert out.tauk.failures().get_column("simulation_id").to_list() == ["b"]
        assert out.tauk.failure_counts().rows() == [("DB", 1)]


# ------------------------------------------------------------------------------------------ evaluation types
def _fixture(basis):
    # db 1, env 0, nl 0, action 0 (gold g never called), communicate 1
    t = task("t", communicate_info=["code 42"], actions=[action("g", {})], reward_basis=basis)
    return [sim("s", "t", GOOD, db=1.0, env=0.0, nl=0.0)], [t]


class TestEvaluationTypes:
    def test_all_is_product_over_basis(self):
        assert one(*_fixture(["DB", "COMMUNICATE"]), evaluation="all")["score_reward"] == 1.0
        row = one(*_fixture(["DB", "NL_ASSERTION"]), evaluation="all")
        assert row["score_reward"] == 0.0 and row["failure"] == "NL_ASSERTION"

    def test_all_with_nl_assertions_multiplies_nl_only_in_basis(self):
        assert one(*_fixture(["DB", "COMMUNICATE"]), evaluation="all_with_nl_assertions")["score_reward"] == 1.0
        assert one(*_fixture(["NL_ASSERTION"]), evaluation="all_with_nl_assertions")["score_reward"] == 0.0

    def test_all_ignore_basis_env_part_follows_basis(self):
        # env part multiplies only DB/ENV_ASSERTION named by the basis: env 0 is outside it; action 0 is not
        row = one(*_fixture(["DB", "COMMUNICATE"]), evaluation="all_ignore_basis")
        assert row["score_reward"] == 0.0 and row["failure"] == "ACTION"
        sims, tasks = _fixture(["DB", "COMMUNICATE"])
        tasks[0]["evaluation_criteria"]["actions"] = []
        assert one(sims, tasks, evaluation="all_ignore_basis")["score_reward"] == 1.0
        row = one(sims, [task("t", communicate_info=["code 42"], reward_basis=["ENV_ASSERTION"])],
                  evaluation="all_ignore_basis")  # fmt: skip
        assert row["score_reward"] == 0.0 and row["failure"] == "ENV_ASSERTION"

    def test_all_with_nl_ignore_basis_multiplies_nl(self):
        sims, _ = _fixture(None)
        t = task("t", communicate_info=["code 42"], reward_basis=["DB", "COMMUNICATE"])
        assert one(sims, [t], evaluation="all_ignore_basis")["score_reward"] == 1.0
        row = one(sims, [t], evaluation="all_with_nl_assertions_ignore_basis")
        assert row["score_reward"] == 0.0 and row["failure"] == "NL_ASSERTION"

    @pytest.mark.parametrize(
        "evaluation,basis,expected",
        [("env", ["DB"], 1.0), ("env", ["DB", "ENV_ASSERTION"], 0.0), ("env", ["ENV_ASSERTION"], 0.0),
         ("communicate", ["COMMUNICATE"], 1.0), ("action", ["ACTION"], 0.0), ("nl_assertions", ["NL_ASSERTION"], 0.0)],
    )  # fmt: skip
    def test_single_component_types(self, evaluation, basis, expected):
        assert one(*_fixture(basis), evaluation=evaluation)["score_reward"] == expected
        # the same through an explicit basis
        assert one(*_fixture(None), evaluation=evaluation, reward_basis=basis)["score_reward"] == expected

    def test_unjudged_nl_is_unknown_where_the_task_has_nl_assertions(self):
        # the record of a task graded on DB × COMMUNICATE under 'all' has no NL verdict (the judge did not run);
        # τ²-bench under all_with_nl_assertions_ignore_basis would run it: tauk cannot tell, so no 1.0
        t = task("t", communicate_info=["code 42"], nl_assertions=["agent was polite"],
                 reward_basis=["DB", "COMMUNICATE"])  # fmt: skip
        sims = [sim("s", "t", GOOD, db=1.0, nl=None)]
        row = one(sims, [t], evaluation="all_with_nl_assertions_ignore_basis")
        assert row["nl_assertion"] is None
        assert (row["score_reward"], row["failure"]) == (None, "no_reward_info")
        assert one(sims, [t], reward_basis=["DB", "NL_ASSERTION"])["score_reward"] is None
        # outside the product nothing changes; a task with no NL assertion still has NL 1.0 (nothing to judge)
        assert one(sims, [t], evaluation="all")["score_reward"] == 1.0
        t0 = task("t", communicate_info=["code 42"], reward_basis=["DB", "COMMUNICATE"])
        row = one(sims, [t0], evaluation="all_with_nl_assertions_ignore_basis")
        assert (row["nl_assertion"], row["score_reward"]) == (1.0, 1.0)

    def test_unjudged_nl_of_an_unknown_task_is_unknown(self):
        # the record has no NL verdict and no task definition says there is nothing to judge: unknown, as for a
        # task with NL assertions — before, 1.0 (the same records scored null with their tasks embedded and 1.0
        # without: v1.0 whissle airline under evaluation='nl_assertions' went from 50 null to 50 of 50 passed)
        sims = [sim("s", "t", GOOD, db=1.0, nl=None)]
        row = one(sims, [], evaluation="nl_assertions", reward_basis=["NL_ASSERTION"])
        assert (row["nl_assertion"], row["score_reward"]) == (None, None)
        assert one(sims, [], evaluation="all_with_nl_assertions_ignore_basis")["score_reward"] is None
        assert one(sims, [], evaluation="all", reward_basis=["DB"])["score_reward"] == 1.0  # NL not in the product
        judged = [sim("s", "t", GOOD, db=1.0, nl=1.0)]  # a recorded verdict is read whatever the task
        assert one(judged, [], evaluation="nl_assertions", reward_basis=["NL_ASSERTION"])["score_reward"] == 1.0

    @pytest.mark.parametrize(
        "evaluation,expected,failure",
        [("communicate", 0.0, "COMMUNICATE"), ("action", 0.0, "ACTION"), ("nl_assertions", 0.0, "NL_ASSERTION"),
         ("env", 1.0, None)],
    )  # fmt: skip
    def test_single_component_types_with_empty_basis(self, evaluation, expected, failure):
        # τ²-bench's one-component types return that evaluator's reward whatever the basis (only env's DB /
        # ENV_ASSERTION follow it): an empty basis must not turn a failed COMMUNICATE / ACTION / NL into 1.0
        sims, _ = _fixture(None)
        t = task("t", communicate_info=["never said"], actions=[action("g", {})], reward_basis=[])
        for kw in ({}, {"reward_basis": []}):
            row = one(sims, [t], evaluation=evaluation, **kw)
            assert (row["score_reward"], row["failure"]) == (expected, failure)

    @pytest.mark.parametrize(
        "evaluation,basis,missing",
        [("env", ["DB", "COMMUNICATE"], "COMMUNICATE"), ("communicate", ["DB", "COMMUNICATE"], "DB"),
         ("action", ["ENV_ASSERTION", "ACTION"], "ENV_ASSERTION"), ("nl_assertions", ["DB"], "DB"),
         ("all_ignore_basis", ["DB", "NL_ASSERTION"], "NL_ASSERTION"), ("all", ["DB", "BOGUS"], "BOGUS")],
    )  # fmt: skip
    def test_safety_rule(self, evaluation, basis, missing):
        with pytest.raises(tauk.EvaluationError) as e:
            score(build(*_fixture(basis)), evaluation=evaluation)
        assert missing in str(e.value) and "task t" in str(e.value) and evaluation in str(e.value)

    def test_safety_rule_names_tasks(self):
        sims = [sim("a", "t1", GOOD), sim("b", "t2", GOOD), sim("c", "t3", GOOD)]
        tasks = [task("t1", reward_basis=["DB"]), task("t2", reward_basis=["COMMUNICATE"]), task("t3")]
        with pytest.raises(tauk.EvaluationError, match=r"COMMUNICATE \(task t2, t3\)"):
            score(build(sims, tasks), evaluation="env")

    def test_safety_rule_not_triggered_by_gated_simulations(self):
        sims = [sim("a", "t", GOOD, termination_reason="max_steps"), sim("b", "u", GOOD)]
        out = score(build(sims, [task("t"), task("u", criteria=False)]), evaluation="env")
        assert out.get_column("score_reward").to_list() == [0.0, 1.0]

    def test_unknown_evaluation_type(self):
        with pytest.raises(tauk.EvaluationError, match="unknown evaluation type"):
            score(build(*_fixture(None)), evaluation="everything")

    def test_all_types_listed(self):
        assert set(EVALUATION_TYPES) == {
            "env", "communicate", "action", "nl_assertions", "all", "all_with_nl_assertions", "all_ignore_basis",
            "all_with_nl_assertions_ignore_basis",
        }  # fmt: skip


# --------------------------------------------------------------------------------------------------- re-grade
class TestRegrade:
    def test_regrade_with_other_definitions(self):
        sims = [sim("a", "t1", GOOD), sim("b", "t2", GOOD), sim("c", "gone", GOOD)]
        r = build(sims, [task("t1"), task("t2"), task("gone")])
        new = task_frames([task("t1", communicate_info=["code 42"], actions=[action("f", {"x": 1})],
                                reward_basis=["DB", "ACTION", "COMMUNICATE"]),
                           task("t2", communicate_info=["never said"])])  # fmt: skip
        with pytest.warns(RegradeWarning, match="gone"):
            out = score(r, tasks=new)
        rows = {x["simulation_id"]: x for x in out.to_dicts()}
        # t1 gained a gold action of unknown type with DB in the basis: the recorded DB verdict may no longer apply
        a = rows["a"]
        assert a["regrade_class"] == "needs_replay" and "unknown type" in a["regrade_reason"]
        assert a["score_reward"] is None and a["failure"] == "not_regraded:needs_replay"
        assert a["action"] == 1.0 and a["score_basis"] == ["DB", "ACTION", "COMMUNICATE"]  # still shown
        # t2: only COMMUNICATE changed, recomputed from the trajectory: re-graded
        b = rows["b"]
        assert b["regrade_class"] == "regradable" and b["score_reward"] == 0.0 and b["failure"] == "COMMUNICATE"
        assert rows["c"]["task_defined"] is False and rows["c"]["score_reward"] is None
        assert rows["c"]["failure"] == "task_missing" and rows["c"]["communicate"] is None
        assert rows["c"]["regrade_class"] == "not_comparable"
        assert out.get_column("db_env_nl_reverifiable").to_list() == [False] * 3
        plain = score(r)
        assert plain.get_column("db_env_nl_reverifiable").to_list() == [True] * 3
        assert plain.get_column("regrade_class").null_count() == 3
        # with DB recomputable (replay), t1 becomes re-gradable
        e = tauk.tasks.regrade_eligibility(r, new, recomputable=("COMMUNICATE", "ACTION", "DB"))
        assert dict(e.select("task_id", "regrade_class").rows())["t1"] == "regradable"

    def test_regrade_never_emits_an_ineligible_reward(self):
        """Every class but unchanged / regradable gets a null score_reward and its class, whatever the kernel says."""
        sims = [sim(f"s{i}", f"t{i}", GOOD) for i in range(4)]
        old = [task("t0"), task("t1"), task("t2", nl_assertions=["x"]), task("t3")]
        old[3]["user_scenario"] = {"instructions": "old"}
        new = [task("t0"), task("t1", reward_basis=["DB", "ENV_ASSERTION"]),
               task("t2", nl_assertions=["y"], reward_basis=["DB", "NL_ASSERTION"]), task("t3")]  # fmt: skip
        new[1]["evaluation_criteria"]["env_assertions"] = [{"func_name": "f", "arguments": {}}]
        new[3]["user_scenario"] = {"instructions": "new"}
        with pytest.warns(RegradeWarning, match="needs_judge 1"):
            out = score(build(sims, old), tasks=task_frames(new))
        got = {r["task_id"]: (r["regrade_class"], r["score_reward"], r["failure"]) for r in out.to_dicts()}
        assert got == {"t0": ("unchanged", 1.0, None),
                       "t1": ("needs_replay", None, "not_regraded:needs_replay"),
                       "t2": ("needs_judge", None, "not_regraded:needs_judge"),
                       "t3": ("not_comparable", None, "not_regraded:not_comparable")}  # fmt: skip

    def test_regrade_from_file(self, tmp_path):
        import json

        p = tmp_path / "tasks.json"
        p.write_text(json.dumps([task("t", communicate_info=["absent"])]))
        out = score(build([sim("s", "t", GOOD)], [task("t")]), tasks=str(p))
        assert out.row(0, named=True)["failure"] == "COMMUNICATE"

    def test_regrade_bare_tasks_frame_without_actions(self):
        new, _ = task_frames([task("t", actions=[action("f", {"x": 1})], reward_basis=["ACTION"])])
        out = score(build([sim("s", "t", GOOD)], [task("t")]), tasks=new)
        assert out.row(0, named=True)["action"] is None  # cannot be told without the gold actions
