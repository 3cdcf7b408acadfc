"""Stationary points, Jacobians, Hessians and their eigen-classification."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp
from scipy import optimize

__all__ = ["hessian", "classify", "StationaryPoint", "find_stationary_points",
           "ExactStationaryPoint", "stationary_points_exact", "classify_exact", "factors",
           "roots_1d", "factor_roots", "RefinedRoot", "refine_root"]

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


@dataclass(frozen=True)
class RefinedRoot:
    """A root refined in high precision: ``x`` (mpmath numbers; the start when refinement
    failed), ``residual`` = max_i |f_i(x)| at the working precision (NaN when it failed),
    ``converged`` and, on failure, the solver's ``message``."""

    x: tuple
    residual: float
    converged: bool
    message: str = ""


@functools.lru_cache(maxsize=64)
def _mpmath_function(exprs: tuple, variables: tuple):
    # mpmath code keeps SymPy's exact numbers (√5, 1/10) exact at any precision, which the
    # float code generator rounds to 17 digits by design
    return sp.lambdify(variables, list(exprs), modules="mpmath")


def refine_root(exprs: Sequence, variables: Sequence, x0: Sequence[float], dps: int = 40,
                tol: float = 1e-30) -> RefinedRoot:
    """Refine a root of the square system f(x) = 0 (SymPy expressions ``exprs`` in
    ``variables``, numbers substituted) from ``x0`` by mpmath's multidimensional Newton
    (``mpmath.findroot``) at ``dps`` digits to tolerance ``tol``. Never raises for a failed
    refinement (singular Jacobian, no convergence): the result says so, with residual NaN."""
    exprs, variables = tuple(sp.sympify(e) for e in exprs), tuple(variables)
    if len(exprs) != len(variables) or len(x0) != len(variables):
        raise ValueError(f"refine_root: {len(exprs)} equations, {len(variables)} variables and "
                         f"{len(x0)} starting values must agree")
    if not (isinstance(dps, int) and dps >= 15):
        raise ValueError(f"dps={dps!r} must be an integer ≥ 15")
    if not tol > 0:
        raise ValueError(f"tol={tol!r} must be > 0")
    fm = _mpmath_function(exprs, variables)
    with mpmath.workdps(dps):
        try:
            x = mpmath.findroot(lambda *z: fm(*z), [mpmath.mpf(v) for v in x0], tol=tol)
            residual = float(max(abs(v) for v in fm(*x)))
        except (ZeroDivisionError, ValueError) as err:
            return RefinedRoot(tuple(mpmath.mpf(v) for v in x0), float("nan"), False, str(err))
    return RefinedRoot(tuple(x), residual, True)


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


def factors(expr) -> tuple[list, sp.Expr]:
    """Non-constant multiplicative factors of expr's numerator and its denominator:
    expr = c·Π f_i^{k_i} / den with the f_i returned (multiplicities dropped). Function
    applications and non-integer powers are treated as generators, so that a factor such as
    p(µ) − 1 = −e^{−x}/(1 + e^{−x}) cancels exactly instead of below the working precision."""
    num, den = sp.fraction(sp.together(expr))
    atoms = [a for a in num.atoms(sp.Function, sp.Pow)
             if not (isinstance(a, sp.Pow) and a.exp.is_Integer)]
    rep = {a: sp.Dummy(f"g{i}") for i, a in enumerate(atoms)}
    back = {v: k for k, v in rep.items()}
    _, fl = sp.factor_list(num.xreplace(rep))
    return [f.xreplace(back) for f, _ in fl if f.free_symbols], den


def roots_1d(f, x, lo, hi, dps: int = 50, grid: int = 2000) -> list:
    """Zeros of the scalar expression f(x) on [lo, hi] (mpmath numbers, sorted, deduplicated
    to 10^−(dps/2)): sign changes on a uniform grid of ``grid`` intervals refined by root
    bracketing (Anderson), plus grid points and endpoints where f vanishes relative to the
    size of its own terms, |f| ≤ 10^−(dps−10)·Σ|terms| (a relative test: the factors of the
    papers' flows vary over hundreds of orders of magnitude). Computed at ``dps`` digits."""
    if not (isinstance(dps, int) and dps > 10):
        raise ValueError(f"dps={dps!r} must be an integer > 10")
    if not (isinstance(grid, int) and grid >= 1):
        raise ValueError(f"grid={grid!r} must be an integer ≥ 1")
    if not lo < hi:
        raise ValueError(f"the interval [lo, hi] = [{lo}, {hi}] must have lo < hi")
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


def factor_roots(expr, x, lo=-1, hi=1, dps: int = 50, grid: int = 2000) -> list:
    """Zeros of expr(x) on [lo, hi] found factor by factor (see :func:`factors`): the
    numerator is factored first, each non-constant factor depending on x is solved by
    :func:`roots_1d`. Returns the roots of all factors (mpmath numbers, possibly repeated
    across factors), factor by factor."""
    roots = []
    for f in factors(expr)[0]:
        if f.is_positive or f.is_negative or x not in f.free_symbols:
            continue
        roots += roots_1d(f, x, lo, hi, dps, grid)
    return roots


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


def _one_variable_first(f, g, variables, box):
    """Order a factor pair (f of the first component, g of the second) so that the first
    equation has one variable: (h1, v1, box1, h2, v2, box2, v1_is_x), or None."""
    (x, y), (bx, by) = variables, box
    if g.free_symbols <= {y}:
        return g, y, by, f, x, bx, False
    if f.free_symbols <= {x}:
        return f, x, bx, g, y, by, True
    if g.free_symbols <= {x}:
        return g, x, bx, f, y, by, True
    if f.free_symbols <= {y}:
        return f, y, by, g, x, bx, False
    return None


def _solve_pair(pair, dps, grid):
    """Common zeros of a factor pair whose first member has one variable: the first is solved,
    the second solved at each of its roots. Returns (points as (x, y), curves of zeros)."""
    h1, v1, b1, h2, v2, b2, first_is_x = pair
    points, curves = [], []
    for r1 in roots_1d(h1, v1, *b1, dps, grid):
        r1 = _exact(r1, dps)
        h2r = h2.subs(v1, r1)
        if not h2r.free_symbols:
            if sp.simplify(h2r) == 0:
                curves.append((str(v1), r1))
            continue
        for r2 in roots_1d(h2r, v2, *b2, dps, grid):
            r2 = _exact(r2, dps)
            points.append((r1, r2) if first_is_x else (r2, r1))
    return points, curves


def _unique_points(points, dps):
    unique = []
    for p in points:
        if not any(all(abs(sp.N(a - b, dps)) < 10 ** (-(dps // 2)) for a, b in zip(p, q))
                   for q in unique):
            unique.append(p)
    return sorted(unique, key=lambda p: tuple(float(t) for t in p))


def stationary_points_exact(rhs, variables, box, dps: int = 50, grid: int = 2000):
    """All zeros of a 2-D vector field ``rhs`` (SymPy, numbers substituted) in ``box``: each
    component is factored and every pair of factors is solved, one variable at a time.
    Returns (points as tuples of SymPy numbers, unresolved factor pairs, curves of zeros)."""
    fx, _ = factors(rhs[0])
    fy, _ = factors(rhs[1])
    points, unresolved, curves = [], [], []
    for f in fx:
        for g in fy:
            if f.is_positive or f.is_negative or g.is_positive or g.is_negative:
                continue
            pair = _one_variable_first(f, g, variables, box)
            if pair is None:
                unresolved.append((f, g))
                continue
            found, lines = _solve_pair(pair, dps, grid)
            points += found
            curves += lines
    return _unique_points(points, dps), unresolved, curves


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
