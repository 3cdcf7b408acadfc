"""The documentation site, built once per test run (``python -m sphinx -W``) into a temporary
folder, whichever pytest-xdist worker asks first; the others wait for it and reuse it."""

from __future__ import annotations

from dataclasses import dataclass
import fcntl
import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Site:
    html: Path          # the built site's folder
    returncode: int
    warnings: list[str]
    seconds: float


def _run_id() -> str:
    # the same in every worker of one pytest-xdist run; a lone process gets its own
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"


def built_site() -> Site:
    base = Path(tempfile.gettempdir()) / f"attnv-site-{os.getuid()}-{_run_id()}"
    base.mkdir(exist_ok=True, mode=0o700)
    record = base / "build.json"
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.is_file():
            start = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                 "-d", str(base / "doctrees"), "docs", str(base / "html")],
                cwd=ROOT, capture_output=True, text=True, timeout=900)
            warnings = [line for line in (out.stderr + out.stdout).splitlines()
                        if "WARNING" in line or "ERROR" in line]
            record.write_text(json.dumps({"returncode": out.returncode, "warnings": warnings,
                                          "seconds": time.perf_counter() - start,
                                          "tail": out.stderr[-3000:]}))
        data = json.loads(record.read_text())
    return Site(base / "html", data["returncode"], data["warnings"] or
                ([data["tail"]] if data["returncode"] else []), data["seconds"])
