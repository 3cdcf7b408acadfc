"""docs/check_library.md keeps up with the check library: it has a section for every public
policy of ``verification.checks`` and names every other exported name; its example claim
runs; the README and the tutorial link to it."""

from __future__ import annotations

import inspect
from pathlib import Path
import re

import pytest

from verification import checks
from verification.declare import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "check_library.md"


def _text() -> str:
    return PAGE.read_text()


def test_every_public_policy_has_its_section():
    text = _text()
    assert set(checks.POLICIES) <= set(checks.__all__)
    missing = [p for p in checks.POLICIES if not re.search(rf"^### `{p}`\s*$", text, re.M)]
    assert not missing, f"docs/check_library.md has no '### `name`' section for {missing}"


def test_every_function_that_judges_a_claim_is_a_listed_policy():
    """A new policy (a public function taking the claim's ``ctx``) must be added to
    ``POLICIES``, and so to the page."""
    judging = sorted(name for name in checks.__all__
                     if inspect.isfunction(obj := getattr(checks, name))
                     and next(iter(inspect.signature(obj).parameters), "") in ("ctx", "ctx_or_alpha")
                     and name != "perturbed")            # a helper of the policies, not one
    assert set(judging) <= set(checks.POLICIES), (
        f"{sorted(set(judging) - set(checks.POLICIES))} take ctx but are not in "
        "verification.checks.POLICIES (add them there and document them)")


def test_every_exported_name_is_named_on_the_page():
    text = _text()
    missing = [n for n in checks.__all__ if not re.search(rf"`(?:checks\.)?{re.escape(n)}\b", text)]
    assert not missing, f"docs/check_library.md does not name {missing}"


def test_the_pages_example_claim_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"^```python\n(.*?)^```", _text(), re.M | re.S)
    assert blocks, "the page has no example"
    monkeypatch.chdir(tmp_path)
    before = set(REGISTRY)
    try:
        namespace: dict = {"__name__": "check_library_md"}
        for code in blocks:
            exec(compile(code, str(PAGE), "exec"), namespace)
    finally:
        for key in set(REGISTRY) - before:               # the example's claims, registered here
            del REGISTRY[key]


@pytest.mark.parametrize("where", ["README.md", "docs/tutorial.md"])
def test_the_readme_and_the_tutorial_link_the_page(where):
    assert "check_library.md" in (ROOT / where).read_text()
