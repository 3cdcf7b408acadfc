"""The closed forms of the Gaussian layer (``theory.gaussian``): ReLU and its derivative H
(one form; the arc-cosine kernels for two zero-mean forms), erf and erf² (Owen's T), erf·erf
(the arcsine law), and products of sines and cosines (product-to-sum). Each returns None where
it does not apply."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .special import OwensT, Relu

__all__ = ["one_form_closed_form", "two_form_closed_form", "trig_closed_form"]

_T = sp.Dummy("t")
"""The variable of the Lambdas φ the Gaussian layer applies to linear forms."""


@dataclass(frozen=True)
class _Linear:
    """u = a + b·g for the law's variables g."""

    a: sp.Expr
    b: tuple

    def mean(self, law):
        return self.a + sum((bi * mi for bi, mi in zip(self.b, law.mean)), sp.S.Zero)

    def cov_with(self, other, law):
        C = law.cov
        n = len(self.b)
        return sum((self.b[i] * C[i, j] * other.b[j]
                    for i in range(n) for j in range(n)
                    if self.b[i] != 0 and other.b[j] != 0 and C[i, j] != 0), sp.S.Zero)

    def var(self, law):
        return self.cov_with(self, law)

    def key(self):
        return (sp.expand(self.a),) + tuple(sp.expand(x) for x in self.b)


def _is(fn, func):
    return isinstance(fn.expr, func) and fn.expr.args[0] == _T


def _Phi(x):
    return (1 + sp.erf(x / sp.sqrt(2))) / 2


def _phi(x):
    return sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)


def _relu_single(fns, m, s2):
    """Closed forms for ReLU/Heaviside factors of one linear form u ~ N(m, s²), or None."""
    kinds = sorted("R" if _is(f, Relu) else "H" if _is(f, sp.Heaviside) else "?" for f in fns)
    if "?" in kinds or sp.simplify(s2) == 0:
        return None
    s = sp.sqrt(s2)
    h = m / s
    first = m * _Phi(h) + s * _phi(h)
    return {("H",): _Phi(h), ("H", "H"): _Phi(h), ("R",): first, ("H", "R"): first,
            ("R", "R"): (m**2 + s2) * _Phi(h) + m * s * _phi(h)}.get(tuple(kinds))


def _relu_pair(g1, g2, law):
    """Arc-cosine closed forms for one ReLU/Heaviside factor on each of two zero-mean forms."""
    (l1, f1), (l2, f2) = g1, g2
    if len(f1) != 1 or len(f2) != 1:
        return None
    k1 = "R" if _is(f1[0], Relu) else "H" if _is(f1[0], sp.Heaviside) else None
    k2 = "R" if _is(f2[0], Relu) else "H" if _is(f2[0], sp.Heaviside) else None
    if k1 is None or k2 is None:
        return None
    if sp.simplify(l1.mean(law)) != 0 or sp.simplify(l2.mean(law)) != 0:
        return None
    if (k1, k2) == ("R", "H"):
        (l1, k1), (l2, k2) = (l2, k2), (l1, k1)
    v1, v2, c = l1.var(law), l2.var(law), l1.cov_with(l2, law)
    theta = sp.acos(c / sp.sqrt(v1 * v2))
    if (k1, k2) == ("R", "R"):
        return (sp.sqrt(v1 * v2 - c**2) + (sp.pi - theta) * c) / (2 * sp.pi)
    if (k1, k2) == ("H", "R"):
        return (sp.sqrt(v2) + c / sp.sqrt(v1)) / (2 * sp.sqrt(2 * sp.pi))
    return (sp.pi - theta) / (2 * sp.pi)


def one_form_closed_form(lin, fns, law):
    """E[Π φ(u)] for one form u ~ N(m, s²): ReLU/Heaviside, erf and erf² (Owen's T), or None."""
    m, s2 = lin.mean(law), lin.var(law)
    relu = _relu_single(fns, m, s2)
    if relu is not None:
        return relu
    if len(fns) == 1 and _is(fns[0], sp.erf):
        return sp.erf(m / sp.sqrt(1 + 2 * s2))
    if len(fns) == 2 and all(_is(f, sp.erf) for f in fns):
        return 1 - 8 * OwensT(sp.sqrt(2) * m / sp.sqrt(1 + 2 * s2), 1 / sp.sqrt(1 + 4 * s2))
    return None


def two_form_closed_form(g1, g2, law):
    """E[φ(u)·φ′(u′)] for two zero-mean forms: erf·erf (arcsine law) or the arc-cosine
    kernels of ReLU/Heaviside; None otherwise."""
    (l1, fns1), (l2, fns2) = g1, g2
    single_erfs = len(fns1) == 1 == len(fns2) and _is(fns1[0], sp.erf) and _is(fns2[0], sp.erf)
    if single_erfs and sp.simplify(l1.mean(law)) == 0 and sp.simplify(l2.mean(law)) == 0:
        c = l1.cov_with(l2, law)
        return 2 / sp.pi * sp.asin(2 * c / sp.sqrt((1 + 2 * l1.var(law)) * (1 + 2 * l2.var(law))))
    return _relu_pair(g1, g2, law)


_MAX_TRIG = 4
"""Products of at most this many sines and cosines take the closed form (2^(n−1) terms)."""


def trig_closed_form(factors, law):
    """E[Π sin/cos(u_k)] for any linear forms u_k (n ≤ _MAX_TRIG), or None: the product is
    turned into a sum of sin/cos(w) of sums and differences w of the forms (product-to-sum),
    and E sin(w) = sin(m)·e^{−s²/2}, E cos(w) = cos(m)·e^{−s²/2} for w ~ N(m, s²)."""
    coefs, kinds = [], []
    for fn, _ in factors:               # c·sin(t) or c·cos(t) (Stein's derivatives: −sin, −cos)
        c, f = fn.expr.as_coeff_Mul()
        kind = "sin" if isinstance(f, sp.sin) else "cos" if isinstance(f, sp.cos) else None
        if kind is None or f.args[0] != _T:
            return None
        coefs.append(c)
        kinds.append(kind)
    if len(kinds) > _MAX_TRIG:
        return None
    (first, lin), *rest = zip(kinds, (lin for _, lin in factors))
    terms = [(sp.Mul(*coefs), first, lin)]
    for kind, lin2 in rest:
        new = []
        for c, k, w in terms:
            plus, minus = _combine(w, lin2, 1), _combine(w, lin2, -1)
            if k == "cos" and kind == "cos":
                new += [(c / 2, "cos", minus), (c / 2, "cos", plus)]
            elif k == "sin" and kind == "sin":
                new += [(c / 2, "cos", minus), (-c / 2, "cos", plus)]
            elif k == "sin":                                # sin w · cos u
                new += [(c / 2, "sin", plus), (c / 2, "sin", minus)]
            else:                                           # cos w · sin u
                new += [(c / 2, "sin", plus), (-c / 2, "sin", minus)]
        terms = new
    trig = {"sin": sp.sin, "cos": sp.cos}
    return sp.Add(*(c * trig[k](w.mean(law)) * sp.exp(-w.var(law) / 2) for c, k, w in terms))


def _combine(u, v, sign):
    """The linear form u + sign·v."""
    return _Linear(u.a + sign * v.a, tuple(x + sign * y for x, y in zip(u.b, v.b)))
