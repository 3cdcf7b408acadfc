"""Dohmatob (NeurIPS 2025), "Understanding Softmax Attention Layers: Exact Mean-Field Analysis
on a Toy Problem" (OpenReview GiqeRe1NsY). Spec: shared/spec/dohmatob2025.md.

So far this file holds the paper's statements about the random energy model formed by the
e^{αd} dummy tokens (Eqs. 14–18), as the paper states them: they are what the claims check.
The engine's own derivation of the same constants is ``theory.rem.rem_constants``."""

import sympy as sp

from ..rem import alpha, beta

__all__ = ["alpha", "beta", "d", "gamma", "mu", "nu", "zeta", "eta", "rho", "PAPER_BETA_C",
           "PAPER_PSI", "PAPER_R", "LINKS", "paper_localisation", "paper_risk", "paper_cor1_linear",
           "dual_kernel", "paper_oracle_risk", "OVERLAP_STRUCTURE", "MANIFOLD", "paper_flow", "PARAMS",
           "DEFAULT_LINK", "DEFAULT_PARAMS"]

PAPER_BETA_C = sp.sqrt(2 * alpha)
PAPER_PSI = sp.Piecewise((alpha / beta + beta / 2, beta <= PAPER_BETA_C), (PAPER_BETA_C, True))
PAPER_R = sp.Min(beta, PAPER_BETA_C)


# --- Prop. 1 as the paper states it ------------------------------------------------------
from ..gaussian import GaussianLaw, expect  # noqa: E402
from ..special import Relu  # noqa: E402

d = sp.Symbol("d", positive=True)
gamma = sp.Symbol("gamma", positive=True)
mu, nu, zeta, eta, rho = sp.symbols("mu nu zeta eta rho", real=True)
_g1, _g2, _t = sp.symbols("g1 g2 t", real=True)

LINKS = {"linear": sp.Lambda(_t, _t), "quadratic": sp.Lambda(_t, _t**2),
         "relu": sp.Lambda(_t, Relu(_t))}


def paper_localisation(psi=PAPER_PSI):
    """p(µ) = 1/(1 + exp(−(cµ − ψ)βd)), c = √(1 − γ²)."""
    c = sp.sqrt(1 - gamma**2)
    return 1 / (1 + sp.exp(-(c * mu - psi) * beta * d))


def paper_risk(link, psi=PAPER_PSI, r=PAPER_R) -> sp.Expr:
    """R̄(µ, ν, ζ, ρ) = p²·H1(1, ζ, ρ) − 2p·H2(ν, ζ, ρ) + H1(1, 0, ρ) (Prop. 1), with
    σ_{γ,ζ,ρ}(t) = σ(γt + cζ√d) − σ(ρ·r·√d) and H1, H2 Gaussian expectations over (G1, G2)
    of correlation ν, integrated by the engine's Gaussian layer."""
    sigma = LINKS[link] if isinstance(link, str) else link
    c = sp.sqrt(1 - gamma**2)
    s = lambda t, z: sigma(gamma * t + c * z * sp.sqrt(d)) - sigma(rho * r * sp.sqrt(d))

    def H(corr, z1, z2):
        law = GaussianLaw((_g1, _g2), sp.zeros(2, 1), sp.Matrix([[1, corr], [corr, 1]]))
        return expect(s(_g1, z1) * s(_g2, z2), law)

    p = paper_localisation(psi)
    return p**2 * H(1, zeta, zeta) - 2 * p * H(nu, zeta, 0) + H(1, 0, 0)


def paper_cor1_linear(psi=PAPER_PSI, r=PAPER_R) -> sp.Expr:
    """Cor. 1: R̄ = (p·c·ζ + (1 − p)·ρ·r)²·d + γ²(p² − 2pν + 1) for σ(t) = t."""
    c = sp.sqrt(1 - gamma**2)
    p = paper_localisation(psi)
    return (p * c * zeta + (1 - p) * rho * r) ** 2 * d + gamma**2 * (p**2 - 2 * p * nu + 1)


def dual_kernel(link, corr) -> sp.Expr:
    """σ̄_γ(ν) = E[σ(γG1)·σ(γG2)], (G1, G2) standard with correlation ν (engine-integrated)."""
    sigma = LINKS[link] if isinstance(link, str) else link
    law = GaussianLaw((_g1, _g2), sp.zeros(2, 1), sp.Matrix([[1, corr], [corr, 1]]))
    return expect(sigma(gamma * _g1) * sigma(gamma * _g2), law)


def paper_oracle_risk(link, psi=PAPER_PSI) -> sp.Expr:
    """Prop. 2: R(u*, v*) ≃ (1 − p(1))²·σ̄_γ(1)."""
    return (1 - paper_localisation(psi).subs(mu, 1)) ** 2 * dual_kernel(link, 1)


# --- dynamics: the Gram structure of (u, v; u*, v*) on which the engine derives the flow ----
import math  # noqa: E402

from ..model import Geometry, Param, Vector  # noqa: E402

OVERLAP_STRUCTURE = Geometry(
    hidden=("u_star", "v_star"), trainable=(Vector("u", "sphere"), Vector("v", "sphere")),
    overlaps={("u", "u_star"): mu, ("v", "v_star"): nu, ("v", "u_star"): zeta,
              ("u", "v_star"): eta, ("u", "v"): rho},
    name="dohmatob2025-overlaps")
"""Projected gradient flow of (u, v) on the spheres (Dohmatob 2025, Sec. 4): the order
parameters µ = uᵀu*, ν = vᵀv*, ζ = vᵀu*, η = uᵀv*, ρ = uᵀv."""
MANIFOLD = {zeta: 0, eta: 0, rho: 0}      # M = {u ⊥ v*, v ⊥ u*, u ⊥ v}

PARAMS = (
    Param(d, 1, math.inf, integer=True, doc="embedding dimension d"),
    Param(alpha, 0, math.inf, open_low=True, open_high=True,
          doc="log-number of dummy tokens per dimension α (e^{αd} tokens)"),
    Param(beta, 0, math.inf, open_low=True, open_high=True, doc="inverse temperature β of the softmax"),
    Param(gamma, 0, 1, open_low=True, doc="noise level γ of the signal token, c = √(1 − γ²)"),
)
"""The parameters of R̄ (Prop. 1) with their ranges."""

DEFAULT_LINK = "linear"
DEFAULT_PARAMS = {"d": 50, "alpha": 0.1, "beta": 1.0, "gamma": 0.6}
"""Defaults for the command line: the first exact setting of the stationary-point claims
(α = 1/10, β = 1, γ = 3/5: ψ < c, learnable) at their smallest d = 50."""


def paper_flow(link, risk=None):
    """The overlap flow of projected gradient flow on R̄, derived by the Gram-matrix chain rule."""
    from ..dynamics import overlap_flow
    return overlap_flow(OVERLAP_STRUCTURE, paper_risk(link) if risk is None else risk)
