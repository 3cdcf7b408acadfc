"""Stationary points, Jacobians, Hessians and their eigen-classification."""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp
from scipy import optimize

__all__ = ["hessian", "classify", "StationaryPoint", "find_stationary_points",
           "ExactStationaryPoint", "stationary_points_exact", "classify_exact"]

CLASSES = ("sink", "source", "saddle", "degenerate")


def hessian(expr, variables) -> sp.Matrix:
    return sp.hessian(expr, list(variables))


def classify(eigenvalues, tol: float = 1e-9) -> str:
    """Class of a stationary point of ẋ = f(x) from the eigenvalues of ∂f/∂x:
    sink (all Re < −tol), source (all Re > tol), saddle (both signs), degenerate (some |Re| ≤ tol)."""
    re = np.real(np.asarray(eigenvalues, dtype=complex))
    if np.any(np.isnan(re)):
        raise ValueError("classify: eigenvalues contain NaN")
    if np.any(np.abs(re) <= tol):
        return "degenerate"
    if np.all(re < 0):
        return "sink"
    if np.all(re > 0):
        return "source"
    return "saddle"


@dataclass(frozen=True)
class StationaryPoint:
    x: tuple
    eigenvalues: tuple
    kind: str
    residual: float


def find_stationary_points(rhs, jac, box, n_starts=64, seed=0, tol=1e-10, merge=1e-6,
                           eig_tol=1e-9):
    """Zeros of ``rhs`` in the box [(lo, hi), ...] by Newton-type root finding (with the
    analytic ``jac``) from scrambled-Sobol starting points; duplicates merged, each classified."""
    from scipy.stats import qmc

    lo = np.array([b[0] for b in box], float)
    hi = np.array([b[1] for b in box], float)
    starts = qmc.scale(qmc.Sobol(len(box), seed=seed).random(n_starts), lo, hi)
    found = []
    for x0 in starts:
        try:
            sol = optimize.root(lambda x: np.asarray(rhs(x), float), x0,
                                jac=lambda x: np.asarray(jac(x), float), method="hybr")
        except (ValueError, np.linalg.LinAlgError):
            continue
        x = sol.x
        if not np.all(np.isfinite(x)) or np.any(x < lo - 1e-9) or np.any(x > hi + 1e-9):
            continue
        res = float(np.max(np.abs(rhs(x))))
        if res > tol:
            continue
        if any(np.max(np.abs(x - p.x)) < merge for p in found):
            continue
        eig = np.linalg.eigvals(np.asarray(jac(x), float))
        found.append(StationaryPoint(tuple(x), tuple(eig), classify(eig, eig_tol), res))
    return sorted(found, key=lambda p: p.x)


# --- exact-arithmetic route for flows with exponentially small rates -----------------------
# Where rates are products such as p′(µ) ≈ βd·e^{−βd|cµ−ψ|}, floating-point root finding and
# eigenvalue thresholds cannot tell "exponentially small" from "zero". Here the right-hand
# side is factored symbolically, each factor's zeros are located in high precision, and the
# Jacobian is evaluated exactly (limits at removable singularities), so an eigenvalue is
# called zero only when it is zero symbolically.



@dataclass(frozen=True)
class ExactStationaryPoint:
    x: tuple               # mpmath numbers (exact rationals where the zero is rational)
    eigenvalues: tuple     # mpmath numbers, high relative precision
    exact_zero: tuple      # eigenvalue is zero symbolically
    kind: str


def _factors(expr):
    """Non-constant multiplicative factors of expr's numerator (functions treated as generators)
    and its denominator."""
    num, den = sp.fraction(sp.together(expr))
    atoms = [a for a in num.atoms(sp.Function, sp.Pow) if not (isinstance(a, sp.Pow) and a.exp.is_Integer)]
    rep = {a: sp.Dummy(f"g{i}") for i, a in enumerate(atoms)}
    back = {v: k for k, v in rep.items()}
    _, fl = sp.factor_list(num.xreplace(rep))
    return [f.xreplace(back) for f, _ in fl if f.free_symbols], den


def _roots_1d(f, x, lo, hi, dps, grid):
    """Zeros of f(x) on [lo, hi]: sign changes on a grid refined by root bracketing, plus grid
    points and endpoints where f vanishes relative to the size of its own terms (a relative
    test: these factors vary over hundreds of orders of magnitude)."""
    with mpmath.workdps(dps):
        fn = sp.lambdify(x, f, modules="mpmath")
        size = sp.lambdify(x, sp.Add(*[abs(t) for t in sp.Add.make_args(sp.expand(f))]),
                           modules="mpmath")
        xs = [mpmath.mpf(lo) + (mpmath.mpf(hi) - lo) * k / grid for k in range(grid + 1)]
        vals, roots = [], []
        for t in xs:
            try:
                v = mpmath.re(fn(t))
                if abs(v) <= mpmath.mpf(10) ** (-(dps - 10)) * size(t):
                    roots.append(t)
            except (ZeroDivisionError, ValueError):
                v = mpmath.nan
            vals.append(v)
        for (a, fa), (b, fb) in zip(zip(xs, vals), zip(xs[1:], vals[1:])):
            if mpmath.isfinite(fa) and mpmath.isfinite(fb) and fa * fb < 0:
                roots.append(mpmath.findroot(lambda t: mpmath.re(fn(t)), (a, b), solver="anderson"))
    return _dedupe(roots, dps)


def _dedupe(xs, dps):
    out = []
    for t in sorted(xs):
        if not out or abs(t - out[-1]) > mpmath.mpf(10) ** (-(dps // 2)):
            out.append(t)
    return out


def _exact(t, dps):
    """A rational close to t within 10^-(dps−10) if it has a small denominator, else t."""
    q = sp.nsimplify(sp.Float(t, dps), rational=True, tolerance=10 ** (-(dps - 10)))
    return q if q.q <= 1000 else sp.Float(t, dps)


def stationary_points_exact(rhs, variables, box, dps=50, grid=2000):
    """All zeros of a 2-D vector field ``rhs`` (SymPy, numbers substituted) in ``box``: each
    component is factored and every pair of factors is solved, one variable at a time.
    Returns (points as tuples of SymPy numbers, unresolved factor pairs)."""
    (x, y), ((xl, xh), (yl, yh)) = variables, box
    fx, dx = _factors(rhs[0])
    fy, dy = _factors(rhs[1])
    points, unresolved, curves = [], [], []
    for f in fx:
        for g in fy:
            if f.is_positive or f.is_negative or g.is_positive or g.is_negative:
                continue
            pair = None
            if g.free_symbols <= {y}:
                pair = (g, y, (yl, yh), f, x, (xl, xh), False)
            elif f.free_symbols <= {x}:
                pair = (f, x, (xl, xh), g, y, (yl, yh), True)
            elif g.free_symbols <= {x}:
                pair = (g, x, (xl, xh), f, y, (yl, yh), True)
            elif f.free_symbols <= {y}:
                pair = (f, y, (yl, yh), g, x, (xl, xh), False)
            if pair is None:
                unresolved.append((f, g))
                continue
            h1, v1, b1, h2, v2, b2, first_is_x = pair
            for r1 in _roots_1d(h1, v1, *b1, dps, grid):
                r1 = _exact(r1, dps)
                h2r = h2.subs(v1, r1)
                if not h2r.free_symbols:
                    if sp.simplify(h2r) == 0:
                        curves.append((str(v1), r1))
                    continue
                for r2 in _roots_1d(h2r, v2, *b2, dps, grid):
                    r2 = _exact(r2, dps)
                    points.append((r1, r2) if first_is_x else (r2, r1))
    unique = []
    for p in points:
        if not any(all(abs(sp.N(a - b, dps)) < 10 ** (-(dps // 2)) for a, b in zip(p, q)) for q in unique):
            unique.append(p)
    return sorted(unique, key=lambda p: tuple(float(t) for t in p)), unresolved, curves


def _entry_at(e, variables, point, box):
    """e at the point; removable singularities on the box boundary by one-sided limits."""
    v = e.subs(dict(zip(variables, point)))
    if not v.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return v
    v = e
    for var, t, (lo, hi) in zip(variables, point, box):
        side = "+" if t == lo else "-" if t == hi else "+-"
        v = sp.limit(v, var, t, side)
    return v


def classify_exact(rhs, variables, point, box, dps=50) -> ExactStationaryPoint:
    """Eigenvalues of the Jacobian at ``point`` with exact zero detection: for a triangular
    Jacobian (the usual case on invariant edges) the eigenvalues are its diagonal entries,
    whose signs are evaluated with relative precision whatever their magnitude."""
    J = sp.Matrix(rhs).jacobian(sp.Matrix(variables))
    Jp = J.applyfunc(lambda e: sp.simplify(_entry_at(e, variables, point, box)))
    n = J.shape[0]
    lower = all(Jp[i, j] == 0 for i in range(n) for j in range(i + 1, n))
    upper = all(Jp[i, j] == 0 for i in range(n) for j in range(i))
    with mpmath.workdps(dps):
        if lower or upper:
            eig = [Jp[i, i] for i in range(n)]
            zero = tuple(bool(sp.simplify(e) == 0) for e in eig)
            vals = tuple(mpmath.mpf(sp.N(e, dps)) for e in eig)
        else:
            M = mpmath.matrix([[sp.N(Jp[i, j], dps) for j in range(n)] for i in range(n)])
            vals = tuple(mpmath.eig(M)[0])
            zero = tuple(False for _ in vals)
    re = [0 if z else mpmath.re(v) for v, z in zip(vals, zero)]
    if any(zero):
        kind = "degenerate"
    elif all(r < 0 for r in re):
        kind = "sink"
    elif all(r > 0 for r in re):
        kind = "source"
    else:
        kind = "saddle"
    return ExactStationaryPoint(tuple(point), vals, zero, kind)
