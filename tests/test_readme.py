"""The README is part of the product: its set-up commands are what CI runs, verbatim."""

from pathlib import Path
import re

ROOT = Path(__file__).resolve().parents[1]


def readme_blocks(language: str, section: str | None = None) -> list[str]:
    """The README's fenced code blocks in ``language`` (only under the ``## section`` heading
    when given), in order."""
    text = (ROOT / "README.md").read_text()
    if section is not None:
        parts = re.split(r"^## ", text, flags=re.M)
        text = next(p for p in parts if p.startswith(section))
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


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
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-P", "-m", "pytest", "--co", "-q", "-p",
                          "no:cacheprovider", "tests/test_codegen.py", "tests/test_risk_mc.py"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
