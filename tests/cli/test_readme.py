"""The README is part of the product: its set-up commands are what CI runs, verbatim; its Python
examples and its cheap command lines run here.

Python blocks run in order, cumulatively within a ``##`` section (a later block may use what an
earlier block of the same section defined, as a reader following the section would), each
section in a fresh namespace, with a temporary working directory. A block that must not run is
preceded by a marker line giving the reason::

    <!-- readme-test: skip (the reason) -->

It is still compiled (no syntax error goes unnoticed). Tracebacks point at README lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import os
import re
import shlex
import subprocess
import sys
import traceback

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

SKIP_MARKER = re.compile(r"^<!--\s*readme-test:\s*skip\b(.*?)-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of the README."""

    section: str                 # the ``## `` heading it sits under ('' before the first)
    language: str
    line: int                    # README line number of the block's first code line
    code: str
    skip_reason: str | None = None

    def where(self) -> str:
        first = next((c.strip() for c in self.code.splitlines() if c.strip()), "")
        return f"README.md:{self.line}, section {self.section!r}, block starting {first!r}"


def parse_readme(text: str | None = None) -> list[Block]:
    """Every fenced block with its section, line and skip marker. A skip marker must give a
    reason and be followed (blank lines allowed) by a code block."""
    lines = (README.read_text() if text is None else text).splitlines()
    blocks: list[Block] = []
    section, skip, skip_line = "", None, 0
    i = 0
    while i < len(lines):
        line = lines[i]
        marker = SKIP_MARKER.match(line.strip())
        fence = FENCE.match(line)
        if marker:
            skip = marker.group(1).strip(" ()—–-:")
            skip_line = i + 1
            if not skip:
                raise ValueError(f"README.md:{skip_line}: a skip marker must say why the block "
                                 "does not run: <!-- readme-test: skip (reason) -->")
        elif fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
            if end is None:
                raise ValueError(f"README.md:{i + 1}: code block never closed")
            blocks.append(Block(section, fence.group(1), i + 2,
                                "".join(c + "\n" for c in lines[i + 1:end]), skip))
            skip = None
            i = end
        elif line.strip():
            if skip is not None:
                raise ValueError(f"README.md:{skip_line}: skip marker not followed by a code block")
            if line.startswith("## "):
                section = line[3:].strip()
        i += 1
    if skip is not None:
        raise ValueError(f"README.md:{skip_line}: skip marker not followed by a code block")
    return blocks


def readme_blocks(language: str, section: str | None = None) -> list[str]:
    """The README's fenced code blocks in ``language`` (only under the ``## section`` heading
    when given, matched by its beginning), in order."""
    return [b.code for b in parse_readme() if b.language == language
            and (section is None or b.section.startswith(section))]


# --------------------------------------------------------------------------------------------
# Set-up: the two commands CI runs verbatim


def setup_commands() -> list[str]:
    return [line.strip() for block in readme_blocks("bash", "Set-up")
            for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_has_two_setup_commands():
    cmds = setup_commands()
    assert len(cmds) == 2, cmds
    assert cmds[0].endswith("python -m verification run"), cmds[0]
    assert cmds[1].endswith("&& pytest"), cmds[1]      # the bare command, as a new user types it


def test_ci_runs_the_readme_commands_verbatim():
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    for cmd in setup_commands():
        assert any(line == cmd or line.startswith(cmd + " ||") for line in ci_lines), (
            f".ci/run does not run the README's command {cmd!r} verbatim")


def test_helpers_import_without_the_working_directory_on_sys_path():
    """Bare ``pytest`` does not put the working directory on sys.path (``python -m pytest``
    does); ``python -P`` reproduces that, so this collects the helper-importing modules as the
    README's command would."""
    out = subprocess.run([sys.executable, "-P", "-m", "pytest", "--co", "-q", "-p",
                          "no:cacheprovider", "tests/numerics/test_codegen.py",
                          "tests/theory/test_risk_derivation.py"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


# --------------------------------------------------------------------------------------------
# Python examples


def python_sections() -> list[str]:
    """Sections holding Python blocks, in README order."""
    return list(dict.fromkeys(b.section for b in parse_readme() if b.language == "python"))


def test_readme_has_python_examples_and_well_formed_markers():
    blocks = [b for b in parse_readme() if b.language == "python"]
    assert blocks, "no ```python block found in README.md"
    assert any(b.skip_reason is None for b in blocks), "every Python example is marked skip"


def test_parser_reads_sections_lines_and_markers():
    text = ("intro\n## Alpha beta\n\n```python\nx = 1\n```\n\n"
            "<!-- readme-test: skip (needs a GPU) -->\n```python\ny = x\n```\n## Gamma\n```bash\nls\n```\n")
    a, b, c = parse_readme(text)
    assert (a.section, a.line, a.code, a.skip_reason) == ("Alpha beta", 5, "x = 1\n", None)
    assert (b.line, b.skip_reason) == (10, "needs a GPU")
    assert (c.section, c.language) == ("Gamma", "bash")
    assert "README.md:10" in b.where() and "'y = x'" in b.where()
    with pytest.raises(ValueError, match="must say why"):
        parse_readme("<!-- readme-test: skip -->\n```python\nx\n```\n")
    with pytest.raises(ValueError, match="not followed by a code block"):
        parse_readme("<!-- readme-test: skip (why) -->\ntext\n```python\nx\n```\n")


def _compiled(block: Block):
    # padded so that tracebacks and linecache show the README's own line numbers
    return compile("\n" * (block.line - 1) + block.code, str(README), "exec")


@pytest.mark.parametrize("section", python_sections())
def test_readme_python_examples_run(section, tmp_path, monkeypatch):
    blocks = [b for b in parse_readme() if b.language == "python" and b.section == section]
    code, syntax_errors = {}, []
    for b in blocks:
        try:
            code[b] = _compiled(b)
        except SyntaxError as exc:
            syntax_errors.append(f"{b.where()}: syntax error: {exc}")
    if syntax_errors:
        pytest.fail("\n".join(syntax_errors), pytrace=False)
    runnable = [b for b in blocks if b.skip_reason is None]
    if not runnable:
        pytest.skip("; ".join(f"{b.where()}: {b.skip_reason}" for b in blocks))
    monkeypatch.chdir(tmp_path)          # an example that writes files writes them here
    namespace = {"__name__": "__readme__"}
    for b in runnable:
        failure = None
        try:
            exec(code[b], namespace)
        except Exception as exc:
            failure = f"{b.where()} raised {type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
        if failure is not None:              # outside the handler: no chained-exception noise
            pytest.fail(failure, pytrace=False)


# --------------------------------------------------------------------------------------------
# The "Using it" command lines

NOT_EXECUTED = {"run": "runs claims for minutes (CI runs the main job)",
                "sweep": "runs claims at several seeds for minutes",
                "guard": "compares stored runs (CI runs the main job)"}
CHEAP = {"--help", "list", "derive", "evaluate", "heads"}


def _with_optional_groups(cmd: str) -> list[str]:
    """``cmd`` without its ``[...]`` groups, then with each group that is a literal (no
    metavariable in capitals, no ``|`` alternatives, no ``...``) added on its own."""
    groups = re.findall(r"\[([^\]]*)\]", cmd)
    base = " ".join(re.sub(r"\[[^\]]*\]", " ", cmd).split())
    literal = [g for g in groups if "|" not in g and "..." not in g
               and not any(w.isupper() for w in re.findall(r"[A-Za-z]+", g))]
    return [base] + [f"{base} {g}" for g in literal]


def usage_commands() -> list[str]:
    """The command lines of the "Using it" bash blocks: a line starting with ``python`` begins
    a command, other lines continue it (trailing backslashes dropped), comments removed."""
    commands: list[str] = []
    for line in "".join(readme_blocks("bash", "Using it")).splitlines():
        text = line.split("#", 1)[0].strip() if " #" in line else line.strip()
        text = text.removesuffix("\\").strip()
        if not text:
            continue
        if text.startswith("python "):
            commands.append(text)
        else:
            if not commands:
                raise ValueError(f"README 'Using it': continuation line before a command: {line!r}")
            commands[-1] += " " + text
    return [variant for c in commands for variant in _with_optional_groups(c)]


def _subcommand(cmd: str) -> str:
    argv = shlex.split(cmd)
    assert argv[:3] == ["python", "-m", "verification"], cmd
    return argv[3] if len(argv) > 3 else ""


def test_usage_block_covers_the_cheap_commands():
    found = {_subcommand(c) for c in usage_commands()}
    assert CHEAP <= found, f"README 'Using it' lacks {sorted(CHEAP - found)}"
    assert found <= CHEAP | set(NOT_EXECUTED), f"unexpected commands {sorted(found - CHEAP)}"
    assert "python -m verification list --paper marion2025" in usage_commands()


def test_optional_groups_expand_to_literals_only():
    assert _with_optional_groups("python -m v list [--paper marion2025]") == [
        "python -m v list", "python -m v list --paper marion2025"]
    assert _with_optional_groups("python -m v run [--paper P] [--profile quick|full] [--x]") == [
        "python -m v run", "python -m v run --x"]


CLI_CASES = [c for c in usage_commands() if _subcommand(c) not in NOT_EXECUTED]


@pytest.mark.parametrize("cmd", CLI_CASES, ids=[c.removeprefix("python -m verification ")[:60]
                                                 for c in CLI_CASES])
def test_readme_command_runs(cmd):
    argv = shlex.split(cmd)
    try:
        out = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail(f"README 'Using it': `{cmd}` did not finish in 300 s", pytrace=False)
    assert out.returncode == 0, (f"README 'Using it': `{cmd}` exited {out.returncode}\n"
                                 f"{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    assert out.stdout.strip(), f"README 'Using it': `{cmd}` printed nothing"


# --------------------------------------------------------------------------------------------
# Shown outputs: a block after ``<!-- readme-output ... -->`` is what the bash command before
# it prints, never typed by hand

OUTPUT_MARKER = re.compile(r"^<!--\s*readme-output\b.*-->\s*$")
TABLE_RULES = re.compile(r"[\s│┃━─┏┓┗┛┳┻╇┩┡└┘┴┬┼╋]+")


def shown_outputs(text: str | None = None) -> list[tuple[int, str, str]]:
    """(README line, command, shown output) for every block marked ``readme-output``: the
    command is the one line of the bash block before the marker."""
    lines = (README.read_text() if text is None else text).splitlines()
    blocks = parse_readme(text)
    out = []
    for i, line in enumerate(lines):
        if OUTPUT_MARKER.match(line.strip()):
            shown = next(b for b in blocks if b.line > i + 1)
            command = [b for b in blocks if b.line < i + 1 and b.language == "bash"][-1]
            cmds = [c for c in command.code.splitlines() if c.strip()]
            assert len(cmds) == 1, f"README.md:{command.line}: one command before an output"
            out.append((shown.line, cmds[0], shown.code))
    return out


def _normalised(line: str) -> str:
    """A line without the table's rules and padding, and without the seconds a run took
    (the last number of a table row)."""
    text = TABLE_RULES.sub(" ", line).strip()
    return re.sub(r" \d+(\.\d+)?$", " <s>", text) if line.rstrip().endswith(("│", "┃")) else text


def missing_lines(shown: str, printed: str) -> list[str]:
    """The shown lines that the printed output does not have, in order."""
    printed_lines = [_normalised(p) for p in printed.splitlines()]
    missing, at = [], 0
    for line in filter(None, map(_normalised, shown.splitlines())):
        try:
            at = printed_lines.index(line, at) + 1
        except ValueError:
            missing.append(line)
    return missing


def test_output_comparison_ignores_rules_and_seconds_but_not_words():
    printed = "┃ claim ┃   s ┃\n│ a:b   │ confirmed │ 3.0 │\nR = x\n"
    assert missing_lines("│ a:b │ confirmed │ 12.5 │\nR = x\n", printed) == []
    assert missing_lines("│ a:b │ refuted │ 3.0 │\n", printed) == ["a:b refuted <s>"]
    assert missing_lines("R = y\n", printed) == ["R = y"]


def test_readme_shows_outputs_of_the_first_result():
    assert len(shown_outputs()) >= 2


@pytest.mark.parametrize("line,cmd,shown", shown_outputs(),
                         ids=[c.removeprefix("python -m verification ")[:50] for _, c, _ in shown_outputs()])
def test_readme_shown_output_is_what_the_command_prints(line, cmd, shown, tmp_path):
    argv = shlex.split(cmd)
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 0, f"README.md:{line}: `{cmd}`\n{out.stdout[-2000:]}{out.stderr[-3000:]}"
    missing = missing_lines(shown, out.stdout)
    assert not missing, (f"README.md:{line}: `{cmd}` no longer prints what the README shows; "
                         f"lines not printed: {missing}\nprinted:\n{out.stdout[-3000:]}")
