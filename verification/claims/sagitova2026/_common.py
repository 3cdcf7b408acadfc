"""Helpers shared by the sections of Sagitova, Duranthon, Zdeborová (2026): the paper id, the
model constants, the saddle rate of Lemma III.1 (``saddle_rate``, from the stored saddle Hessian
``common.saddle_hessian_at``), the escape runs shared by Prop. III.4 and Conj. III.1
(``escape_runs``: the items of ``sec3_specialization.escape_piece``) and the per-row slopes they
are judged by (``mean_row_slope``). What these claims simulate is in
``verification.simulations.sagitova2026``."""

from __future__ import annotations

import numpy as np

from ...domain import Domain, Integers, Interval
from ...simulations.sagitova2026.common import (ESCAPE_BATCH, ESCAPE_KAPPA, ESCAPE_NU, L, SIGMA0,
                                                escape_prior, rate_of, saddle_hessian_at,
                                                small_init, stretch_of)
from ...simulations.sagitova2026.sec3_specialization import escape_piece

__all__ = ["PAPER", "L", "SIGMA0", "small_init", "quantile_text", "saddle_rate", "escape_runs",
           "escape_stretch", "ESCAPE_DOMAIN", "ESCAPE_POINT", "mean_row_slope", "MIN_FIT_ROWS"]

PAPER = "sagitova2026"


_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def quantile_text(check) -> str:
    """The critical value a check judged at, as a summary writes it: "t₆₃ = 4.35" for a
    Student-t quantile (standard errors from few replicates), "z = 3.89" for a normal one."""
    dof = check.details.get("dof_min", check.details.get("dof"))
    if dof is None or not np.isfinite(dof):
        return f"z = {check.z:.2f}"
    return f"t{str(int(round(dof))).translate(_SUBSCRIPT)} = {check.z:.2f}"


def saddle_rate(ctx, prior, H):
    """λ = −(most negative eigenvalue) of the symbolic saddle Hessian (Lemma III.1) for the
    prior's moments, with its eigenvalues and eigenvectors: |m| grows like e^{λτ} near m = 0,
    r = 0 (the Hessian at the prior: a stored simulation, its SymPy derivation takes seconds)."""
    hessian, = ctx.map(saddle_hessian_at, [{"prior": prior, "H": int(H)}])
    return rate_of(hessian)


# --- the escape from the saddle (Prop. III.4, Conj. III.1) --------------------------------------
MAX_NEVER_ESCAPED = 0.05         # share of SGD runs per D that may stay censored at the horizon

ESCAPE_POINT = {"H": 2, "nu1": ESCAPE_NU[0], "nu2": ESCAPE_NU[1]}
"""The escape set-up as first checked: H = 2, θ ~ N(0, diag(4, 1.5)) (Prop. III.4 and Conj.
III.1's quick and full point)."""

ESCAPE_DOMAIN = Domain({"H": Integers(2, 4), "nu1": Interval(2.0, 8.0, log=True),
                        "nu2": Interval(0.5, 8.0, log=True)},
                       where={"ν₁ ≥ ν₂ (the spectrum in decreasing order)":
                              lambda nu1, nu2: nu1 >= nu2},
                       reference=ESCAPE_POINT)
"""The escape set-up's coordinates (Prop. III.4, Conj. III.1): H heads, θ ~ N(0, diag(ν₁,
ν₂)) (Eθ = 0: m = 0 is the saddle); softmax, F = 2, L = 4."""


def escape_stretch(ctx, prior, H):
    """How much the escape's τ horizons (ODE ``ESCAPE_HORIZON``, SGD ``SGD_ESCAPE_HORIZON``)
    are stretched for a prior and H: λ₀/λ where the saddle rate λ (``saddle_rate``) is below
    λ₀ of the first-checked set-up (N(0, diag(4, 1.5)), H = 2), else 1 (escape takes about
    ln D/(2λ))."""
    return stretch_of(saddle_rate(ctx, prior, H)[0], saddle_rate(ctx, escape_prior(), 2)[0])


def escape_runs(profile, seed, prior_key=ESCAPE_NU, dims=None, seeds=None, sgd_dims=None,
                sgd_seeds=None, ctx=None, H=2):
    """Escape times τ_esc(seed, D) of the ODE from keys ~ N(0, σ₀²I/D) (one Gaussian draw per
    seed, reused at every D) and of online SGD (Gram-matrix simulator, exact in law);
    shared by Prop. III.4 and Conj. III.1, for H heads and θ ~ N(0, diag(``prior_key``)). The
    keyword arguments shrink the runs for tests.

    Each ODE seed, each SGD dimension and each κ-ODE seed is a stored simulation
    (``escape_piece``), run once whichever of the two claims asks first and spread over the
    engine's workers. The items carry the seeds derived from the run seed and the setting of
    the claim's domain, so two claims share exactly the runs of the same setting."""
    from ...context import Context
    ctx = ctx or Context(profile=profile, seed=seed)
    dims = list(dims or ctx.pick([1e2, 1e4, 1e6, 1e8], [1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10]))
    seeds = seeds or ctx.pick(6, 16)
    sgd_dims = list(sgd_dims or ctx.pick([100, 400, 1600], [100, 400, 1600, 6400, 25600]))
    sgd_seeds = sgd_seeds or ctx.pick(64, 128)
    base = {"prior": [float(v) for v in prior_key], "H": int(H), "draws": seeds, "dims": dims,
            "sgd_seeds": sgd_seeds, "ode_seed": ctx.claim_seed("escape:ode"),
            "init_seed": ctx.claim_seed("escape:init")}
    items = ([{**base, "kind": "ode", "i": i} for i in range(seeds)]
             + [{**base, "kind": "sgd", "D": D, "sgd_seed": ctx.claim_seed(f"escape:sgd:{D}")}
                for D in sgd_dims]
             + [{**base, "kind": "kappa", "i": i, "sgd_dims": sgd_dims} for i in range(min(seeds, 3))])
    out = ctx.map(escape_piece, items)
    ode = np.array(out[:seeds])
    sgd = np.ascontiguousarray(np.array(out[seeds:seeds + len(sgd_dims)]).T)
    ode_kappa = np.array(out[seeds + len(sgd_dims):])
    return {"dims": dims, "ode": ode, "sgd_dims": sgd_dims, "sgd": sgd, "kappa": ESCAPE_KAPPA,
            "batch": ESCAPE_BATCH, "n_qmc": ctx.pick(2**12, 2**14), "ode_kappa": ode_kappa,
            "stretch": escape_stretch(ctx, escape_prior(prior_key), H)}


MIN_FIT_ROWS = 3
"""Rows (draws, seeds) needed before the mean of per-row slopes gets a standard error worth
judging (a mean over 2 rows has 1 dof: its t quantile is useless)."""


def mean_row_slope(x, Y):
    """Least-squares slope of each row of Y on x, then mean and standard error over rows:
    (mean, standard error, the per-row slopes)."""
    x = np.asarray(x, float)
    s = [np.polyfit(x, y, 1)[0] for y in Y]
    return float(np.mean(s)), float(np.std(s, ddof=1) / np.sqrt(len(s))), s
