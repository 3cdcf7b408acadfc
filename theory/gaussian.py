"""Symbolic Gaussian expectations.

``expect(f, law)`` returns E[f(g)] for a Gaussian vector g ~ N(μ, C) given symbolically.
The integrand is expanded into terms  coefficient × monomial(g) × Π_k φ_k(u_k(g)),  where
each u_k = a_k + b_kᵀg is a linear form and φ_k any differentiable function of one variable.
The rules, applied until no polynomial is left:

* multivariate Stein:  E[g_i·h(g)] = μ_i·E[h] + Σ_j C_ij·E[∂_j h]  (lowers the degree);
* erf′(u) = (2/√π)·exp(−u²) is absorbed by tilting the law (rank-one update of μ, C):
  E[exp(−u²)·h] = exp(−m²/(1+2s²))/√(1+2s²) · E′[h],  m = a + bᵀμ,  s² = bᵀCb,
  μ′ = μ − 2Cb·m/(1+2s²),  C′ = C − 2Cb·bᵀC/(1+2s²);
* exp(u) is absorbed likewise (exponential tilt: μ′ = μ + Cb);
* closed forms: E[erf(u)] = erf(m/√(1+2s²));
  E[erf(u)²] = 1 − 8·T(√2·m/√(1+2s²), 1/√(1+4s²))  (Owen's T);
  E[erf(u)·erf(u′)] = (2/π)·asin(2c/√((1+2s²)(1+2s′²))) when both means vanish;
  ReLU and its derivative H (Heaviside), with Φ, φ the standard normal cdf and density and
  h = m/s: E[H(u)] = Φ(h), E[ReLU(u)] = E[ReLU(u)·H(u)] = mΦ(h) + sφ(h),
  E[ReLU(u)²] = (m² + s²)Φ(h) + msφ(h); for zero means and cos θ = c/(s s′) (the arc-cosine
  kernels, Cho & Saul 2009): E[ReLU(u)ReLU(u′)] = (√(s²s′² − c²) + (π − θ)c)/(2π),
  E[H(u)ReLU(u′)] = (s′ + c/s)/(2√(2π)), E[H(u)H(u′)] = (π − θ)/(2π);
  sines and cosines of any linear forms, E sin(u) = sin(m)·e^{−s²/2}, E cos(u) = cos(m)·e^{−s²/2}
  (products of up to four of them through product-to-sum), and E exp(u) = e^{m + s²/2} (the
  exponential tilt above).

φ may be any expression in one linear form, however it is written: log(1 + exp(λx)),
1/(1 + exp(−x)) or tanh(x²) is recognised as φ(u) for the linear form u it depends on.
Whatever has no closed form is kept as an explicit :class:`GaussianExpectation` node over
K i.i.d. standard normals (K = number of distinct linear forms), evaluated numerically later
(Gauss–Hermite, quasi-Monte Carlo or Monte Carlo, by the numerical layer's expectations;
adaptive quadrature with its error by ``theory.quadrature``); a term whose factors are not
functions of one linear form each (tanh(g₁g₂)) becomes one node over the variables it depends
on. |u|, sign(u), max and min are written with ReLU and H first; δ(u) is absorbed by
conditioning the law on u = 0. The closed forms live in ``theory.gaussian_closed_forms``.
docs/functions.md lists what is supported.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
import operator

import mpmath
import sympy as sp

from . import gaussian_closed_forms as _closed
from .gaussian_closed_forms import _is, _Linear, _T
from .kinks import MPMATH_KINKS, breakpoints
from .special import OwensT, Relu

__all__ = ["GaussianLaw", "GaussianExpectation", "expect", "UnknownDerivative"]


@dataclass(frozen=True)
class GaussianLaw:
    """A Gaussian vector: ``variables`` ~ N(mean, cov), all given symbolically."""

    variables: tuple[sp.Symbol, ...]
    mean: sp.Matrix
    cov: sp.Matrix

    def __post_init__(self):
        n = len(self.variables)
        if n == 0:
            object.__setattr__(self, "mean", sp.zeros(0, 1))
            object.__setattr__(self, "cov", sp.zeros(0, 0))
            return
        if self.mean.shape != (n, 1) or self.cov.shape != (n, n):
            raise ValueError(f"GaussianLaw: mean must be {n}x1 and cov {n}x{n}, got "
                             f"{self.mean.shape} and {self.cov.shape}")


class GaussianExpectation(sp.Expr):
    """E_z[integrand(z)] over i.i.d. standard normals z = (z_1..z_K): a node kept unevaluated
    because no closed form is known. Differentiation passes under the integral sign."""

    is_commutative = True

    def __new__(cls, integrand: sp.Expr | float, *zs: sp.Symbol) -> sp.Expr:
        integrand = sp.sympify(integrand)
        if not any(z in integrand.free_symbols for z in zs):
            return integrand
        return sp.Expr.__new__(cls, integrand, *zs)

    @property
    def integrand(self) -> sp.Expr:
        return self.args[0]

    @property
    def variables(self) -> tuple[sp.Symbol, ...]:
        return self.args[1:]

    @property
    def free_symbols(self) -> set[sp.Basic]:
        return self.integrand.free_symbols - set(self.variables)

    def law(self) -> GaussianLaw:
        n = len(self.variables)
        return GaussianLaw(tuple(self.variables), sp.zeros(n, 1), sp.eye(n))

    def _eval_derivative(self, s):
        # differentiate under the integral, then let the closed-form rules try again
        return expect(sp.diff(self.integrand, s), self.law())

    def _eval_subs(self, old, new):
        if old in self.variables:
            return self
        integrand = self.integrand.subs(old, new)
        # a substitution can make a closed form reachable (a mean that becomes zero, ReLU's
        # arc-cosine kernels); only the functions that have closed forms can reach one, and
        # re-deriving the others (arctan's Stein terms) took minutes for nothing
        if _closable(integrand, self.variables):
            return expect(integrand, self.law())
        return GaussianExpectation(integrand, *self.variables)

    def conditioned(self) -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
        """The same expectation with the last variable integrated in closed form where the
        rules reach one (treating the others as constants): fewer dimensions, no kink left in
        that variable. Returns (integrand, remaining variables)."""
        *rest, last = self.variables
        inner = expect(self.integrand, GaussianLaw((last,), sp.zeros(1, 1), sp.eye(1)))
        if inner.has(GaussianExpectation) or not rest:
            return self.integrand, tuple(self.variables)
        return inner, tuple(rest)

    def _eval_evalf(self, prec):
        dps = mpmath.libmp.prec_to_dps(prec)
        integrand, zs = self.conditioned()
        integrand = integrand.evalf(dps + 5)
        if integrand.free_symbols - set(zs):
            return None
        f = sp.lambdify(zs, integrand, modules=[MPMATH_KINKS, "mpmath"])
        norm = 1 / mpmath.sqrt(2 * mpmath.pi) ** len(zs)
        w = lambda *z: f(*z) * mpmath.exp(-sum(t * t for t in z) / 2) * norm
        with mpmath.workdps(dps + 10):
            val = mpmath.quad(w, *[[-mpmath.inf, *breakpoints(integrand, z), mpmath.inf]
                                    for z in zs])
        return sp.Float(val, dps)

    def _latex(self, printer):
        zs = ",".join(printer._print(z) for z in self.variables)
        return rf"\mathbb{{E}}_{{{zs}}}\left[{printer._print(self.integrand)}\right]"

    def _sympystr(self, printer):
        return f"E_{{{', '.join(map(str, self.variables))}}}[{printer._print(self.integrand)}]"


# --------------------------------------------------------------------------------------------
# internal representation


@dataclass
class _Term:
    coef: sp.Expr
    mono: dict          # variable index -> power
    factors: list       # list of (Lambda in one variable, _Linear)
    law: GaussianLaw


def _linear_form(arg, variables):
    if not isinstance(arg, sp.Expr):        # a Piecewise's (expression, condition) pairs
        return None
    try:
        poly = sp.Poly(sp.expand(arg), *variables)
    except sp.PolynomialError:          # not a polynomial in the variables (exp(x), log(x), ...)
        return None
    if poly.total_degree() > 1:
        return None
    b = tuple(poly.coeff_monomial(v) for v in variables)
    a = poly.coeff_monomial(1)
    return _Linear(sp.sympify(a), tuple(sp.sympify(x) for x in b))


_GAUSS = sp.Lambda(_T, sp.exp(-_T**2))


def _negative_square(arg, variables):
    """Write a quadratic arg as const − (a + bᵀg)² when its quadratic part has rank one."""
    arg = sp.expand(arg)
    try:
        poly = sp.Poly(arg, *variables)
    except sp.PolynomialError:
        return None
    if poly.total_degree() != 2:
        return None
    A = sp.hessian(arg, variables)
    i = next((k for k in range(len(variables)) if A[k, k] != 0), None)
    if i is None or not (-A[i, i]).is_positive:
        return None
    bi = sp.sqrt(-A[i, i] / 2)
    b = [sp.simplify(A[j, i] / (-2 * bi)) for j in range(len(variables))]
    if any(sp.simplify(A[j, k] + 2 * b[j] * b[k]) != 0
           for j in range(len(variables)) for k in range(len(variables))):
        return None
    a = sp.simplify(-poly.coeff_monomial(variables[i]) / (2 * bi))
    const = sp.simplify(poly.coeff_monomial(1) + a**2)
    rest = sp.simplify(arg - (const - (a + sum(bj * v for bj, v in zip(b, variables)))**2))
    if rest != 0:
        return None
    return const, _Linear(a, tuple(b))


def _split_term(term, law):
    """coef × monomial × Π φ(u): returns a list of _Term or None if a factor is not of this form."""
    variables = law.variables
    vset = set(variables)
    coef = sp.S.One
    mono = {}
    factors = []
    for fac in sp.Mul.make_args(term):
        if not (fac.free_symbols & vset):
            coef *= fac
            continue
        base, exp = fac.as_base_exp()
        if base in vset and exp.is_Integer and exp > 0:
            i = variables.index(base)
            mono[i] = mono.get(i, 0) + int(exp)
            continue
        if exp.is_Integer and exp > 0 and isinstance(base, sp.Function) and (
                len(base.args) == 1 or isinstance(base, sp.Heaviside)):
            lin = _linear_form(base.args[0], variables)
            if lin is not None:
                fn = sp.Lambda(_T, base.func(_T, *base.args[1:]))
                factors.extend([(fn, lin)] * int(exp))
                continue
        elif isinstance(fac, sp.exp):
            lin = _linear_form(fac.args[0], variables)
            if lin is not None:
                factors.append((sp.Lambda(_T, sp.exp(_T)), lin))
                continue
            square = _negative_square(fac.args[0], variables)
            if square is not None:
                const, lin = square
                coef *= sp.exp(const)
                factors.append((_GAUSS, lin))
                continue
        composed = _composition(fac, variables)
        if composed is None:
            return None
        factors.append(composed)
    return _Term(coef, mono, factors, law)


def _composition(fac, variables):
    """A factor that is some function φ of one linear form u of the variables, however it is
    written (log(1 + exp(λx)), 1/(1 + exp(−x)), tanh(x²), ...): (Lambda φ, u), or None when it
    depends on the variables otherwise (then the whole term becomes one explicit node).

    The candidates for u are the linear forms among its functions' arguments and its powers'
    bases and exponents, then each variable it depends on when it depends on only one."""
    vset = set(variables)
    used = [v for v in variables if v in fac.free_symbols]
    seen, candidates = set(), []
    for sub in sp.preorder_traversal(sp.powsimp(fac, deep=True, combine="exp")):
        parts = sub.args if isinstance(sub, sp.Function) else sub.as_base_exp() if sub.is_Pow else ()
        for part in parts:
            lin = _linear_form(part, variables) if part.free_symbols & vset else None
            if lin is not None and lin.key() not in seen:
                seen.add(lin.key())
                candidates.append(lin)
    if len(used) == 1:
        candidates.append(_Linear(sp.S.Zero, tuple(sp.S.One if v == used[0] else sp.S.Zero
                                                   for v in variables)))
    for lin in candidates:
        i = next(k for k, b in enumerate(lin.b) if b != 0)
        rest = sum((b * v for b, v in zip(lin.b, variables) if v != variables[i]), sp.S.Zero)
        phi = fac.xreplace({variables[i]: (_T - lin.a - rest) / lin.b[i]})
        if phi.free_symbols & vset:
            phi = sp.expand(phi)          # exp(λ(u − b₂x₂))·exp(λb₂x₂) = exp(λu)
        if not phi.free_symbols & vset:
            return sp.Lambda(_T, phi), lin
    return None


def _tilt_square(law, lin):
    """Absorb exp(−u²) into the law; returns (normaliser, new law)."""
    m = lin.mean(law)
    s2 = lin.var(law)
    q = 1 + 2 * s2
    Cb = law.cov * sp.Matrix(lin.b)
    mean = law.mean - 2 * Cb * m / q
    cov = law.cov - 2 * Cb * Cb.T / q
    return sp.exp(-m**2 / q) / sp.sqrt(q), GaussianLaw(law.variables, mean, cov)


def _condition(law, lin):
    """Absorb δ(u) into the law: E[δ(u)·h] = p_u(0)·E[h | u = 0], the density of u at 0 times
    the law conditioned on u = 0 (a rank-one update, as for the tilts)."""
    m, s2 = lin.mean(law), lin.var(law)
    Cb = law.cov * sp.Matrix(lin.b)
    norm = sp.exp(-m**2 / (2 * s2)) / sp.sqrt(2 * sp.pi * s2)
    return norm, GaussianLaw(law.variables, law.mean - Cb * m / s2, law.cov - Cb * Cb.T / s2)


def _tilt_linear(law, lin):
    """Absorb exp(u) into the law; returns (normaliser, new law)."""
    Cb = law.cov * sp.Matrix(lin.b)
    norm = sp.exp(lin.mean(law) + lin.var(law) / 2)
    return norm, GaussianLaw(law.variables, law.mean + Cb, law.cov)


def _expect_term(t: _Term):
    """E[coef × monomial(g) × Π_k φ_k(u_k)] under ``t.law``: exponential factors are absorbed
    into the law first, then Stein's identity lowers the monomial, then the factors left take
    their closed forms (or an explicit node)."""
    k = _exponential_factor(t.factors)
    if k is not None:
        return _absorb_exponential(t, k)
    if t.mono:
        return _stein_step(t)
    return t.coef * _expect_factors(t.factors, t.law)


def _exponential_factor(factors):
    """Index of the first factor exp(−u²) or exp(u), or None."""
    return next((k for k, (fn, _) in enumerate(factors)
                 if fn == _GAUSS or _is(fn, sp.exp) or _is(fn, sp.DiracDelta)), None)


def _absorb_exponential(t: _Term, k: int):
    """Factor k (exp(−u²) or exp(u)) absorbed by tilting the law: normaliser × E′[the rest]."""
    fn, lin = t.factors[k]
    tilt = _tilt_square if fn == _GAUSS else _condition if _is(fn, sp.DiracDelta) else _tilt_linear
    norm, new_law = tilt(t.law, lin)
    rest = t.factors[:k] + t.factors[k + 1:]
    return norm * _expect_term(_Term(t.coef, t.mono, rest, new_law))


def _lower_power(mono: dict, i: int) -> dict:
    """The monomial divided by g_i (g_i dropped when its power reaches zero)."""
    lowered = dict(mono)
    lowered[i] -= 1
    if lowered[i] == 0:
        del lowered[i]
    return lowered


def _stein_step(t: _Term):
    """Multivariate Stein on the first monomial variable g_i, h = the rest of the term:
    E[g_i·h(g)] = μ_i·E[h] + Σ_j C_ij·E[∂_j h]."""
    law = t.law
    i = next(iter(t.mono))
    mono = _lower_power(t.mono, i)
    out = law.mean[i] * _expect_term(_Term(t.coef, mono, t.factors, law))
    for j in range(len(law.variables)):
        cij = law.cov[i, j]
        if cij == 0:
            continue
        # one term at a time, in this order, so the sum is built exactly as before the split
        for term in _partial_terms(t, mono, j, cij):
            out += term
    return out


def _partial_terms(t: _Term, mono: dict, j: int, cij):
    """The terms of C_ij·E[∂_j h] for h = coef × monomial × Π φ_k(u_k): ∂_j of the monomial,
    then ∂_j of each factor (φ_k′(u_k)·b_kj; erf′ = (2/√π)·exp(−u²) is absorbed by a tilt)."""
    law = t.law
    if j in mono:
        yield cij * mono[j] * _expect_term(_Term(t.coef, _lower_power(mono, j), t.factors, law))
    for k, (fn, lin) in enumerate(t.factors):
        if lin.b[j] == 0:
            continue
        rest = t.factors[:k] + t.factors[k + 1:]
        if _is(fn, sp.erf):
            norm, new_law = _tilt_square(law, lin)
            yield cij * lin.b[j] * 2 / sp.sqrt(sp.pi) * norm * _expect_term(
                _Term(t.coef, mono, rest, new_law))
        else:
            dfn = sp.Lambda(_T, sp.diff(fn.expr, _T))
            if dfn.expr.has(sp.Derivative, sp.Subs):
                raise unknown_derivative(dfn.expr)
            yield cij * lin.b[j] * _expect_term(_Term(t.coef, mono, rest + [(dfn, lin)], law))


def _expect_factors(factors, law):
    """E[Π_k φ_k(u_k)]: the factors grouped by linear form; closed forms for one or two forms
    where the rules reach one, an explicit node otherwise."""
    if not factors:
        return sp.S.One
    groups = {}
    for fn, lin in factors:
        groups.setdefault(lin.key(), (lin, []))[1].append(fn)
    closed = _closed.trig_closed_form(factors, law)
    if closed is not None:
        return closed
    if len(groups) == 1:
        closed = _closed.one_form_closed_form(*next(iter(groups.values())), law)
    elif len(groups) == 2:
        closed = _closed.two_form_closed_form(*groups.values(), law)
    return closed if closed is not None else _node(list(groups.values()), law)


def _term_node(term, law):
    """E[term] as one explicit node over the variables the term depends on, for a term whose
    factors are not functions of one linear form each (tanh(g₁g₂), ...)."""
    idx = [i for i, v in enumerate(law.variables) if v in term.free_symbols]
    n = len(law.variables)
    lins = [_Linear(sp.S.Zero, tuple(sp.S.One if j == i else sp.S.Zero for j in range(n)))
            for i in idx]
    K = len(lins)
    S = sp.Matrix(K, K, lambda i, j: lins[i].cov_with(lins[j], law))
    zs = sp.symbols(f"z_1:{K + 1}", real=True)
    A = _cholesky(S)
    gs = {law.variables[i]: law.mean[i] + sum((A[r, j] * zs[j] for j in range(r + 1)), sp.S.Zero)
          for r, i in enumerate(idx)}
    return GaussianExpectation(term.xreplace(gs), *zs)


def _node(groups, law):
    """Explicit expectation over K standard normals realising the K linear forms' joint law."""
    K = len(groups)
    means = [lin.mean(law) for lin, _ in groups]
    S = sp.Matrix(K, K, lambda i, j: groups[i][0].cov_with(groups[j][0], law))
    zs = sp.symbols(f"z_1:{K + 1}", real=True)
    A = _cholesky(S)
    us = [means[i] + sum((A[i, j] * zs[j] for j in range(i + 1)), sp.S.Zero) for i in range(K)]
    integrand = reduce(operator.mul, (fn(us[i]) for i, (_, fns) in enumerate(groups) for fn in fns))
    return GaussianExpectation(integrand, *zs)


def _cholesky(S):
    K = S.shape[0]
    A = sp.zeros(K, K)
    for i in range(K):
        for j in range(i + 1):
            s = S[i, j] - sum((A[i, k] * A[j, k] for k in range(j)), sp.S.Zero)
            if i == j:
                A[i, i] = sp.sqrt(s)
            else:
                A[i, j] = s / A[j, j] if A[j, j] != 0 else sp.S.Zero
    return A


class UnknownDerivative(ValueError):
    """An integrand (or its derivative under the integral) holds a derivative that SymPy does
    not know: a function without ``fdiff``. The message is one line naming it."""


def unknown_derivative(expr: sp.Expr) -> UnknownDerivative | None:
    """The error to raise when ``expr`` holds an unevaluated derivative of a function, else
    None."""
    found = expr.atoms(sp.Derivative, sp.Subs)
    if not found:
        return None
    inner = next(iter(sorted(set().union(*(a.atoms(sp.Function) for a in found)), key=str)), None)
    name = getattr(getattr(inner, "func", None), "__name__", "a function")
    return UnknownDerivative(
        f"the derivative of {name} is not known to SymPy (the gradient flow needs it); allowed: "
        "SymPy's functions (exp, log, sin, cos, tanh, erf, ...) and compositions of them, or a "
        "sympy.Function subclass with fdiff (its derivative) and numpy/torch implementations "
        "(docs/functions.md)")


_CLOSABLE = (Relu, sp.Heaviside, sp.DiracDelta, sp.erf, sp.exp, sp.sin, sp.cos, sp.Abs, sp.sign,
             sp.Max, sp.Min, OwensT)
"""The functions the closed forms above cover (with polynomials)."""


def _closable(expr: sp.Expr, variables) -> bool:
    """Whether expr is polynomial in ``variables`` times functions the closed forms cover
    (``_CLOSABLE``): no other function of them, no division by them."""
    vs = set(variables)
    for node in sp.preorder_traversal(expr):
        if not node.free_symbols & vs:
            continue
        if isinstance(node, sp.Function) and not isinstance(node, _CLOSABLE):
            return False
        if node.is_Pow and not isinstance(node.base, sp.exp) and not (
                node.exp.is_Integer and node.exp >= 0) and node.base.free_symbols & vs:
            return False
    return True


def _as_kinks(expr: sp.Expr, variables: set) -> sp.Expr:
    """|u|, sign(u), max(u, v) and min(u, v) of the law's variables written with ReLU and its
    derivative H, which have closed forms and known derivatives: |u| = ReLU(u) + ReLU(−u),
    sign(u) = 2H(u) − 1, max(u, v) = v + ReLU(u − v), min(u, v) = u − ReLU(u − v)."""
    def depends(e):
        return bool(e.free_symbols & variables)
    rules = [(lambda e: isinstance(e, sp.Abs) and depends(e),
              lambda e: Relu(e.args[0]) + Relu(-e.args[0])),
             (lambda e: isinstance(e, sp.sign) and depends(e),
              lambda e: 2 * sp.Heaviside(e.args[0]) - 1),
             (lambda e: isinstance(e, sp.Max) and len(e.args) == 2 and depends(e),
              lambda e: e.args[1] + Relu(e.args[0] - e.args[1])),
             (lambda e: isinstance(e, sp.Min) and len(e.args) == 2 and depends(e),
              lambda e: e.args[0] - Relu(e.args[0] - e.args[1]))]
    for match, rewrite in rules:
        if expr.has(*(sp.Abs, sp.sign, sp.Max, sp.Min)):
            expr = expr.replace(match, rewrite)
    return expr


def expect(expr: sp.Expr | float, law: GaussianLaw) -> sp.Expr:
    """E[expr] under ``law``, in closed form where the rules above reach one. UnknownDerivative
    (a ValueError) when the integrand holds a derivative SymPy does not know."""
    expr = _as_kinks(sp.sympify(expr), set(law.variables))
    if expr.has(sp.Derivative, sp.Subs):
        raise unknown_derivative(expr)
    expr = sp.expand(expr)
    out = sp.S.Zero
    for term in sp.Add.make_args(expr):
        t = _split_term(term, law)
        out += _term_node(term, law) if t is None else _expect_term(t)
    return out


