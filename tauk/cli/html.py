"""``tauk html``: one self-contained HTML page to send — the summary table, the pass^k figure and a viewer of the
failed simulations."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from tauk.cli._common import (
    add_ci_args,
    add_infra_arg,
    add_load_args,
    ci_level,
    load_inputs,
    parse_ks,
    safe_lines,
    split_list,
)
from tauk.cli._select import add_selection_args, selection_of
from tauk.errors import TaukError


def cmd_html(args: argparse.Namespace) -> int:
    from pathlib import Path

    out = Path(args.out)
    if out.is_dir():
        raise TaukError(f"--out {args.out} is a folder; give the HTML file to write, e.g. {out / 'report.html'}")
    ci = ci_level(args)
    res = load_inputs(args)
    sel = selection_of(args)

    import tauk.html as th
    from tauk.plot import pass_k_curve
    from tauk.stats import summarize

    by = tuple(split_list(args.by) or ("agent", "domain"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = summarize(res, by=by, k=parse_ks(args.k), infra=args.infra, ci=ci, method=args.method,
                      resamples=args.resamples, seed=args.seed)  # fmt: skip
        figures = []
        try:
            figures.append(("pass^k against k per group (" + ", ".join(by) + ")", pass_k_curve(s)))
        except TaukError as exc:
            sys.stderr.write(f"tauk: warning: no pass^k figure: {safe_lines(exc)}\n")
        label = th.selection_label(**sel) or "every simulation"
        notes = [f"The summary and the figure cover every loaded simulation; the viewer shows {label}."]
        caps = {name: (default if given is None else (None if given == 0 else given))
                for name, given, default in (("max_simulations", args.max_simulations, th.MAX_SIMULATIONS),
                                             ("max_messages", args.max_messages, th.MAX_MESSAGES),
                                             ("max_chars", args.max_chars, th.MAX_CHARS))}  # fmt: skip
        path = th.write_report(out, res, title=args.title, summary=s, figures=figures, notes=notes, **sel, **caps)
    seen = set()
    for w in caught:  # one line each, not Python's warning format
        text = str(w.message).splitlines()[0] if str(w.message) else type(w.message).__name__
        if text not in seen and not issubclass(w.category, DeprecationWarning):
            seen.add(text)
            sys.stderr.write(f"tauk: warning: {safe_lines(text)}\n")
    size = path.stat().st_size
    print(f"tauk html: wrote {path} ({size / 1024:.0f} KiB)")
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk html PATH... --out FILE [--failed|--passed|--all] [--task IDS] [--termination REASONS]``."""
    p = sub.add_parser(
        "html",
        help="write one self-contained HTML page: summary, pass^k figure, viewer of the failed simulations",
        description="One HTML file that opens from disk (no server, no network): the summary table, the pass^k "
                    "figure (inline SVG) and a viewer of the chosen simulations (by default the failed ones), each "
                    "with its task, termination, reward, why it failed and its conversation. Every text is escaped.",
    )  # fmt: skip
    add_load_args(p)
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    add_selection_args(p, everything=True)
    p.add_argument("--by", default=None, help="summary groups, comma-separated trial columns (default: agent,domain)")
    p.add_argument("--k", default=None, help="the k of pass^k, e.g. 1,2,4 or 1-4 (default: 1 … trials per task)")
    add_infra_arg(p)
    add_ci_args(p)
    p.add_argument("--title", default="tauk report", help="the page's title")
    for flag, what, const in (("--max-simulations", "simulations shown", "MAX_SIMULATIONS"),
                              ("--max-messages", "messages shown per simulation (the first and the last ones)",
                               "MAX_MESSAGES"),
                              ("--max-chars", "characters of one text shown", "MAX_CHARS")):  # fmt: skip
        p.add_argument(flag, type=int, default=None, metavar="N",
                       help=f"{what} at most; 0: no cap (default: tauk.html.{const})")  # fmt: skip
    p.set_defaults(func=cmd_html)
    return p
