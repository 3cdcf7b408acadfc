"""The REM samplers' bulk rule error (issue 43): ``BULK_RULE`` against its doubled rule on the
same draws, nonzero where the bulk matters (relu, high temperature) and tracking the true rule
error (against a much finer rule on the same draws), and a Prop. 1 claim carrying it in its
allowance."""

import numpy as np
import pytest

import numerics.rem as rem
import numerics.rem_torch as rem_torch
from numerics.expectation import Estimate
from numerics.rem import gibbs_average_estimate, softmax_risk_mc
from numerics.rem_torch import softmax_risk_mc_torch
from verification.claims.dohmatob2025 import risk as R
from verification.claims.dohmatob2025._common import rbar
from verification.simulations.dohmatob2025 import risk as SR
from verification.simulations.dohmatob2025.common import numeric_risk

from ..claims.dohmatob_helpers import at

ON_M = {"mu": 0.2, "nu": 0.5, "zeta": 0.0, "eta": 0.0, "rho": 0.0}
HIGH_T = (0.1, 0.3, 0.6)                 # α, β (< β_c = 0.447), γ: Prop. 1's setting
FINE = (192, 96)                         # four times BULK_RULE's points in each direction


def _relu_np(t):
    return np.maximum(t, 0)


def _relu_torch(t):
    import torch
    return torch.relu(t)


SAMPLERS = {"numpy": (rem, lambda *a, **k: softmax_risk_mc(_relu_np, *a, **k)),
            "torch": (rem_torch, lambda *a, **k: softmax_risk_mc_torch(_relu_torch, *a,
                                                                       device="cpu", **k))}


@pytest.mark.parametrize("backend", SAMPLERS)
@pytest.mark.parametrize("d", [100, 800])
def test_relu_high_temperature_error_is_nonzero_and_tracks_the_true_rule_error(
        monkeypatch, backend, d):
    module, sample = SAMPLERS[backend]
    args = (*HIGH_T, d, ON_M, 1000)
    est = sample(*args, seed=5, top_k=300, quadrature_error=True)
    plain = sample(*args, seed=5, top_k=300)
    assert (est.value, est.stderr) == (plain.value, plain.stderr)   # asking changes nothing else
    assert np.isnan(plain.quadrature_error)                          # not asked: not estimated
    monkeypatch.setattr(module, "BULK_RULE", FINE)
    true = abs(est.value - sample(*args, seed=5, top_k=300).value)  # same draws, finer bulk
    assert est.quadrature_error > 1e-4 * est.value
    assert 0.5 * true <= est.quadrature_error <= 2 * true


def test_tanh_gibbs_average_error_tracks_the_true_rule_error(monkeypatch):
    args = (np.tanh, 0.1, 0.3, 200, 0.5, 300)
    est = gibbs_average_estimate(*args, seed=2)
    monkeypatch.setattr(rem, "BULK_RULE", FINE)
    true = abs(est.value - gibbs_average_estimate(*args, seed=2).value)
    assert est.quadrature_error > 0
    assert 0.5 * true <= est.quadrature_error <= 2 * true


def test_prop1_allowance_includes_the_samplers_rule_error(monkeypatch):
    """A stand-in sampler following R̄ (1/√d correction, se 0.4 %) and reporting a bulk rule
    error of 2 % of R̄: the claim records it per point and its limit family's bias is R̄'s
    quadrature error plus that 2 %."""
    paper = numeric_risk(rbar("linear"))

    def mc(ctx, link, a_, b_, g_, dv, ov, n, seed, top_k, quadrature_error=True):
        th = float(paper(a_, b_, g_, dv, *ov.values()))
        noise = np.random.default_rng(seed % 2**32).standard_normal() * 0.004 * th
        return Estimate(th * (1 + 0.3 / np.sqrt(dv)) + noise, 0.004 * th,
                        quadrature_error=0.02 * th)
    monkeypatch.setattr(SR, "risk_mc", mc)
    entry = at("dohmatob2025:prop1-risk[link=linear]", R.PROP1_SETTINGS[0])
    ev = entry["evidence"]
    assert ev["quadrature_error"]["mc_relative"] == pytest.approx(0.02, rel=1e-9)
    for c in ev["checks"]:
        assert c["mc_relative_quadrature_error"] == pytest.approx(0.02, rel=1e-9)
        assert c["bias"] == pytest.approx(0.02 + c["relative_quadrature_error"], rel=1e-9)
    assert all(p["mc_quadrature_error"] > 0 for p in ev["points"])
    rows, cols = ev["check"]["comparisons"]["rows"], ev["check"]["comparisons"]["columns"]
    assert all(r[cols.index("bias")] >= 0.02 for r in rows)    # + the models' spread


@pytest.mark.parametrize("method", ["rem", "rem-torch"])
def test_the_registered_rem_samplers_return_the_bulk_rules_error(method):
    """``numerics.simulate`` with Dohmatob's extreme-value samplers: the Estimate carries the
    bulk rule's error (nonzero for relu at high temperature), never a silent 0."""
    import dataclasses

    from numerics import simulate
    from numerics.kinds import KINDS
    from theory.models import dohmatob2025 as dm
    example = KINDS["dohmatob-student"].example()[0]
    relu = dataclasses.replace(example, link=dm.as_link("relu"))
    _, config = KINDS["dohmatob-student"].trials()[method]
    cfg = dataclasses.replace(config, state=ON_M, n_samples=400)
    est = simulate(relu, {"d": 100, "alpha": HIGH_T[0], "beta": HIGH_T[1], "gamma": HIGH_T[2]},
                   cfg, method)
    assert isinstance(est, Estimate)
    assert np.isfinite(est.quadrature_error) and est.quadrature_error > 0, est
