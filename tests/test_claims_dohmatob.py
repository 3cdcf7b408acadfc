"""The Dohmatob claims encoded so far can fail: a wrong formula is refuted."""

import sympy as sp

from theory.models.dohmatob2025 import PAPER_BETA_C, alpha, beta
from verification import Context, get_claim, run_claim

CTX = Context(profile="quick", seed=0, device="cpu")


def verdict(cid, **kw):
    return run_claim(get_claim(cid), CTX, **kw)[0]


def test_rem_constants_confirmed_and_wrong_psi_or_r_refuted():
    assert verdict("dohmatob2025:rem-constants")["verdict"] == "confirmed"
    wrong_psi = sp.Piecewise((alpha / beta + beta / 4, beta <= PAPER_BETA_C), (PAPER_BETA_C, True))
    assert verdict("dohmatob2025:rem-constants", psi=wrong_psi)["verdict"] == "refuted"
    entry = verdict("dohmatob2025:rem-constants", r=beta)   # forgets the frozen phase
    assert entry["verdict"] == "refuted" and "frozen" in entry["summary"]


def test_gibbs_average_refutes_a_wrong_limit():
    entry = verdict("dohmatob2025:prop12-gibbs-average",
                    limit=lambda F, rho, r: F(rho * 1.05 * r))
    assert entry["verdict"] == "refuted"
