"""Pages as a person sees them: Debian's chromium, headless, driven by selenium through
chromium-driver, on pages served from 127.0.0.1 (the browser is told that every other host
does not resolve, so no page can load anything from the network).

``problems(driver, url)`` lists what is wrong with a page: console errors, figures that did
not load, mathematics that KaTeX did not render (a raw ``$…$``, ``\\(…\\)`` or ``\\[…\\]`` left in
the text, or a KaTeX error), a table wider than the window."""

from __future__ import annotations

from collections.abc import Iterator
import contextlib
import functools
import http.server
import os
from pathlib import Path
import shutil
import threading
import time

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "results" / "browser"
"""Screenshots at each width (CI keeps results/ as its artefacts)."""
WIDTHS = (1280, 800)
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver", "chromium-driver")


def _missing(reason: str):
    """Skip, saying why; fail instead where CI installed a browser (ATTNV_REQUIRE_BROWSER)."""
    if os.environ.get("ATTNV_REQUIRE_BROWSER") == "1":
        pytest.fail(f"ATTNV_REQUIRE_BROWSER is set but {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def chromium(tmp: Path) -> Iterator[object]:
    """A headless chromium under selenium; skips (saying why) where there is none."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed (pip install -e '.[test]')")
    browser = next(filter(None, map(shutil.which, BROWSERS)), None)
    driver_path = next(filter(None, map(shutil.which, DRIVERS)), None)
    if browser is None or driver_path is None:
        _missing("no chromium and chromium-driver on PATH (as root: apt-get install -y chromium "
                 "chromium-driver)")
    os.environ["SE_OFFLINE"] = "true"        # selenium-manager never downloads anything
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking", "--disable-sync",
                "--disable-component-update", "--disable-default-apps", "--hide-scrollbars",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                f"--user-data-dir={tmp / 'chromium-profile'}", "--window-size=1280,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """``folder`` over HTTP on 127.0.0.1 (a free port); its base URL."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


_RAW_MATH = r"""
const skip = new Set(["SCRIPT", "STYLE", "PRE", "CODE", "TEXTAREA", "NOSCRIPT"]);
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {acceptNode(n) {
  for (let e = n.parentElement; e; e = e.parentElement) {
    if (skip.has(e.tagName) || e.classList.contains("katex")) return NodeFilter.FILTER_REJECT;
  }
  return NodeFilter.FILTER_ACCEPT;
}});
let text = "";
for (let n = walker.nextNode(); n; n = walker.nextNode()) text += n.textContent + "\n";
const raw = text.match(/\$\$[^$]+\$\$|\$[^$\s][^$\n]*\$|\\\([^\n]*?\\\)|\\\[[\s\S]*?\\\]/g) || [];
return {raw: raw.slice(0, 5),
        errors: Array.from(document.querySelectorAll(".katex-error")).map(e => e.textContent).slice(0, 5),
        rendered: document.querySelectorAll(".katex").length};
"""

_FIGURES = r"""
return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))
  .map(i => (i.getAttribute("src") || "").slice(0, 120));
"""

_WIDE_TABLES = r"""
const width = document.documentElement.clientWidth;
return Array.from(document.querySelectorAll("table")).filter(t => {
  // a table that scrolls inside a narrower box is readable; one wider than the page is not
  for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (["auto", "scroll"].includes(s.overflowX) && e.getBoundingClientRect().right <= width + 1)
      return false;
  }
  return t.getBoundingClientRect().right > width + 1;
}).map(t => t.innerText.slice(0, 60));
"""


def _settled(driver, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if driver.execute_script("return document.readyState") == "complete":
            break
        time.sleep(0.1)
    time.sleep(0.3)          # deferred scripts (KaTeX's auto-render) run by now


def problems(driver, url: str, name: str, math: bool = True) -> list[str]:
    """What is wrong with the page at ``url``, at each width of ``WIDTHS`` (a screenshot of
    each saved as results/browser/NAME-WIDTH.png)."""
    found: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.get_log("browser")                        # only this page's messages below
    for width in WIDTHS:
        driver.set_window_size(width, 900)
        driver.get(url)
        _settled(driver)
        driver.save_screenshot(str(SHOTS / f"{name}-{width}.png"))
        found += [f"{width}px: console {e['level']}: {e['message'][:200]}"
                  for e in driver.get_log("browser") if e["level"] == "SEVERE"
                  and "/favicon.ico " not in e["message"]]    # the browser's request, not the page's
        found += [f"{width}px: figure did not load: {src}"
                  for src in driver.execute_script(_FIGURES)]
        found += [f"{width}px: table wider than the window: {t!r}"
                  for t in driver.execute_script(_WIDE_TABLES)]
        m = driver.execute_script(_RAW_MATH)
        found += [f"{width}px: mathematics not rendered: {r!r}" for r in m["raw"]]
        found += [f"{width}px: KaTeX error: {e!r}" for e in m["errors"]]
        if math and not m["rendered"]:
            found.append(f"{width}px: no formula rendered by KaTeX")
    return found


def text_of(driver, element_id: str) -> str:
    from selenium.webdriver.common.by import By
    return driver.find_element(By.ID, element_id).text.strip()
