"""The tree is clean under the committed ruff configuration (pyproject.toml [tool.ruff])."""

from __future__ import annotations

import importlib.util
from pathlib import Path
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                    reason="ruff is not installed (pip install -e '.[test]' installs it)")
def test_ruff_check_is_clean():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-fix", "--no-cache",
                          "--output-format", "concise", "."],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    # exit 1: findings; anything else (2: bad configuration or usage) is an error of its own
    assert out.returncode in (0, 1), f"ruff failed to run (exit {out.returncode}):\n{out.stderr}"
    findings = [line for line in out.stdout.splitlines() if line.strip() and ":" in line
                and not line.startswith(("Found ", "["))]
    if out.returncode != 0:
        pytest.fail(f"ruff check . reports {len(findings)} finding(s) under the configuration in "
                    "pyproject.toml (`ruff check --fix` applies the safe fixes):\n"
                    + "\n".join(findings) + ("\n" + out.stderr if out.stderr.strip() else ""),
                    pytrace=False)
