"""The model pages (docs/models/*.md) agree with the code: each page's generated blocks are what
``docs/models/generate.py`` produces from the code now, every claim of the registry is on its
paper's page, and no page points outside the repository. After a change to a model, a range,
an equation or a claim: ``python docs/models/generate.py``, and read the difference."""

from __future__ import annotations

import importlib.util
from pathlib import Path
import re

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES_DIR = ROOT / "docs" / "models"


def _generator():
    spec = importlib.util.spec_from_file_location("attnv_docs_models_generate",
                                                  PAGES_DIR / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
STEMS = list(GEN.PAGES)


def _text(stem: str) -> str:
    return GEN.page_path(stem).read_text(encoding="utf-8")


@pytest.mark.parametrize("stem", STEMS)
def test_generated_blocks_match_the_code(stem):
    have = GEN.parse_blocks(_text(stem))
    want = GEN.generate(stem)
    assert sorted(have) == sorted(want), (
        f"docs/models/{stem}.md has generated blocks {sorted(have)}, the generator makes "
        f"{sorted(want)}")
    stale = [name for name in want if have[name] != want[name]]
    assert not stale, (f"docs/models/{stem}.md: blocks {stale} differ from the code; run "
                       "`python docs/models/generate.py` and read the difference")


@pytest.mark.parametrize("paper", GEN.PAPERS)
def test_every_claim_of_the_registry_is_on_its_page(paper):
    from verification.catalogue import claims_for
    text = _text(paper)
    missing = [c.id for c in claims_for(paper)
               if c.module.startswith("verification.claims.") and f"`{c.id}`" not in text]
    assert not missing, f"docs/models/{paper}.md lacks the claims {missing}"


_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\s]+)`")
_ABSOLUTE = re.compile(r"(?<![\w.~/])(?:/(?:work|home|tmp|Users|usr|etc|opt|mnt|var)/|~/|[A-Z]:\\)")


def _outside(stem: str) -> list[str]:
    """What a page names outside the repository: ``shared/``, absolute paths, links that leave
    the repository or lead nowhere, repository paths in backticks that do not exist."""
    text, here = _text(stem), GEN.page_path(stem).parent
    bad = [f"mentions {m.group(0)!r}" for m in re.finditer(r"shared/", text)]
    bad += [f"absolute path at {m.group(0)!r}" for m in _ABSOLUTE.finditer(text)]
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+://", target):
            continue
        path = (here / target.split("#")[0]).resolve()
        if not path.is_relative_to(ROOT) or not path.exists():
            bad.append(f"link {target!r} leads outside the repository or nowhere")
    for token in _CODE.findall(text):
        if re.fullmatch(r"[\w./-]+/[\w.-]+\.(py|md)|[\w-]+/(?:[\w-]+/)*", token) \
                and not token.startswith(("PATH", "my_")) and not (ROOT / token).exists():
            bad.append(f"`{token}` is no path of the repository")
    return bad


@pytest.mark.parametrize("stem", STEMS)
def test_pages_stay_inside_the_repository(stem):
    bad = _outside(stem)
    assert not bad, f"docs/models/{stem}.md: " + "; ".join(bad)


def test_index_and_readme_link_the_pages():
    index = _text("README")
    for paper in GEN.PAPERS:
        assert f"]({paper}.md)" in index, f"docs/models/README.md does not link {paper}.md"
    assert "](docs/models/README.md)" in (ROOT / "README.md").read_text(encoding="utf-8"), \
        "README.md does not link docs/models/README.md"


def test_no_code_docstring_points_to_the_specification_outside_the_repository():
    hits = [f"{path.relative_to(ROOT)}:{i}" for folder in ("theory", "numerics", "verification")
            for path in sorted((ROOT / folder).rglob("*.py"))
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if "shared/spec" in line]
    assert not hits, f"references to shared/spec (point to docs/models/<paper>.md): {hits}"


def test_render_replaces_only_the_blocks():
    page = ("# Title\nprose\n<!-- generated: a -->\nold\n<!-- end generated -->\nmore prose\n"
            "<!-- generated: b -->\n<!-- end generated -->\n")
    assert GEN.parse_blocks(page) == {"a": "old", "b": ""}
    out = GEN.render(page, {"a": "new\nlines", "b": "x"})
    assert out == ("# Title\nprose\n<!-- generated: a -->\nnew\nlines\n<!-- end generated -->\n"
                   "more prose\n<!-- generated: b -->\nx\n<!-- end generated -->\n")
    assert GEN.parse_blocks(out) == {"a": "new\nlines", "b": "x"}
    with pytest.raises(ValueError, match="blocks"):
        GEN.render(page, {"a": "only one"})
    for broken in ("<!-- generated: a -->\nno end\n", "<!-- end generated -->\n",
                   "<!-- generated: a -->\n<!-- generated: b -->\n<!-- end generated -->\n",
                   "<!-- generated: a -->\n<!-- end generated -->\n" * 2):
        with pytest.raises(ValueError):
            GEN.parse_blocks(broken)
