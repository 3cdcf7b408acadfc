"""The documentation site: built with warnings as errors (a broken link or reference, a page
in no table of contents, a docstring that is not valid reST all fail), every page reachable
from the index, the API reference covering the public names, the claims catalogue covering
the registry; and the Python examples of the guides run, as the README's did."""

from __future__ import annotations

import html
import importlib
from pathlib import Path
import re
import traceback

import pytest

from tests.cli.test_readme import parse_readme
from tests.docs.sitebuild import built_site

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GUIDES = sorted(p for p in [*(DOCS / "guide").glob("*.md"), *(DOCS / "howto").glob("*.md")]
                if "```python" in p.read_text())


@pytest.fixture(scope="module")
def site():
    return built_site()


def test_the_site_builds_with_no_warning(site):
    assert site.returncode == 0 and site.warnings == [], "\n".join(site.warnings)


def _links(page: Path) -> set[Path]:
    text = page.read_text()
    return {(page.parent / html.unescape(h).split("#")[0]).resolve()
            for h in re.findall(r'href="([^"#:?]+\.html)(?:#[^"]*)?"', text)}


def test_every_page_is_reachable_from_the_index(site):
    pages = {p.resolve() for p in site.html.rglob("*.html")
             if p.name not in ("genindex.html", "search.html") and "_" not in p.parts[-2][:1]}
    seen, todo = set(), [site.html / "index.html"]
    while todo:
        page = todo.pop().resolve()
        if page in seen or not page.is_file():
            continue
        seen.add(page)
        todo += _links(page)
    unreached = sorted(str(p.relative_to(site.html)) for p in pages - seen)
    assert not unreached, unreached
    for src in [*DOCS.glob("*.md"), *DOCS.glob("*/*.md"), *DOCS.glob("maps/*/map.md")]:
        rel = src.relative_to(DOCS).with_suffix(".html")
        assert (site.html / rel).resolve() in seen, f"{src.relative_to(ROOT)} is not on the site"


@pytest.mark.parametrize("package", ["theory", "numerics", "verification"])
def test_the_api_reference_covers_the_public_names(site, package):
    names = importlib.import_module(package).__all__
    missing = [n for n in names if not (site.html / "reference" / "api" / f"{package}.{n}.html").is_file()]
    assert not missing, missing
    index = (site.html / "reference" / "api.html").read_text()
    assert all(f"{package}.{n}.html" in index for n in names)


def test_the_claims_catalogue_lists_every_claim_with_its_baseline_verdict(site):
    import json

    from verification.catalogue import load_all
    page = html.unescape((site.html / "reference" / "claims.html").read_text())
    baseline = json.loads((ROOT / "baselines" / "quick.json").read_text())
    baseline = {c["id"]: c["verdict"] for c in baseline["claims"]}
    for cid in load_all():
        row = re.search(rf"<tr[^>]*>\s*<td[^>]*><p><code[^>]*><span class=\"pre\">{re.escape(cid)}</span>"
                        r"</code></p></td>(.*?)</tr>", page, re.S)
        assert row, cid
        assert f"<p>{baseline.get(cid, 'not in the baseline')}</p>" in row.group(1), cid
    assert 'href="../maps/dohmatob2025-prop1-linear/map.html"' in page


@pytest.mark.parametrize("page", GUIDES, ids=[str(p.relative_to(DOCS)) for p in GUIDES])
def test_guide_python_examples_run(page, tmp_path, monkeypatch):
    blocks = [b for b in parse_readme(page.read_text()) if b.language == "python"]
    runnable = [b for b in blocks if b.skip_reason is None]
    for b in blocks:
        compile(b.code, str(page), "exec")
    # a page whose every example is marked skip (a SLURM cluster's) is only compiled
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__guide__"}
    for b in runnable:
        try:
            exec(compile("\n" * (b.line - 1) + b.code, str(page), "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - reported with the page's line
            pytest.fail(f"{page.relative_to(ROOT)}:{b.line} raised {type(exc).__name__}: {exc}\n"
                        f"{traceback.format_exc()}", pytrace=False)
