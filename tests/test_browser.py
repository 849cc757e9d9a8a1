"""One real-browser test: JupyterLab on loopback, headless Chromium, the explorer notebook, a widget change that
changes the figure.

Needs Debian's ``chromium`` + ``chromium-driver``, ``selenium`` and ``jupyterlab``; skips without them unless
``TAUK_REQUIRE_BROWSER=1`` (set by ``.ci/run``), which turns a missing piece into a failure. Selenium is given the
chromedriver path, so Selenium Manager never downloads anything. Every wait is bounded (≤ 90 s in all); the server
is shut down (kernels too) in a ``finally`` block. A screenshot lands in ``tests/artifacts/`` (git-ignored).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "02_explore_with_widgets.ipynb"
ARTIFACTS = ROOT / "tests" / "artifacts"
TOTAL_BUDGET = 240.0  # generous: the suite runs on two workers (pytest-xdist) sharing 2 cores

pytestmark = pytest.mark.browser


def _require() -> bool:
    return os.environ.get("TAUK_REQUIRE_BROWSER", "") not in ("", "0", "false")


def _missing_or_skip(what: str) -> None:
    msg = f"browser test needs {what}"
    if _require():
        pytest.fail("TAUK_REQUIRE_BROWSER=1 but " + msg)
    pytest.skip(msg)


def _which(*names: str) -> str | None:
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def wait_for(self, what: str, fn, limit: float | None = None, poll: float = 0.25):
        """Poll ``fn`` until it returns a truthy value; fail after ``limit`` (capped by the overall budget)."""
        end = time.monotonic() + min(self.left(), limit if limit is not None else self.left())
        last_exc: BaseException | None = None
        while True:
            try:
                v = fn()
                if v:
                    return v
            except RuntimeError:
                raise
            except Exception as exc:  # the page or the server may not be ready yet
                last_exc = exc
            if time.monotonic() >= end:
                raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last_exc!r})" if last_exc else ""))
            time.sleep(poll)


def _explorer_notebook(dest: Path) -> None:
    """A copy of the explorer notebook: outputs cleared, the sample path made absolute, cut after the explorer."""
    nb = json.loads(NOTEBOOK.read_text())
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            src = src.replace('Path("../data")', f"Path({str(ROOT / 'data')!r})")
            cell = {**cell, "source": src, "outputs": [], "execution_count": None}
        cells.append(cell)
        if cell["cell_type"] == "code" and "widgets.explorer(" in cell["source"]:
            break
    nb["cells"] = cells
    nb.get("metadata", {}).pop("widgets", None)
    dest.write_text(json.dumps(nb))


def _get(url: str, timeout: float = 2.0) -> int:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - loopback only
        return r.status


def test_explorer_in_jupyterlab(tmp_path: Path):
    chromium = _which("chromium", "chromium-browser")
    driver_path = _which("chromedriver")
    if not chromium or not driver_path:
        _missing_or_skip("Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys
    except ImportError:
        _missing_or_skip("selenium (pip install selenium)")
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        _missing_or_skip("jupyterlab")

    deadline = Deadline(TOTAL_BUDGET)
    work = tmp_path / "lab"
    work.mkdir()
    _explorer_notebook(work / "explorer.ipynb")
    cfg = tmp_path / "jupyter-config"
    cfg.mkdir()
    lab_cfg = json.dumps({"LabApp": {
        "news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate", "extension_manager": "readonly",
    }})
    for name in ("jupyter_server_config.json", "jupyter_lab_config.json"):  # no news, update or PyPI look-ups
        (cfg / name).write_text(lab_cfg)
    port = _free_port()
    token = secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(cfg),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "MPLBACKEND": "Agg",
    }
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
        "--ServerApp.allow_remote_access=False", "--expose-app-in-browser", "--allow-root",
    ]
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    driver = None
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        def server_up() -> bool:
            if server.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with code {server.returncode}")
            return _get(f"{base}/api/status?token={token}") == 200

        deadline.wait_for("the Jupyter server", server_up, limit=90)
        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--window-size=1400,1400", f"--user-data-dir={tmp_path / 'chrome'}"):
            opts.add_argument(flag)
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
        driver.set_page_load_timeout(max(5.0, deadline.left()))
        driver.get(f"{base}/lab/tree/explorer.ipynb?token={token}")

        # the notebook panel and its kernel are ready, then run every cell through JupyterLab's own command
        deadline.wait_for("JupyterLab to open the notebook", lambda: driver.execute_script(
            "const app = window.jupyterapp; if (!app || !app.shell) return false;"
            "const w = app.shell.currentWidget; return !!(w && w.sessionContext && w.sessionContext.session"
            " && w.sessionContext.session.kernel && w.sessionContext.session.kernel.connectionStatus === 'connected');"
        ), limit=90)
        driver.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells');")

        def figure_src():
            imgs = driver.find_elements(By.CSS_SELECTOR, ".widget-output img, .jupyter-widgets-output-area img")
            srcs = [i.get_attribute("src") for i in imgs]
            srcs = [s for s in srcs if s and s.startswith("data:image/png")]
            return srcs[0] if srcs else None

        before = deadline.wait_for("the explorer's figure", figure_src, limit=90)
        table_before = driver.find_element(By.CSS_SELECTOR, ".tauk-summary").text
        assert "pass^1" in table_before
        driver.save_screenshot(str(ARTIFACTS / "browser_explorer_before.png"))

        # move the k slider one step with the keyboard, as a user would
        handle = driver.find_element(By.CSS_SELECTOR, ".widget-slider .noUi-handle")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", handle)
        handle.click()
        handle.send_keys(Keys.ARROW_RIGHT)

        after = deadline.wait_for("the figure to change", lambda: (s := figure_src()) and s != before and s, limit=60)
        assert after != before
        deadline.wait_for("the table to show pass^2",
                          lambda: "pass^2" in driver.find_element(By.CSS_SELECTOR, ".tauk-summary").text, limit=30)
        driver.execute_script(
            "const i = document.querySelector('.widget-output img, .jupyter-widgets-output-area img');"
            "if (i) i.scrollIntoView({block: 'end'});"
        )
        driver.save_screenshot(str(ARTIFACTS / "browser_explorer.png"))
    except BaseException:
        if driver is not None:
            try:
                driver.save_screenshot(str(ARTIFACTS / "browser_explorer_failure.png"))
            except Exception:
                pass
        log.flush()
        sys.stderr.write((tmp_path / "server.log").read_text(errors="replace")[-4000:])
        raise
    finally:
        if driver is not None:
            try:
                driver.quit()
            except Exception:
                pass
        _stop_server(server, base, token)
        log.close()


def _api(base: str, token: str, path: str, method: str = "GET", timeout: float = 5.0) -> bytes:
    req = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 - loopback only
        return r.read()


def _stop_server(server: subprocess.Popen, base: str, token: str) -> None:
    """Stop the kernels and ask the server to shut down, then terminate / kill its process group.

    Kernels run in their own session (jupyter_client starts them so), hence the explicit DELETEs first."""
    if server.poll() is None:
        try:
            for k in json.loads(_api(base, token, "/api/kernels")):
                _api(base, token, f"/api/kernels/{k['id']}", method="DELETE", timeout=10)
        except Exception:
            pass
        try:
            _api(base, token, "/api/shutdown", method="POST")
        except Exception:
            pass
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(server.pid, sig)  # whatever is left of the server's own process group
        except ProcessLookupError:
            break
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue
