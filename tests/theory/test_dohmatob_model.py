"""Dohmatob 2025 model layer: the engine's R̄ against independent quadrature of its defining
formula, and the derived overlap flow against autograd of R̄ in vector coordinates."""

import numpy as np
from scipy.integrate import quad
from scipy.stats import norm
import sympy as sp
import torch
from hypothesis import given, settings, strategies as st

from theory.quadrature import evaluate
from theory.models import dohmatob2025 as dm

NP = {"linear": lambda t: t, "quadratic": lambda t: t**2, "relu": lambda t: np.maximum(t, 0)}


def _unit_pair(draw_vec):
    u, v = (np.asarray(x, float) for x in draw_vec)
    return u / np.linalg.norm(u), v / np.linalg.norm(v)


vec4 = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda x: np.linalg.norm(x) > 0.2)


def _overlaps(u, v):
    return {dm.mu: u[0], dm.nu: v[1], dm.zeta: v[0], dm.eta: u[1], dm.rho: float(u @ v)}


def _inner_mean(link, m, c0):
    """E s(mZ + c0), Z ~ N(0, 1), m ≥ 0, in closed form (one Gaussian variable)."""
    if link == "linear":
        return c0
    if link == "quadratic":
        return m**2 + c0**2
    if m == 0:
        return max(c0, 0.0)
    return m * norm.pdf(c0 / m) + c0 * norm.cdf(c0 / m)


def _reference_risk(link, a, b, g, d, q):
    """p²H1(1, ζ, ρ) − 2pH2(ν, ζ, ρ) + H1(1, 0, ρ), ψ and r from the paper's formulas, with
    H(corr) = E σ(G1)σ(G2) for (G1, G2) = (t, corr·t + √(1−corr²)Z): the expectation over Z in
    closed form, the one over t by adaptive quadrature split at the ReLU kinks (a fixed
    Gauss–Hermite rule converges slowly on a kinked integrand)."""
    s = NP[link]
    psi = float(dm.PAPER_PSI.subs({dm.alpha: a, dm.beta: b}))
    r = float(dm.PAPER_R.subs({dm.alpha: a, dm.beta: b}))
    c = np.sqrt(1 - g**2)
    mu, nu, ze, rh = (float(q[k]) for k in (dm.mu, dm.nu, dm.zeta, dm.rho))
    k = float(s(rh * r * np.sqrt(d)))

    def H(corr, z1, z2):
        A1, A2, sd = c * z1 * np.sqrt(d), c * z2 * np.sqrt(d), np.sqrt(max(1 - corr**2, 0.0))
        f = lambda t: (norm.pdf(t) * (float(s(g * t + A1)) - k)
                       * (_inner_mean(link, g * sd, g * corr * t + A2) - k))
        kinks = sorted({-A1 / g} | ({-A2 / (g * corr)} if sd == 0 else set()))
        ends = [-np.inf, *kinks, np.inf] if link == "relu" else [-np.inf, np.inf]
        return sum(quad(f, lo, hi, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
                   for lo, hi in zip(ends, ends[1:]))

    p = 1 / (1 + np.exp(-(c * mu - psi) * b * d))
    return p**2 * H(1, ze, ze) - 2 * p * H(nu, ze, 0) + H(1, 0, 0)


@settings(max_examples=8, deadline=None)
@given(link=st.sampled_from(sorted(NP)), a=st.floats(0.02, 0.6), b=st.floats(0.2, 2.0),
       g=st.floats(0.2, 0.9), d=st.integers(5, 60), uv=st.tuples(vec4, vec4))
def test_engine_risk_matches_quadrature_of_the_defining_formula(link, a, b, g, d, uv):
    u, v = _unit_pair(uv)
    q = _overlaps(u, v)
    vals = {dm.alpha: a, dm.beta: b, dm.gamma: g, dm.d: d, **q}
    engine = evaluate(dm.paper_risk(link), vals)
    ref = _reference_risk(link, a, b, g, d, q)
    assert abs(engine - ref) <= 1e-8 * max(1.0, abs(ref)), (engine, ref)


@settings(max_examples=6, deadline=None)
@given(link=st.sampled_from(["linear", "quadratic"]), a=st.floats(0.02, 0.6), b=st.floats(0.2, 2.0),
       g=st.floats(0.2, 0.9), d=st.integers(5, 40), uv=st.tuples(vec4, vec4))
def test_derived_flow_is_minus_the_projected_autograd_gradient(link, a, b, g, d, uv):
    """In the frame (u*, v*, e3, e4): u̇ = −P⊥_u∇_uR̄ by torch autograd, then µ̇ = u̇·u* etc.
    must equal the engine's Gram-chain-rule flow."""
    u, v = _unit_pair(uv)
    flow = dm.paper_flow(link)
    num = {dm.alpha: a, dm.beta: b, dm.gamma: g, dm.d: d}
    syms = (dm.mu, dm.nu, dm.zeta, dm.eta, dm.rho)
    sqrt = lambda x: torch.sqrt(torch.as_tensor(x, dtype=torch.float64))
    Rt = sp.lambdify(syms, dm.paper_risk(link).subs(num), modules=[{"sqrt": sqrt}, "torch"])
    U = torch.tensor(u, dtype=torch.float64, requires_grad=True)
    V = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    R = Rt(U[0], V[1], V[0], U[1], U @ V)
    gu, gv = torch.autograd.grad(R, (U, V))
    du = -(gu - (gu @ U) * U).detach().numpy()
    dv = -(gv - (gv @ V) * V).detach().numpy()
    expected = {dm.mu: du[0], dm.nu: dv[1], dm.zeta: dv[0], dm.eta: du[1], dm.rho: du @ v + u @ dv}
    q = _overlaps(u, v)
    for s, rhs in flow.as_dict().items():
        got = float(rhs.subs(num).subs(q))
        assert abs(got - expected[s]) <= 1e-8 * max(1.0, abs(expected[s])), (s, got, expected[s])
