"""The Gram-matrix simulator is exact in law: it agrees in distribution with the direct
d-dimensional simulator (means and standard deviations of every order parameter after 1, 20
and 200 steps), and its numbers are pinned for a fixed seed."""

import numpy as np
import pytest
import torch
from scipy.stats import norm

from numerics.sgd import GramSGD, SimulationConfig, simulate, standard_gamma, wishart
from theory.models.marion2025 import MODEL

INIT = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)
ALPHA = 1e-3


def _compare_in_law(a, b):
    """z-scores of the differences of means and of log standard deviations (independent runs)."""
    na, nb = a.shape[0], b.shape[0]
    z_mean = (a.mean(0) - b.mean(0)) / np.sqrt(a.var(0, ddof=1) / na + b.var(0, ddof=1) / nb)
    # se of log(sd) ≈ sqrt(1/(2(n−1))) (1 + kurtosis excess/2 ignored: checked below on data)
    ka = ((a - a.mean(0)) ** 4).mean(0) / a.var(0) ** 2 - 3
    kb = ((b - b.mean(0)) ** 4).mean(0) / b.var(0) ** 2 - 3
    se = np.sqrt((2 + ka) / (4 * (na - 1)) + (2 + kb) / (4 * (nb - 1)))
    z_sd = (np.log(a.std(0, ddof=1)) - np.log(b.std(0, ddof=1))) / se
    return z_mean, z_sd


def _laws(d, batch, seeds, steps, lr, init=INIT):
    params = dict(d=d, L=3, lam=0.7, gamma=0.8, eps=0.3)
    cfg = SimulationConfig(lr=lr, steps=steps, seeds=seeds, batch=batch, record_every=1, init=init,
                           device="cpu", seed=11)
    direct = simulate(MODEL, params, cfg).stacked()
    gram = simulate(MODEL, params, SimulationConfig(**{**cfg.__dict__, "seed": 12}), "gram").stacked()
    return direct, gram


@pytest.mark.parametrize("batch", [1, 3])
def test_gram_and_direct_agree_in_law(batch):
    direct, gram = _laws(d=120, batch=batch, seeds=1500, steps=200, lr=0.02)
    checks = []
    for T in (1, 20, 200):
        zm, zs = _compare_in_law(direct[T], gram[T])
        checks += list(zm) + list(zs)
    z = norm.isf(ALPHA / (2 * len(checks)))
    assert np.max(np.abs(checks)) < z, np.round(checks, 2)


def test_random_initialisation_has_the_same_law():
    direct, gram = _laws(d=150, batch=2, seeds=3000, steps=20, lr=0.01, init="random")
    checks = []
    for T in (0, 20):
        zm, zs = _compare_in_law(direct[T], gram[T])
        checks += list(zm) + list(zs)
    assert np.max(np.abs(checks)) < norm.isf(ALPHA / (2 * len(checks))), np.round(checks, 2)


def test_fixed_seed_regression():
    cfg = SimulationConfig(lr=0.01, steps=10, seeds=3, batch=2, record_every=10, init=INIT,
                           device="cpu", seed=123)
    q = simulate(MODEL, dict(d=1000, L=3, lam=0.7, gamma=0.8, eps=0.3), cfg, "gram").stacked()[-1]
    pinned = np.array([
        [0.027792585995853745, -0.04970556687218298, 0.4006335393324992, -0.031104611598976685,
         0.0935803345341752],
        [-0.3353075063477818, -0.017135112032731804, -0.06867531788896147, -0.028509557492774572,
         0.21244968259890226],
        [0.24894026713706857, -0.038511923919793245, -0.06744531326195786, 0.00814414495045359,
         -0.2582493735224713]])
    np.testing.assert_allclose(q, pinned, rtol=1e-9, atol=1e-12)


def test_cost_does_not_depend_on_dimension_and_state_stays_psd():
    for d in (10**3, 10**9):
        cfg = SimulationConfig(lr=1.0 / d, steps=50, seeds=8, record_every=50, init=INIT,
                               device="cpu")
        sim = GramSGD(MODEL, dict(d=d, L=3, lam=0.7, gamma=0.8, eps=0.3), cfg)
        sim.run()
        eig = torch.linalg.eigvalsh(sim.G)
        assert eig.min() > -1e-10 and torch.allclose(sim.G, sim.G.transpose(1, 2))
        assert torch.allclose(sim.G.diagonal(dim1=1, dim2=2), torch.ones(8, 4, dtype=sim.G.dtype))


def test_gamma_and_wishart_samplers():
    g = torch.Generator().manual_seed(0)
    for k in (0.7, 3.0, 5e8):
        x = standard_gamma(torch.full((20000,), k, dtype=torch.float64), g)
        assert abs(x.mean().item() - k) < 5 * np.sqrt(k / 20000)
        assert abs(x.var().item() / k - 1) < 0.1
    Sigma = torch.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=torch.float64).expand(40000, 2, 2)
    W = wishart(Sigma, 7.0, g)
    np.testing.assert_allclose(W.mean(0).numpy(), 7 * Sigma[0].numpy(), rtol=0.02)
    # Var(W_ij) = dof·(Σ_ij² + Σ_ii Σ_jj)
    np.testing.assert_allclose(W[:, 0, 1].var().item(), 7 * (0.25 + 2.0), rtol=0.05)


@pytest.mark.slow
def test_gram_and_direct_agree_in_law_large():
    direct, gram = _laws(d=400, batch=4, seeds=6000, steps=200, lr=0.005)
    checks = []
    for T in (1, 20, 200):
        zm, zs = _compare_in_law(direct[T], gram[T])
        checks += list(zm) + list(zs)
    assert np.max(np.abs(checks)) < norm.isf(ALPHA / (2 * len(checks))), np.round(checks, 2)


def test_the_comparison_catches_a_wrong_noise_term(monkeypatch):
    """Power check: a Gram simulator whose out-of-span Wishart has 20% too few degrees of
    freedom must fail the comparison above."""
    import numerics.sgd.gram as gram_module
    exact = gram_module.wishart
    monkeypatch.setattr(gram_module, "wishart", lambda S, dof, g: exact(S, 0.8 * dof, g))
    direct, gram = _laws(d=120, batch=1, seeds=1500, steps=200, lr=0.02)
    checks = []
    for T in (1, 20, 200):
        zm, zs = _compare_in_law(direct[T], gram[T])
        checks += list(zm) + list(zs)
    assert np.max(np.abs(checks)) > norm.isf(ALPHA / (2 * len(checks)))
