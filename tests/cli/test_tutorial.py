"""docs/tutorial.md is executed: every ```python block (in order, in one namespace) and every
command of its ```bash blocks (``python`` → this interpreter), in a temporary folder outside the
package, as a reader following it would. A failure names the tutorial's line."""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import re
import shlex
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    language: str
    line: int                  # tutorial line of the block's first code line
    code: str


def parse(text: str) -> list[Block]:
    """The fenced blocks of ``text`` in order; an unclosed fence is an error."""
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
            if end is None:
                raise ValueError(f"docs/tutorial.md:{i + 1}: code block never closed")
            blocks.append(Block(fence.group(1), i + 2, "".join(c + "\n" for c in lines[i + 1:end])))
            i = end
        i += 1
    return blocks


def commands(block: Block) -> list[tuple[int, list[str]]]:
    """(tutorial line, argv) of each command of a bash block; ``python`` → sys.executable."""
    out = []
    for k, line in enumerate(block.code.splitlines()):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        argv = shlex.split(line, comments=True)
        if argv[0] == "python":
            argv[0] = sys.executable
        out.append((block.line + k, argv))
    return out


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                                                       else []))
    env.setdefault("MPLBACKEND", "Agg")
    return env


def test_the_parser_finds_python_and_bash_blocks():
    blocks = parse(TUTORIAL.read_text())
    assert {b.language for b in blocks} == {"python", "bash"}
    assert sum(len(commands(b)) for b in blocks if b.language == "bash") >= 4
    with pytest.raises(ValueError, match="never closed"):
        parse("text\n```python\nx = 1\n")


def test_the_tutorial_runs_end_to_end(tmp_path, monkeypatch):
    """Every block in order, in ``tmp_path`` (files written by earlier blocks visible)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__tutorial__"}
    env = _env()
    from numerics import KINDS, unregister
    before = set(KINDS)
    try:
        _run_blocks(tmp_path, namespace, env)
    finally:                               # the tutorial's own kind leaves the registry
        for name in set(KINDS) - before:
            unregister(name)
    # what the reader was told to expect
    assert namespace["cmp"].decision == "confirmed"
    assert namespace["heads_cmp"].kappa == pytest.approx(0.25)
    assert (tmp_path / "my_results" / "report.json").exists()
    assert (tmp_path / "tanh_sgd_vs_flow.png").exists()
    assert set(KINDS) == before and namespace["toy_gap"] < 5      # the toy kind ran its path


def _run_blocks(tmp_path, namespace: dict, env: dict) -> None:
    for block in parse(TUTORIAL.read_text()):
        if block.language == "python":
            # dont_inherit: the reader's session has not this file's ``from __future__`` imports
            code = compile("\n" * (block.line - 1) + block.code, str(TUTORIAL), "exec",
                           dont_inherit=True)
            exec(code, namespace)          # a traceback names docs/tutorial.md's line
        elif block.language == "bash":
            for line, argv in commands(block):
                done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                                      timeout=300)
                assert done.returncode == 0, (
                    f"docs/tutorial.md:{line}: {' '.join(argv)} exited {done.returncode}\n"
                    f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


@pytest.mark.parametrize("written, example", [("marion_tanh.py", "marion_tanh.py"),
                                              ("tempered.py", "tempered_softmax.py")])
def test_the_tutorials_files_are_the_examples(written, example):
    """The files the tutorial writes are examples/ (the same variant, not a drifted copy)."""
    text = TUTORIAL.read_text()
    m = re.search(rf'Path\("{re.escape(written)}"\)\.write_text\(\'\'\'\\\n(.*?)\'\'\'\)', text, re.S)
    assert m, f"the tutorial does not write {written}"
    body = m.group(1)
    own = (ROOT / "examples" / example).read_text()
    code = [ln for ln in own.splitlines() if ln.strip() and not ln.startswith(("    python", '"""'))]
    for line in code:
        if line.startswith(("import", "from", "MODEL", "SOFTMAX_T2", "def", "    return")):
            assert line.split("#")[0].rstrip() in body, (example, line)


def test_the_readme_links_the_tutorial():
    assert "docs/tutorial.md" in (ROOT / "README.md").read_text()
