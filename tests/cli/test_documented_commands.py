"""Every command line the documentation shows is accepted (issue 43): README.md, docs/**.md and
the examples' docstrings. Each documented form is parsed by the command line itself (an option
that does not exist or a value of the wrong type fails here); the cheap ones (derive, evaluate,
heads, list, --help) whose files exist in the repository also run, in process, and must exit 0.
A file the docs create as the reader goes (tutorial.md's marion_tanh.py, ...) is replaced by its
copy in examples/ where there is one; a form naming a file that exists nowhere (my_claims.py)
or holding a placeholder (NAME=VALUE) is parsed only. The parameter tables of the model pages
promise ``PATH.py:NAME`` for Dohmatob's link and Sagitova's activation: both run too."""

from __future__ import annotations

from pathlib import Path
import re
import shlex

import click
import pytest
import typer
from typer.testing import CliRunner

from verification.cli import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "examples").glob("*.py"))]
COMMANDS = {"--help", "list", "run", "sweep", "calibrate", "map", "guard", "store", "derive",
            "evaluate", "heads"}
CHEAP = {"--help", "list", "derive", "evaluate", "heads"}
EXAMPLES = {"my_act.py:NAME": "examples/tempered_softmax.py:SOFTMAX_T2",
            "marion_tanh.py": "examples/marion_tanh.py",
            "tempered.py": "examples/tempered_softmax.py",
            "my_act.py": "examples/tempered_softmax.py",
            "my_variant.py": "examples/marion_tanh.py",
            "FILE.py": "examples/marion_tanh.py"}
"""Files the docs have the reader write, and their copies in examples/."""
TABLE_FORMS = ["python -m verification evaluate sagitova2026 --param "
               "activation=examples/tempered_softmax.py:SOFTMAX_T2 --param n=256",
               "python -m verification evaluate dohmatob2025 --param "
               "link=examples/dohmatob_abs_link.py:ABS"]
"""``PATH.py:NAME`` as the model pages' parameter tables promise it."""

PLACEHOLDER = re.compile(r"\b(NAME|VALUE|DIR|ID|PATH|FILE)\b")
_SPAN = re.compile(r"`(python -m verification [^`]+|(?:derive|evaluate|heads) [^`]+)`")


def _optional_groups(cmd: str) -> list[str]:
    """``cmd`` without its ``[...]`` groups, then with each literal group (no metavariable in
    capitals, no alternatives, no ellipsis) added on its own."""
    groups = re.findall(r"(?<=\s)\[([^\]]*)\]", cmd)      # not m[0,0] nor claim[link=relu]
    base = " ".join(re.sub(r"(?<=\s)\[[^\]]*\]", " ", cmd).split())
    literal = [g for g in groups if "|" not in g and "..." not in g
               and not any(w.isupper() for w in re.findall(r"[A-Za-z]+", g))]
    return [base] + [f"{base} {g}" for g in literal]


def _block_lines(text: str) -> list[str]:
    """Command lines in code blocks and docstrings: a line starting with ``python -m
    verification`` and its continuation lines (trailing backslash), comments dropped."""
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("python -m verification"):
            cmd = line
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            out.append(cmd)
        i += 1
    return out


def _strip_comment(cmd: str) -> str:
    return cmd.split(" #", 1)[0].strip()


def documented() -> list[tuple[str, str]]:
    """(where, command line) of every documented full command form, deduplicated."""
    found: dict[str, str] = {}
    for path in DOCS:
        text = path.read_text()
        spans = [m.group(1) for m in _SPAN.finditer(text)]
        for cmd in [*_block_lines(text), *spans]:
            cmd = _strip_comment(cmd)
            if not cmd.startswith("python"):
                cmd = "python -m verification " + cmd
            if "..." in cmd or "{" in cmd or "μ" in cmd:
                continue                 # an elision or a template, not a command line
            words = cmd.split()[3:]
            if words and words[0] in ("derive", "evaluate") and (
                    len(words) < 2 or words[1].startswith("-")):
                continue                 # an option named in prose (`derive --on`), no model
            for form in _optional_groups(cmd):
                found.setdefault(form, str(path.relative_to(ROOT)))
    for form in TABLE_FORMS:
        found.setdefault(form, "docs/models (parameter tables)")
    return sorted((where, cmd) for cmd, where in found.items())


def _argv(cmd: str) -> list[str]:
    argv = shlex.split(cmd)
    assert argv[:3] == ["python", "-m", "verification"], cmd
    return argv[3:]


def _resolved(argv: list[str]) -> list[str] | None:
    """argv with the reader's files replaced by their copies in examples/; None when a file or
    placeholder is left (then the form is parsed only)."""
    out = []
    for arg in argv:
        for name, copy in EXAMPLES.items():
            arg = re.sub(rf"(?<![\w/]){re.escape(name)}", copy, arg)
        out.append(arg)
    for arg in out:
        paths = re.findall(r"[\w./-]+\.py", arg)
        if any(not (ROOT / p).exists() for p in paths) or PLACEHOLDER.search(arg):
            return None
    return out


CASES = documented()


def test_the_docs_hold_the_forms_of_every_command():
    found = {(_argv(cmd) or ["--help"])[0] for _, cmd in CASES}
    assert CHEAP - {"--help"} <= found, sorted(CHEAP - found)
    assert any("activation=examples/tempered_softmax.py:SOFTMAX_T2" in c for _, c in CASES)


def _parse(argv: list[str]) -> None:
    """Parse argv as the command line does (options and their types), without running it."""
    ctx = click.Context(typer.main.get_command(app), info_name="verification")
    while isinstance(ctx.command, click.Group):
        cmd = ctx.command.get_command(ctx, argv[0])
        if cmd is None:
            raise click.UsageError(f"no such command {argv[0]!r}")
        name, argv = argv[0], argv[1:]
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd, info_name=name, parent=ctx)
        else:
            cmd.make_context(name, list(argv), parent=ctx)
            return


@pytest.mark.parametrize("where, cmd", CASES, ids=[c.removeprefix("python -m verification ")[:70]
                                                    for _, c in CASES])
def test_documented_command_is_accepted(where, cmd):
    argv = _argv(cmd)
    if argv and argv[0].isupper():         # a placeholder in prose: `... COMMAND --help`
        argv = argv[1:]
    if not argv or argv[0] == "--help":
        res = CliRunner().invoke(app, ["--help"])
        assert res.exit_code == 0, res.output
        return
    assert argv[0] in COMMANDS, f"{where}: `{cmd}`: unknown command {argv[0]!r}"
    try:
        _parse(argv)
    except click.exceptions.Exit:
        pass
    except click.UsageError as exc:
        pytest.fail(f"{where}: `{cmd}` is refused by the parser: {exc.format_message()}",
                    pytrace=False)
    resolved = _resolved(argv)
    if argv[0] not in CHEAP or resolved is None:
        return
    res = CliRunner().invoke(app, resolved)
    assert res.exit_code == 0, f"{where}: `{cmd}` exited {res.exit_code}: {res.output[-2000:]}"
    assert res.stdout.strip(), f"{where}: `{cmd}` printed nothing"
