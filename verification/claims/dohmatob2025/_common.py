"""Helpers shared by the Dohmatob section modules: limit-check summaries, per-link
registration, the stationary-point settings and shared pieces, and the declared formula
mutations. What the claims simulate is in ``verification.simulations.dohmatob2025``."""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from theory.models import dohmatob2025 as dm

from ...checks import FINITE_SIZE_TERMS
from ...declare import claim, missed
from ...domain import Interval
from ...simulations.dohmatob2025.common import (  # noqa: F401 - re-exported for the tests
    exact_text,
    flow_on_M_2d,
    numeric_risk,
    rbar,
    reduced_model,
    stationary_points_uncached,
)
from ...simulations.dohmatob2025.flow_on_M import R_SYM  # noqa: F401 - the mutations' r
from ...simulations.dohmatob2025.stationary_points import stationary_piece

PAPER = "dohmatob2025"
LINK_NAMES = ("linear", "quadratic", "relu")
NUMERICAL_FLOOR = 1e-9   # float64 resolution of the log-space sampler and quadrature


MODEL_SYMBOLS = {str(s): s for s in (dm.alpha, dm.beta, dm.gamma, dm.d, dm.mu, dm.nu, dm.zeta,
                                      dm.eta, dm.rho, R_SYM)}
"""The model's symbols by name: a simulation's text read back with them (``parse``)."""


def parse(text):
    """A simulation's SymPy text (``str`` of an expression) read back as an expression in the
    model's symbols, not in SymPy's functions of the same names (gamma, beta, zeta)."""
    return sp.sympify(text, locals=MODEL_SYMBOLS)


def fit_intercept(dims, y, basis=("1/d",)):
    """Unweighted least-squares intercept of y ≈ a + Σ c_k·f_k(d) (a location, not judged
    statistically: the exact stationary points of Prop. 10 carry no sampling error)."""
    d = np.asarray(dims, float)
    X = np.stack([np.ones_like(d)] + [FINITE_SIZE_TERMS[b](d) for b in basis], 1)
    return float(np.linalg.lstsq(X, np.asarray(y, float), rcond=None)[0][0])


def deciding_column(check):
    """The index of the column that refutes a ``checks.limit`` family (None when the library
    did not refute it): a poor fit decides nothing for its own column (the library marks it
    ok), so it is the worst failing one among those with a good fit."""
    if check.decision != "refuted":
        return None
    failing = np.flatnonzero(~check.ok)
    return int(failing[np.argmax(check.score[failing])])


def admissible_models(check, column):
    """How many correction models ``checks.extrapolate`` admitted for ``column``, and the range
    of their limits (each is in the evidence)."""
    rows = [r for r in check.details["models"][column] if r["admissible"]]
    lo, hi = min(r["limit"] for r in rows), max(r["limit"] for r in rows)
    return f"{len(rows)} models, limits {lo:+.3g} … {hi:+.3g}"


def self_comparison(phase):
    """In the high-temperature phase the sampler's bulk (w_bulk ≈ 1) is the analytic tilted
    Gaussian law whose limit is the paper's value by construction: its d → ∞ limit compared
    with that value compares the analytic bulk with itself (se ~1e-13) and shows nothing."""
    return phase == "high-temperature"


def _transition_settings() -> list[dict]:
    """Settings either side (±6 %) of the two transitions the paper states, at α = 0.1: the
    REM's freezing β_c = √(2α) (γ = 0.6) and, in the frozen phase (β = 1), the learnability
    condition c = √(1 − γ²) = ψ(α, β)."""
    a = sp.Rational(1, 10)
    beta_c = float(dm.PAPER_BETA_C.subs(dm.alpha, a))
    psi = float(dm.PAPER_PSI.subs({dm.alpha: a, dm.beta: 1}))
    gamma_c = float(np.sqrt(1 - psi**2))
    return ([{"alpha": 0.1, "beta": round(beta_c * f, 3), "gamma": 0.6} for f in (0.94, 1.06)]
            + [{"alpha": 0.1, "beta": 1.0, "gamma": round(min(gamma_c * f, 0.95), 3)}
               for f in (0.97, 1.03)])


TRANSITIONS = _transition_settings()
"""Where calibration over the domain looks first (``@claim(transitions=...)``): next to the
REM's freezing and the learnability condition, the transitions the paper states."""


PARAMETERS = {"alpha": Interval(0.01, 1.0, log=True), "beta": Interval(0.1, 10.0, log=True),
              "gamma": Interval(0.05, 0.95)}
"""(α, β, γ): the model's parameters over both phases of the REM (β_c = √(2α)), the domain of
the flow and stationary-point claims (the risk claims use a narrower β range, for the Monte
Carlo's cost)."""


PER_LINK: list[str] = []
"""The names of the per-link claims, in registration order (``link_variants``)."""


def per_link(name, label, statement, check, statistical=True, reading="", mutations=None,
              **domain):
    """Register one sub-claim ``<name>[link=…]`` per link; ``check(ctx, link, **setting,
    **overrides)``; ``mutations(link)``: that link's declared formula mutations; ``domain``:
    the ``claim`` decorator's domain, where, reference and points, each either the value or a
    function of the link giving it."""
    PER_LINK.append(name)
    for link in LINK_NAMES:
        per = {k: (v(link) if callable(v) and k != "where" else v) for k, v in domain.items()}
        claim(f"{PAPER}:{name}[link={link}]", label, statement.format(link=link),
              statistical=statistical, reading=reading,
              mutations=None if mutations is None else mutations(link), **per
              )(functools.partial(check, link=link))


def _named_links(check, ctx, **overrides):
    """``check``'s outcome with every Link in its evidence replaced by the link's name (the
    evidence is data: JSON in the report, plain values in the store)."""
    out = check(ctx, **overrides)

    def plain(x):
        if isinstance(x, dm.Link):
            return x.name
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        return type(x)(plain(v) for v in x) if isinstance(x, (list, tuple)) else x

    out.evidence = plain(out.evidence)
    return out


def link_variants(link, claims=None, name=None) -> list:
    """Dohmatob's per-link claims re-run with a link of the user's: for each claim ``<c>``
    (default: every per-link claim, ``PER_LINK``) the variant (``Claim.variant``) of
    ``<c>[link=linear]`` with ``link`` substituted, id ``dohmatob2025:<c>@<link name>``, its
    statement's σ replaced, its provenance naming the paper's claim and the link's file.

    link: anything ``theory.models.dohmatob2025.as_link`` accepts (a SymPy Lambda of one
          variable, a function of one SymPy symbol returning an expression in it, a Link);
    name: the link's name (default: the Link's, else the function's ``__name__``).

    A claims file given to ``run --claims`` that holds the returned claims at module level
    runs them (``verification.userfiles.load_claims_file``)::

        CUBE = lambda t: t**3
        VARIANTS = link_variants(CUBE, ["prop1-risk", "prop5-invariance"], name="cube")
    """
    import dataclasses
    import sys

    from ...declare import REGISTRY
    sigma = dm.as_link(link, name)
    unknown = sorted(set(claims or ()) - set(PER_LINK))
    if unknown:
        raise ValueError(f"link_variants: unknown claim(s) {unknown}; allowed: {PER_LINK}")
    origin = getattr(link, "__module__", None)      # the user's file: the store keys on its code
    if origin not in sys.modules or origin.split(".")[0] in ("theory", "numerics", "verification",
                                                             "sympy", "builtins"):
        origin = None
    out = []
    for stem in claims or PER_LINK:
        base = REGISTRY[f"{PAPER}:{stem}[link={LINK_NAMES[0]}]"]
        v = base.variant(sigma.name, link=sigma)
        extra, prov = v.extra_modules, dict(v.provenance)
        if origin and origin not in extra:
            extra += (origin,)
            prov["sources"] = [*prov["sources"],
                               getattr(sys.modules[origin], "__file__", None) or origin]
        out.append(dataclasses.replace(
            v, id=f"{PAPER}:{stem}@{sigma.name}", extra_modules=extra, provenance=prov,
            check=functools.partial(_named_links, v.check),
            statement=base.statement.replace(f"σ = {LINK_NAMES[0]}", f"σ = {sigma.name}")))
    return out


def limit_summary(check, labels, i=None):
    """Text for column i (default: the worst) of a ``limit`` check."""
    i = int(check.details["worst_index"]) if i is None else i
    return (f"{labels[i]}: d → ∞ limit {check.details['limit'][i]:.5g} ± "
            f"{check.details['limit_stderr'][i]:.2g} ({check.score[i]:.1f} se, z = {check.z:.2f})")


# -------------------------------------------------------------------------------------------
# Stationary points on M (Props. 7, 9, 10): exact arithmetic, several d

STATIONARY_SETTINGS = [  # exact parameters; ψ < c < 1 (learnable) and c < ψ < 1
    {"alpha": sp.Rational(1, 10), "beta": sp.Integer(1), "gamma": sp.Rational(3, 5)},
    {"alpha": sp.Rational(1, 5), "beta": sp.Rational(3, 2), "gamma": sp.Rational(9, 10)}]


def stationary_item(link, setting, dv, risk=None):
    """The item of one (setting, d) of the flow on M for ``link`` and ``risk`` (None: the
    paper's R̄): what is computed, not where it is listed, so claims asking for the same
    share it."""
    return {"link": link, "risk": risk, "setting": exact_text(setting), "d": int(dv)}


def paper_stationary(ctx, link, setting, dims, risk=None):
    """{d: (found, unresolved, curves)} of the flow on M (R̄ of Prop. 1, or ``risk``) at one
    setting (exact values {"alpha", "beta", "gamma"}, as in ``STATIONARY_SETTINGS``) for every
    d in ``dims`` (``simulations.stationary_piece``: Props. 7 and 10 share the paper's)."""
    index = [int(dv) for dv in dims]
    items = [stationary_item(link, setting, dv, risk) for dv in index]
    return {dv: tuple(r) for dv, r in zip(index, ctx.map(stationary_piece, items))}


def chebyshev(p, q):
    """max(|p₀ − q₀|, |p₁ − q₁|): how far apart two points of M are, coordinate by coordinate."""
    return max(abs(p[0] - q[0]), abs(p[1] - q[1]))


# -------------------------------------------------------------------------------------------
# Declared mutations (``@claim(mutations=...)``): deliberately wrong formulas the checks must
# refute. R̄'s three terms are rebuilt here with a coefficient each, so that a mutant drops,
# rescales or flips exactly one term of the paper's formula.
def rbar_terms(link, p2=1, h2=1, h1=1, r=dm.PAPER_R):
    """R̄ = p2·p²H1(1, ζ, ρ) − h2·2p·H2(ν, ζ, ρ) + h1·H1(1, 0, ρ): the paper's Prop. 1 at
    p2 = h2 = h1 = 1 (identical to ``dm.paper_risk``), a mutant otherwise (built when asked:
    the Gaussian expectations it integrates are the model's, cheap)."""
    sigma = dm.link_function(link)
    c = sp.sqrt(1 - dm.gamma**2)

    def s(t, z):
        return sigma(dm.gamma * t + c * z * sp.sqrt(dm.d)) - sigma(dm.rho * r * sp.sqrt(dm.d))

    def H(corr, z1, z2):
        law = dm.GaussianLaw((dm._g1, dm._g2), sp.zeros(2, 1), sp.Matrix([[1, corr], [corr, 1]]))
        return dm.expect(s(dm._g1, z1) * s(dm._g2, z2), law)

    p = dm.paper_localisation()
    return p2 * p**2 * H(1, dm.zeta, dm.zeta) - h2 * 2 * p * H(dm.nu, dm.zeta, 0) + h1 * H(1, 0, 0)


DROPPED_H2 = "dropped term: −2p·H2(ν, ζ, ρ) of R̄"
RBAR_TERM_MUTATIONS = {DROPPED_H2: {"h2": 0},
                       "wrong factor: 1.1·p²·H1(1, ζ, ρ) in R̄": {"p2": sp.Rational(11, 10)},
                       "sign flip: +2p·H2(ν, ζ, ρ) in R̄": {"h2": -1}}


def rbar_mutations(link, key="risk", r=dm.PAPER_R):
    """The three term mutations of R̄ (dropped, ×1.1, sign-flipped), passed as ``key``."""
    return {name: functools.partial(lambda kw: {key: rbar_terms(link, r=r, **kw)}, kw)
            for name, kw in RBAR_TERM_MUTATIONS.items()}


def rbar_mutations_missed(link, why, r=dm.PAPER_R):
    """R̄'s three term mutations (as ``risk``), declared as missed by a check that cannot see
    them (``why``)."""
    return {name: missed(m, why) for name, m in rbar_mutations(link, r=r).items()}


SYMMETRY_UNSEEN = ("every term of R̄ is even in (ζ, ρ) jointly for σ = linear or quadratic, so "
                   "a dropped, rescaled or sign-flipped term leaves M invariant and the "
                   "restricted flow closed on (µ, ν): the structural check cannot see such an "
                   "edit (the odd-term mutations are what it can see)")
R0_UNSEEN = ("at r = 0 every term of R̄ depends on ρ only through σ(ρ·r·√d), so a dropped, "
             "rescaled or sign-flipped term still has ∂R̄/∂ρ = 0 at r = ρ = 0, whatever the "
             "link: the gradient-span check cannot see such an edit (the odd-term mutations "
             "are what it can see)")


def odd_term_mutations(link, terms, r=dm.PAPER_R):
    """{name: overrides}: R̄ (with r as given) plus one term odd in ζ, η or ρ."""
    return {f"wrong model: R̄ + {name}": functools.partial(
                lambda t: {"risk": dm.paper_risk(link, r=r) + t}, term)
            for name, term in terms.items()}
