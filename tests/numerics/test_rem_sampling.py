"""Random-energy-model sampling (``numerics.rem``, ``numerics.rem_torch``): extreme-value
sampling against brute force over all e^{αd} levels, the softmax risk by the projection and
extreme-value reduction against brute force and whole tokens in R^d, and the torch port
against numpy."""

import numpy as np
import pytest
from scipy.stats import norm

from numerics.rem import brute_force_sample, extreme_value_sample
from theory.rem import alpha, beta, rem_constants

C = rem_constants()


@pytest.mark.parametrize("a,b", [(0.5, 0.6), (0.4, 1.2), (0.5, 2.0)])
def test_extreme_value_sampling_matches_brute_force(a, b):
    d = 18
    bf = brute_force_sample(a, b, d, 800, seed=3)
    ev = extreme_value_sample(a, b, d, 8000, seed=4, top_k=1000)
    z = norm.isf(1e-3 / 8)
    for name in ("free_energy", "gibbs_mean"):
        x, y = getattr(bf, name), getattr(ev, name)
        se = np.sqrt(x.var() / len(x) + y.var() / len(y))
        assert abs(x.mean() - y.mean()) <= z * se, name
        assert abs(np.log(x.std() / y.std())) <= z * np.sqrt(1 / (2 * len(x)) + 1 / (2 * len(y))) * 1.5


def test_extreme_value_sampling_reaches_exponentially_many_levels():
    s = extreme_value_sample(0.5, 2.0, 2000, 50, seed=0)     # e^{1000} levels
    psi = float(C["psi"].subs({alpha: 0.5, beta: 2.0}))
    assert np.all(np.isfinite(s.free_energy)) and abs(s.free_energy.mean() - psi) < 0.01


def test_bad_rem_input():
    with pytest.raises(ValueError, match="alpha"):
        extreme_value_sample(-1, 1, 10, 5, seed=0)
    with pytest.raises(ValueError, match="max_levels"):
        brute_force_sample(1.0, 1.0, 100, 1, seed=0)


@pytest.mark.parametrize("link", [lambda t: t, lambda t: t**2], ids=["linear", "quadratic"])
@pytest.mark.parametrize("a,b", [(0.5, 0.6), (0.5, 2.0)])
def test_softmax_risk_extreme_value_matches_brute_force(link, a, b):
    from numerics.rem import brute_force_softmax_risk, softmax_risk_mc
    ov = dict(mu=0.8, nu=0.5, zeta=0.2, eta=0.1, rho=0.3)
    x = brute_force_softmax_risk(link, a, b, 0.6, 16, ov, 1500, seed=1)
    y = softmax_risk_mc(link, a, b, 0.6, 16, ov, 20000, seed=2, top_k=1000)
    assert abs(x[0] - y[0]) <= norm.isf(1e-3 / 8) * np.hypot(x[1], y[1])


@pytest.mark.parametrize("link", [lambda t: t, lambda t: t**2], ids=["linear", "quadratic"])
def test_softmax_risk_matches_direct_d_dimensional_simulation(link):
    """The projection + extreme-value reduction against whole tokens in R^d (d = 20, 404 tokens)."""
    from numerics.rem import direct_softmax_risk, softmax_risk_mc
    ov = dict(mu=0.8, nu=0.5, zeta=0.2, eta=0.1, rho=0.3)
    for a, b in ((0.3, 0.5), (0.3, 1.5)):
        x = direct_softmax_risk(link, a, b, 0.6, 20, ov, 1500, seed=1)
        y = softmax_risk_mc(link, a, b, 0.6, 20, ov, 20000, seed=2, top_k=150)
        assert abs(x[0] - y[0]) <= norm.isf(1e-3 / 8) * np.hypot(x[1], y[1])


# --- the torch port ------------------------------------------------------------------------
def test_torch_ndtri_exp_matches_scipy_deep_in_the_tail():
    import torch
    from scipy.special import ndtri_exp as reference
    from numerics.rem_torch import ndtri_exp
    y = -np.logspace(-12, 5, 300)
    got = ndtri_exp(torch.tensor(y)).numpy()
    assert np.max(np.abs(got - reference(y)) / np.maximum(1, np.abs(reference(y)))) < 1e-10


@pytest.mark.parametrize("link", ["linear", "relu"])
@pytest.mark.parametrize("a,b", [(0.1, 0.3), (0.1, 1.0)])
def test_torch_softmax_risk_agrees_with_numpy_reference(link, a, b):
    import torch
    from numerics.rem import softmax_risk_mc
    from numerics.rem_torch import softmax_risk_mc_torch
    f_np = {"linear": lambda t: t, "relu": lambda t: np.maximum(t, 0)}[link]
    f_t = {"linear": lambda t: t, "relu": torch.relu}[link]
    ov = dict(mu=0.3, nu=0.5, zeta=0.1, eta=-0.1, rho=0.3)
    m1, s1 = softmax_risk_mc(f_np, a, b, 0.6, 300, ov, 3000, seed=3, top_k=200)
    m2, s2 = softmax_risk_mc_torch(f_t, a, b, 0.6, 300, ov, 3000, seed=4, top_k=200, device="cpu")
    assert abs(m1 - m2) < 4.5 * np.hypot(s1, s2)


@pytest.mark.gpu
def test_torch_softmax_risk_on_cuda_agrees_with_cpu():
    import torch
    from numerics.rem_torch import softmax_risk_mc_torch
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    ov = dict(mu=0.3, nu=0.5, zeta=0.1, eta=-0.1, rho=0.3)
    m1, s1 = softmax_risk_mc_torch(lambda t: t, 0.1, 1.0, 0.6, 300, ov, 20000, seed=1, device="cpu")
    m2, s2 = softmax_risk_mc_torch(lambda t: t, 0.1, 1.0, 0.6, 300, ov, 20000, seed=2, device="cuda")
    assert abs(m1 - m2) < 4.5 * np.hypot(s1, s2)
