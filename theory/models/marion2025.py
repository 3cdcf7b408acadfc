"""Marion, Berthier, Biau, Boyer (ICLR 2025), "Attention layers provably solve single-location
regression", arXiv 2410.01537.

Tokens x_1..x_L ∈ R^d, hidden location J uniform on [L]; x_ℓ ~ N(0, I_d) for ℓ ≠ J and
x_J ~ N(√(d/2)·k*, γ²·I_d). Label y = x_Jᵀv* + ε·ξ. Predictor
T(X) = Σ_ℓ erf(λ·x_ℓᵀk)·(x_ℓᵀv) with (k, v) ∈ S^{d−1} × S^{d−1}.
Order parameters κ = kᵀk*, ν = vᵀv*, θ = vᵀk*, η = kᵀv*, ρ = kᵀv.
"""

import math
from dataclasses import replace

import sympy as sp

from ..model import GaussianToken, Geometry, Model, Param, SingleLocation, Vector, projection

d = sp.Symbol("d", positive=True)
L = sp.Symbol("L", positive=True)
lam = sp.Symbol("lam", positive=True)
gamma = sp.Symbol("gamma", positive=True)
eps = sp.Symbol("eps", nonnegative=True)
kappa, nu, theta, eta, rho = sp.symbols("kappa nu theta eta rho", real=True)


GEOMETRY = Geometry(
    hidden=("k_star", "v_star"), trainable=(Vector("k", "sphere"), Vector("v", "sphere")),
    overlaps={("k", "k_star"): kappa, ("v", "v_star"): nu, ("v", "k_star"): theta,
              ("k", "v_star"): eta, ("k", "v"): rho},
    name="marion2025")
MANIFOLD = {theta: 0, eta: 0, rho: 0}     # M = {θ = η = ρ = 0} (Sec. 5)


SIGNAL_MEAN = sp.sqrt(d / 2)         # the signal token's mean along k*: √(d/2)


def build(activation=sp.erf, signal_mean=SIGNAL_MEAN, name="marion2025") -> Model:
    """The model; ``activation`` and the signal strength are swappable for variants."""
    xk, xv, xvs = projection("k"), projection("v"), projection("v_star")
    return Model(
        name=name,
        geometry=replace(GEOMETRY, name=name),
        params=(
            Param(d, 1, math.inf, integer=True, doc="embedding dimension"),
            Param(L, 1, math.inf, integer=True, doc="number of tokens"),
            Param(lam, 0, math.inf, open_low=True, open_high=True, doc="attention temperature λ"),
            Param(gamma, 0, math.inf, open_low=True, open_high=True, doc="signal-token std γ"),
            Param(eps, 0, math.inf, open_high=True, doc="label-noise std ε"),
        ),
        data=SingleLocation(L=L,
                            signal=GaussianToken(mean={"k_star": signal_mean}, scale=gamma),
                            noise=GaussianToken()),
        student=activation(lam * xk) * xv,
        label=xvs,
        label_noise=eps,
        dimension=d,
        citation="Marion, Berthier, Biau, Boyer, ICLR 2025 (arXiv 2410.01537)",
    )


MODEL = build()

DEFAULT_PARAMS = {"d": 20, "L": 3, "lam": 0.7, "gamma": 0.8, "eps": 0.3}
"""Defaults for the command line (the README's example point)."""
DEFAULT_STATE = {"kappa": 0.5, "nu": 0.4, "theta": 0.0, "eta": 0.0, "rho": 0.0}
