"""Running claims (``verification.runner``): a check that yields non-finite evidence or crashes
gives 'error', never a verdict; ``run`` from Python touches no global state; and a claim run
alone gets the verdict, contract and evidence it gets in a run of several."""

import numpy as np

from verification import Context, Outcome, run_claim
from verification.catalogue import claims_for
from verification.declare import Claim
from verification.runner import run
from verification.stats import z_compare
from tests.helpers import CHEAP_CLAIMS, same_results


def test_nan_evidence_gives_error_not_a_verdict():
    def check(ctx):
        z_compare([np.nan], [1.0], [0.1], 3.0)
        return Outcome("confirmed", "never")
    entry, _ = run_claim(Claim("x:nan", "x", "-", "s", check), Context())
    assert entry["verdict"] == "error" and "non-finite" in entry["summary"]


def test_crashing_check_is_error():
    entry, _ = run_claim(Claim("x:boom", "x", "-", "s", lambda ctx: 1 / 0), Context())
    assert entry["verdict"] == "error" and "ZeroDivisionError" in entry["summary"]


def test_run_from_python_touches_no_global_state(tmp_path):
    """What a notebook does: ``run`` in-process, quietly, figures drawn without switching
    matplotlib's backend (a notebook's inline backend must survive a run)."""
    import matplotlib

    from verification import run
    from verification.report import render_figures

    previous = matplotlib.get_backend()
    matplotlib.use("svg")                  # stands for the user's own backend
    try:
        paths = render_figures({"a:b[c]": lambda fig: fig.add_subplot().plot([0, 1], [1, 0])},
                               tmp_path / "figures")
        assert matplotlib.get_backend() == "svg"
        report = run(claims_for("marion2025", ["marion2025:prop3-linear"]), show=False,
                     out=tmp_path / "run")
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(previous)
    assert paths == {"a:b[c]": "figures/a_b_c.png"}
    assert (tmp_path / "figures" / "a_b_c.png").read_bytes()[:4] == b"\x89PNG"
    assert [c["verdict"] for c in report["claims"]] == ["confirmed"]
    assert (tmp_path / "run" / "report.json").exists()


def test_each_claim_run_alone_gets_the_verdict_and_contract_of_the_full_run(tmp_path):
    """α is each claim's own (Bonferroni over its own comparisons only): the other claims of a
    run change nothing in its verdict, contract or evidence."""
    claims = claims_for(None, CHEAP_CLAIMS)
    together = run(claims, show=False, out=tmp_path / "all", figures=False, workers=0)
    for i, c in enumerate(claims):
        alone = run([c], show=False, out=tmp_path / f"alone-{i}", figures=False, workers=0)
        same_results({"claims": [together["claims"][i]]}, alone)


def test_a_warm_run_does_not_rewrite_the_report_once_per_reused_claim(tmp_path, monkeypatch):
    """Claims that ran are written at once (an interrupted run keeps them); claims reused whole
    from the store are written at most every REUSED_WRITE_EVERY seconds and at the end."""
    import verification.runner as runner

    def toy(i):
        return Claim(f"toyw:c{i}", "x", "-", "s", lambda ctx: Outcome("confirmed", "ok"),
                     statistical=False)
    claims = [toy(i) for i in range(6)]
    writes = []
    real = runner._write_partial
    monkeypatch.setattr(runner, "_write_partial",
                        lambda *a: (writes.append(len(a[2])), real(*a))[1])
    options = dict(show=False, figures=False, calibration=None, out=tmp_path / "out",
                   store=tmp_path / "store")
    assert run(claims, **options)["reused"] == 0
    cold_writes, writes[:] = list(writes), []
    warm = run(claims, **options)
    assert warm["reused"] == 6 and [c["verdict"] for c in warm["claims"]] == ["confirmed"] * 6
    assert cold_writes[:7] == [0, 1, 2, 3, 4, 5, 6]      # the header, then after every claim
    assert writes[0] == 0 and len(writes) < len(cold_writes)
