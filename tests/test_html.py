"""``tauk.html``: the self-contained report page and its viewer of the failed simulations.

What is checked: untrusted text (a message, a tool call, an agent label, a termination reason, a task id holding
``<script>`` / ``onerror=``) stays text; the page refers to nothing outside itself (no ``http(s)://``, no ``src=``,
every ``href`` an in-page anchor, every ``url()`` an in-page id, a CSP allowing only the page's own script); the
filters keep exactly the simulations a plain-Python reading of the trials keeps; the caps say what they left out;
the same inputs give the same bytes; the command line (``tauk html``, ``tauk summary --failed/--task/--termination``).
The browser test opens the page from ``file://`` in headless Chromium: no console error, the injected script never
ran, the viewer expands a failed simulation.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

import tauk
from tauk.cli import main
from tauk.conventions import is_success
from tauk.errors import TaukError
from tauk.html import Page, select_trials, viewer_html, write_report

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SAMPLE = DATA / "baseline_airline.json"
ARTIFACTS = ROOT / "tests" / "artifacts"
EVIL = "<script>window.__tauk_pwned = 1;</script><img src=x onerror=\"window.__tauk_pwned = 2\">"


class _Scan(HTMLParser):
    """Every start tag with its attributes, and the text of every script."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def scan(text: str) -> _Scan:
    s = _Scan()
    s.feed(text)
    s.close()
    return s


def external_references(text: str, *, raw: bool = True) -> list[str]:
    """What in the page could make a browser fetch something: addresses, src attributes, hrefs and url()s that
    are not in-page anchors / ids or data: URIs, event-handler attributes, more than the page's own script.

    ``raw``: scan the bytes too (``http://``, ``https://``, ``src=``, ``url(``, ``@import`` anywhere) — for pages
    whose data hold none of these as text (a page showing ``<img src=…>`` as escaped text has ``src=`` in it)."""
    found = []
    if raw:
        found += [m.group(0) for m in re.finditer(r"https?://\S{0,40}", text)]
        found += [m.group(0) for m in re.finditer(r"\bsrc\s*=", text)]
        found += [m.group(0) for m in re.finditer(r"url\((?!#)[^)]*\)", text)]
        found += [m.group(0) for m in re.finditer(r"@import", text)]
    s = scan(text)
    for tag, attrs in s.tags:
        for name, value in attrs.items():
            if name in ("href", "xlink:href") and not (value or "").startswith(("#", "data:image/")):
                found.append(f"<{tag} {name}={value!r}>")
            if name.startswith("on"):
                found.append(f"<{tag} {name}=…>")
            if name == "src":
                found.append(f"<{tag} src=…>")
    if len(s.scripts) != 1:
        found.append(f"{len(s.scripts)} scripts")
    return found


def evil_file(tmp_path: Path) -> Path:
    """The baseline airline sample with untrusted text in a failed simulation: message content, a tool call's name
    and arguments, the termination reason and the task id."""
    d = json.loads(SAMPLE.read_text())
    sim = next(s for s in d["simulations"] if not is_success(s["reward_info"]["reward"]))
    sim["messages"][1]["content"] = "please " + EVIL
    for m in sim["messages"]:
        if m.get("tool_calls"):
            m["tool_calls"][0]["name"] = "lookup" + EVIL
            m["tool_calls"][0]["arguments"] = {"q": EVIL}
            break
    sim["termination_reason"] = "weird" + EVIL
    task = next(t for t in d["tasks"] if t["id"] == sim["task_id"])
    other = [s for s in d["simulations"] if s["task_id"] == sim["task_id"]]
    new_id = "t" + EVIL
    task["id"] = new_id
    for s in other:
        s["task_id"] = new_id
    out = tmp_path / "evil_airline.json"
    out.write_text(json.dumps(d))
    return out


pytestmark = pytest.mark.filterwarnings("ignore:.*unknown termination reasons kept:tauk.LoadWarning")


# ---- escaping ------------------------------------------------------------------------------------------------
def test_untrusted_text_is_inert(tmp_path):
    res = tauk.load(evil_file(tmp_path), agent="agent" + EVIL)
    s = tauk.stats.summarize(res, by="agent", ci=None)
    fig = tauk.plot.pass_k_curve(s)
    page = write_report(tmp_path / "evil.html", res, summary=s, figures=[("caption" + EVIL, fig)],
                        notes=["note" + EVIL], failed=None).read_text()
    assert EVIL not in page
    assert "window.__tauk_pwned" in page  # the text is there, as text
    assert page.count("&lt;script&gt;window.__tauk_pwned") >= 5  # message, call name, args, reason, task, agent, note
    assert external_references(page, raw=False) == []
    parsed = scan(page)
    assert not any(tag == "img" for tag, _ in parsed.tags)


def test_page_escapes_titles_tables_and_notes():
    import polars as pl

    p = Page("t" + EVIL, meta=["m" + EVIL])
    p.add_section("s" + EVIL, text="x" + EVIL, table=pl.DataFrame({"c" + EVIL: ["v" + EVIL], "n": [1.5]}),
                  notes=["n" + EVIL])
    text = p.render()
    assert EVIL not in text and external_references(text, raw=False) == []
    e = "&lt;script&gt;window.__tauk_pwned"
    for piece in ("<title>t", "<h1>t", "'tauk-meta'>m", "<h2>s", "<p>x", "<th>c", "<td>v", "<li>n"):
        assert piece + e in text, piece
    with pytest.raises(TaukError, match="a table is"):
        Page("x").add_section("bad", table=[1, 2])


# ---- no external reference -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample_page(tmp_path_factory):
    res = tauk.load(DATA)
    s = tauk.stats.summarize(res, by=("agent", "domain"), resamples=999)
    path = write_report(tmp_path_factory.mktemp("html") / "report.html", res, summary=s,
                        figures=[("pass^k", tauk.plot.pass_k_curve(s)),
                                 ("success", tauk.plot.success_heatmap(res.trials))])  # fmt: skip
    return res, path


def test_sample_page_has_no_external_reference(sample_page):
    res, path = sample_page
    text = path.read_text()
    assert external_references(text) == []
    assert "http" not in text.replace("http-equiv", "")  # the CSP's meta tag is the only "http" in the page
    csp = re.search(r"Content-Security-Policy' content=\"([^\"]+)\"", text).group(1)
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    assert text.count("<svg") == 2 and len(set(re.findall(r'\bid="([^"]+)"', text))) == len(
        re.findall(r'\bid="([^"]+)"', text))  # two inlined figures, no id shared between them


def test_sample_page_size(sample_page, capsys):
    res, path = sample_page
    size = path.stat().st_size
    n_failed = select_trials(res.trials, failed=True).height
    with capsys.disabled():
        print(f"\n[tauk.html] sample data/ page: {size / 1024:.0f} KiB, {min(n_failed, 200)} of {n_failed} failed "
              "simulations shown (defaults), two figures")
    assert size < 5 * 2**20  # a page one can send: the caps hold it under 5 MiB


# ---- filters -------------------------------------------------------------------------------------------------
def _expected(trials, failed=None, task=None, termination=None):
    out = []
    for r in trials.iter_rows(named=True):
        if failed is not None and is_success(r["reward"]) == failed:
            continue
        if task is not None and r["task_id"] != task:
            continue
        if termination is not None and r["termination_reason"] != termination:
            continue
        out.append(r["simulation_id"])
    return sorted(out)


@pytest.mark.parametrize("kw", [dict(failed=True), dict(failed=False, task="3"), dict(failed=None, task="3"),
                                dict(failed=True, termination="too_many_errors"),
                                dict(failed=None, termination="max_steps", task="0")])  # fmt: skip
def test_viewer_filters(kw):
    res = tauk.load(SAMPLE)
    markup = viewer_html(res, max_simulations=None, deviations=False, **kw)
    shown = sorted(re.findall(r"simulation ([0-9a-f-]{36}) ·", markup))
    assert shown == _expected(res.trials, **kw)
    assert f"{len(shown)} simulations match" in markup


def test_viewer_caps_say_what_they_leave_out():
    res = tauk.load(SAMPLE)
    n = select_trials(res.trials, failed=True).height
    markup = viewer_html(res, max_simulations=3, max_messages=4, max_chars=200, deviations=False)
    assert markup.count("<details class='tauk-sim'") == 3
    assert f"{n} simulations match" in markup and "the first 3 are shown (max_simulations=3)" in markup
    assert re.search(r"… \d+ message\(s\), #2–#\d+, not shown \(max_messages=4: the first 2, the last 2 are shown\)",
                     markup)  # fmt: skip
    assert "more characters)" in viewer_html(res, max_simulations=1, max_chars=20)
    with pytest.raises(TaukError, match="max_messages"):
        viewer_html(res, max_messages=0)


def test_message_cap_keeps_the_first_decisive_deviation():
    import polars as pl

    res = tauk.load(DATA)
    td = tauk.scoring.trial_deviations(res)
    case = (td.filter(pl.col("first_message_idx").is_not_null() & (pl.col("first_message_idx") >= 4)
                      & (pl.col("n_messages") - pl.col("first_message_idx") >= 3))
            .sort("first_message_idx", descending=True).row(0, named=True))  # fmt: skip
    one = res.filter(run_id=case["run_id"])
    markup = viewer_html(one, task=case["task_id"], failed=None, max_messages=6, max_simulations=None)
    block = next(b for b in markup.split("<details class='tauk-sim'")[1:] if case["simulation_id"] in b)
    assert re.search(rf"<span class='tauk-label'>\w+ #{case['first_message_idx']}</span>", block)
    assert "2 around the first decisive deviation are shown" in block
    assert "first decisive deviation" in block.split("</summary>")[0]


def test_viewer_names_why_it_failed():
    res = tauk.load(SAMPLE)
    markup = viewer_html(res, max_simulations=None)
    blocks = markup.split("<details class='tauk-sim'")[1:]
    assert blocks and all("why it failed" in b for b in blocks)
    # the first decisive deviation, where tauk.scoring finds one, is named in the block's one-line summary
    td = tauk.scoring.trial_deviations(res).filter(~tauk.scoring.trial_deviations(res)["success"])
    with_dev = td.filter(td["deviation"].is_not_null()).height
    assert markup.count("first decisive deviation:") == with_dev


def test_bad_filters_name_the_choices():
    trials = tauk.load(SAMPLE).trials
    with pytest.raises(TaukError, match="task 999 not found"):
        select_trials(trials, task="999")
    with pytest.raises(TaukError, match="choose from .*max_steps"):
        select_trials(trials, termination="maxsteps")
    assert select_trials(trials, termination="timeout").height == 0  # known reason, none recorded


def test_same_inputs_same_bytes(tmp_path):
    res = tauk.load(SAMPLE)
    s = tauk.stats.summarize(res, by="agent", ci=None)
    a = write_report(tmp_path / "a.html", res, summary=s, figures=[tauk.plot.pass_k_curve(s)], task="3")
    b = write_report(tmp_path / "b.html", res, summary=s, figures=[tauk.plot.pass_k_curve(s)], task="3")
    assert a.read_bytes() == b.read_bytes()


# ---- command line --------------------------------------------------------------------------------------------
def test_cli_html(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["html", str(SAMPLE), "--out", str(out), "--termination", "max_steps", "--ci", "0", "--quiet"]) == 0
    assert "tauk html: wrote" in capsys.readouterr().out
    text = out.read_text()
    assert external_references(text) == []
    shown = sorted(re.findall(r"simulation ([0-9a-f-]{36}) ·", text))
    assert shown == _expected(tauk.load(SAMPLE).trials, failed=True, termination="max_steps")
    assert main(["html", str(SAMPLE), "--out", str(out), "--termination", "nope", "--quiet"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cli_summary_filters(capsys):
    assert main(["summary", str(SAMPLE), "--failed", "--task", "3,4", "--ci", "0", "--quiet"]) == 0
    out = capsys.readouterr().out
    n = len(_expected(tauk.load(SAMPLE).trials, failed=True, task="3")) + len(
        _expected(tauk.load(SAMPLE).trials, failed=True, task="4"))
    assert "(failed simulations only; tasks 3, 4)" in out and f"{n} of 100 simulations" in out
    assert main(["summary", str(SAMPLE), "--termination", "max_steps", "--format", "json", "--ci", "0",
                 "--quiet"]) == 0  # fmt: skip
    recs = json.loads(capsys.readouterr().out)
    assert recs[0]["selection"] == "termination max_steps"
    assert recs[0]["n_simulations"] == len(_expected(tauk.load(SAMPLE).trials, termination="max_steps"))
    assert main(["summary", str(SAMPLE), "--termination", "timeout", "--quiet"]) == 2  # nothing left: an error
    assert "no simulation left" in capsys.readouterr().err


# ---- a real browser ------------------------------------------------------------------------------------------
def _require() -> bool:
    return os.environ.get("TAUK_REQUIRE_BROWSER", "") not in ("", "0", "false")


@pytest.mark.browser
def test_page_in_a_real_browser(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    why = None
    if not chromium or not driver_path:
        why = "Debian's chromium and chromium-driver"
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        why = why or "selenium"
    if why:
        if _require():
            pytest.fail(f"TAUK_REQUIRE_BROWSER=1 but the browser test needs {why}")
        pytest.skip(f"the browser test needs {why}")

    res = tauk.load(evil_file(tmp_path))
    s = tauk.stats.summarize(res, by="agent", resamples=999)
    path = write_report(tmp_path / "page.html", res, summary=s, figures=[("pass^k", tauk.plot.pass_k_curve(s))])
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1300,1400",
                 f"--user-data-dir={tmp_path / 'chrome'}"):  # fmt: skip
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        driver.set_page_load_timeout(30)
        driver.get(path.as_uri())
        WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        assert driver.title == "tauk report"
        svg = driver.find_element(By.CSS_SELECTOR, "svg.tauk-svg")
        assert svg.size["width"] > 100 and svg.size["height"] > 50  # the inlined figure is drawn
        assert driver.execute_script("return window.__tauk_pwned === undefined")  # the injected script never ran

        blocks = driver.find_elements(By.CSS_SELECTOR, "details.tauk-sim")
        assert blocks and not any(b.get_attribute("open") for b in blocks)
        why_box = blocks[0].find_element(By.CSS_SELECTOR, ".tauk-why")
        assert not why_box.is_displayed()
        summary = blocks[0].find_element(By.TAG_NAME, "summary")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", summary)
        summary.click()
        WebDriverWait(driver, 10).until(lambda d: why_box.is_displayed())
        assert "why it failed" in why_box.text
        assert blocks[0].find_element(By.CSS_SELECTOR, ".tauk-msg").is_displayed()
        driver.save_screenshot(str(ARTIFACTS / "browser_html_viewer.png"))

        driver.find_element(By.ID, "tauk-expand").click()  # the page's own script runs (the CSP allows it)
        WebDriverWait(driver, 10).until(lambda d: all(b.get_attribute("open") for b in blocks))
        # the untrusted text is shown as text
        evil = [b for b in blocks if "window.__tauk_pwned" in b.text]
        assert evil and "<script>" in evil[0].text

        logs = [e for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")]
        assert logs == [], logs
    except BaseException:
        try:
            driver.save_screenshot(str(ARTIFACTS / "browser_html_failure.png"))
        except Exception:
            pass
        raise
    finally:
        driver.quit()


def test_no_mutation_of_inputs():
    res = tauk.load(SAMPLE)
    before = copy.deepcopy(res.trials.to_dicts()[:5])
    viewer_html(res, max_simulations=5)
    assert res.trials.to_dicts()[:5] == before


def test_cli_report_html(tmp_path, capsys):
    """tauk report --html: the report's tables and every figure it drew in one page with no outside reference, and
    the viewer showing exactly the simulations the filter asks for."""
    one = SAMPLE / "baseline_airline.json" if SAMPLE.is_dir() else SAMPLE
    out = tmp_path / "rep"
    assert main(["report", str(one), "--out", str(out), "--html", "--termination", "max_steps", "--k", "1",
                 "--formats", "png", "--quiet"]) in (0, 1)  # fmt: skip
    capsys.readouterr()
    text = (out / "report.html").read_text()
    assert external_references(text) == []
    figures = list((out / "figures").glob("*.png"))
    assert figures and text.count("<svg") >= len(figures)
    assert text.count("<table") >= len(list((out / "tables").glob("*.md")))  # every table the report wrote
    shown = sorted(re.findall(r"simulation ([0-9a-f-]{36}) ·", text))
    assert shown == _expected(tauk.load(one).trials, failed=True, termination="max_steps")


BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: the text after it, to the end of the line, is drawn reversed


def test_bidi_overrides_in_untrusted_text_are_shown_not_obeyed(tmp_path):
    """A task id, an agent label or a message holding a bidi override cannot reverse the rest of a line (the viewer's
    summary line "task … · trial … · reward …", a note, a header): every HTML renderer shows it as ``\\u202e``."""
    import polars as pl

    from tauk.table import SummaryTable
    from tauk.widgets import render_trajectory

    d = json.loads(SAMPLE.read_text())
    sim = next(s for s in d["simulations"] if not is_success(s["reward_info"]["reward"]))
    sim["messages"][1]["content"] = f"hello {BIDI}1 drawer"
    task = next(t for t in d["tasks"] if t["id"] == sim["task_id"])
    new_id = f"t{BIDI}7"
    for s in [s for s in d["simulations"] if s["task_id"] == task["id"]]:
        s["task_id"] = new_id
    task["id"] = new_id
    f = tmp_path / "bidi_airline.json"
    f.write_text(json.dumps(d))
    res = tauk.load(f, agent=f"agent{BIDI}x")
    page = write_report(tmp_path / "bidi.html", res, title=f"t{BIDI}", failed=True).read_text()
    table = SummaryTable.build(f"t{BIDI}", ["agent"], [[f"a{BIDI}b"]], notes=[f"n{BIDI}o"])._repr_html_()
    one = res.trials.filter(pl.col("task_id") == new_id).row(0, named=True)
    traj = render_trajectory(res.messages.filter(pl.col("simulation_id") == one["simulation_id"]), trial=one)
    for name, text in (("page", page), ("table", table), ("trajectory", traj)):
        assert BIDI not in text, name
        assert "\\u202e" in text, name  # shown, not dropped
    assert "task t\\u202e7 · trial" in page and "hello \\u202e1 drawer" in page
