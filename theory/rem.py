"""Random-energy-model constants, derived by Laplace's method (Derrida 1981; used by
Dohmatob 2025, Eqs. 14–18).

N = e^{αd} i.i.d. energies E_ℓ ~ N(0, d); the number of levels with E ≈ εd is
exp(d·(α − ε²/2)), so (1/d)·log Σ_ℓ e^{βE_ℓ} → max_ε {α − ε²/2 + βε} over the support
α − ε²/2 ≥ 0. The maximiser is the Gibbs mean energy density r = lim Σ q_ℓ E_ℓ/d, and
ψ = (1/β)·max. Here SymPy solves that variational problem: nothing below is typed in."""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

__all__ = ["alpha", "beta", "rem_constants"]

alpha = sp.Symbol("alpha", positive=True)
beta = sp.Symbol("beta", positive=True)
_eps = sp.Symbol("epsilon", real=True)


@lru_cache(maxsize=1)
def rem_constants() -> dict[str, sp.Expr]:
    """{'psi', 'r', 'beta_c', 'entropy', 'argmax'}: ψ(β, α), r(β, α), β_c(α) as SymPy."""
    entropy = alpha - _eps**2 / 2                     # log-density of levels, per d
    objective = entropy + beta * _eps
    interior = sp.solve(sp.diff(objective, _eps), _eps)
    edge = max(sp.solve(entropy, _eps), key=lambda e: e.subs(alpha, 1))  # support's upper end
    if len(interior) != 1:
        raise RuntimeError(f"unexpected stationary points {interior}")
    crit = interior[0]
    beta_c = sp.solve(sp.Eq(crit, edge), beta)[0]     # the interior optimum leaves the support
    argmax = sp.Piecewise((crit, beta <= beta_c), (edge, True))
    psi = sp.Piecewise((sp.simplify(objective.subs(_eps, crit) / beta), beta <= beta_c),
                       (sp.simplify(objective.subs(_eps, edge) / beta), True))
    r = sp.piecewise_fold(sp.diff(beta * psi, beta))
    return {"psi": psi, "r": sp.simplify(r), "beta_c": beta_c, "entropy": entropy,
            "argmax": argmax}
