"""Dohmatob (NeurIPS 2025), "Understanding Softmax Attention Layers: Exact Mean-Field Analysis
on a Toy Problem" (OpenReview GiqeRe1NsY). The model in full: docs/models/dohmatob2025.md.

This file holds the paper's statements about the random energy model formed by the e^{αd}
dummy tokens (Eqs. 14–18) and its risk R̄ (Prop. 1), as the paper states them: they are what
the claims check. The suite's own derivation of the REM constants is
``theory.rem.rem_constants``.

The student is a model object like the other kinds: :class:`DohmatobModel` (``MODEL``, or
``build(link)``), the overlap structure of (u, v; u*, v*), the parameters (d, α, β, γ) and R̄ for
its link σ, a field. A link is

* one of the built-in names ``LINKS``: 'linear' (σ(t) = t), 'quadratic' (t²), 'relu';
* a SymPy ``Lambda`` of one variable, e.g. ``sp.Lambda(t, t**3)``;
* a function of one SymPy symbol returning a SymPy expression in it, e.g. ``lambda t: t**3``
  or ``lambda t: sp.tanh(t)`` (called once, on a real symbol; numpy functions do not work);
* a :class:`Link` (a name and such a Lambda).

``as_link`` turns any of these into a :class:`Link` and raises a one-line ValueError for
anything else. R̄'s Gaussian expectations are integrated in closed form where the suite's
Gaussian layer knows one (polynomials, ReLU, ...), else kept as expectation nodes that the
generated code integrates by Gauss–Hermite. A user's link in a file, given on the command
line as ``evaluate dohmatob2025 --param link=my_link.py:CUBE``:

    # my_link.py
    CUBE = lambda t: t**3          # or: import sympy as sp; t = sp.Symbol("t"); CUBE = sp.Lambda(t, t**3)
"""


import sympy as sp

from ..rem import alpha, beta

__all__ = ["alpha", "beta", "d", "gamma", "mu", "nu", "zeta", "eta", "rho", "PAPER_BETA_C",
           "PAPER_PSI", "PAPER_R", "LINKS", "paper_localisation", "paper_risk", "paper_cor1_linear",
           "dual_kernel", "paper_oracle_risk", "OVERLAP_STRUCTURE", "MANIFOLD", "paper_flow", "PARAMS",
           "DEFAULT_LINK", "DEFAULT_PARAMS", "DEFAULT_STATE", "Link", "as_link", "link_function",
           "DohmatobModel", "build", "MODEL", "LINK_HELP"]

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


def link_function(link):
    """σ as a callable on SymPy expressions: ``LINKS[link]`` for a built-in name, the link itself
    otherwise (a :class:`Link`, a SymPy Lambda or a function)."""
    return LINKS[link] if isinstance(link, str) else link


def paper_risk(link, psi=PAPER_PSI, r=PAPER_R) -> sp.Expr:
    """R̄(µ, ν, ζ, ρ) = p²·H1(1, ζ, ρ) − 2p·H2(ν, ζ, ρ) + H1(1, 0, ρ) (Prop. 1), with
    σ_{γ,ζ,ρ}(t) = σ(γt + cζ√d) − σ(ρ·r·√d) and H1, H2 Gaussian expectations over (G1, G2)
    of correlation ν, integrated by the Gaussian layer (theory.gaussian). ``link``: a built-in name,
    a :class:`Link`, a SymPy Lambda or a function of one SymPy expression."""
    sigma = link_function(link)
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
    """σ̄_γ(ν) = E[σ(γG1)·σ(γG2)], (G1, G2) standard with correlation ν (integrated by theory.gaussian)."""
    sigma = link_function(link)
    law = GaussianLaw((_g1, _g2), sp.zeros(2, 1), sp.Matrix([[1, corr], [corr, 1]]))
    return expect(sigma(gamma * _g1) * sigma(gamma * _g2), law)


def paper_oracle_risk(link, psi=PAPER_PSI) -> sp.Expr:
    """Prop. 2: R(u*, v*) ≃ (1 − p(1))²·σ̄_γ(1)."""
    return (1 - paper_localisation(psi).subs(mu, 1)) ** 2 * dual_kernel(link, 1)


# --- dynamics: the Gram structure of (u, v; u*, v*) on which the flow is derived ----
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


# --- the model object: Dohmatob's student with its link as a field ---------------------------
from dataclasses import dataclass, field  # noqa: E402

DEFAULT_STATE = {"mu": 0.5, "nu": 0.5, "zeta": 0.0, "eta": 0.0, "rho": 0.0}
"""A realisable point off the oracle (u ⊥ v*, v ⊥ u*, u ⊥ v: on M)."""

LINK_HELP = ("one of " + ", ".join(sorted(LINKS)) + ", or PATH.py:NAME naming a SymPy Lambda of one "
             "variable or a function of one SymPy symbol returning a SymPy expression in it "
             "(e.g. CUBE = lambda t: t**3)")
"""What a link may be, for error messages (``--param link=...``)."""


@dataclass(frozen=True)
class Link:
    """A link σ: a name (it labels the model, the claims' variants and their seeds) and a SymPy
    ``Lambda`` of one variable. Calling it applies σ; ``str(link)`` is its name."""

    name: str
    sigma: sp.Lambda = field(compare=True)

    def __call__(self, x):
        return self.sigma(x)

    def __str__(self) -> str:
        return self.name


def as_link(obj, name: str | None = None) -> Link:
    """``obj`` as a :class:`Link`: a built-in name (``LINKS``), a Link, a SymPy Lambda of one
    variable, or a function of one SymPy symbol returning a SymPy expression in that symbol
    only. ``name`` names it (default: the built-in name, the function's ``__name__`` or
    'user'). A ValueError (one line, ending in what is allowed) for anything else."""
    if isinstance(obj, Link):
        return obj
    if isinstance(obj, str):
        if obj not in LINKS:
            raise ValueError(f"link={obj!r} is not allowed; allowed: {LINK_HELP}")
        return Link(obj, LINKS[obj])
    label = name or getattr(obj, "__name__", None) or "user"
    label = "user" if label == "<lambda>" else label
    if any(c in label for c in " @/[]"):
        raise ValueError(f"link name {label!r}; allowed: a word without spaces, @, / or [ ]")
    expr = _link_expression(obj, label)
    extra = sorted(str(x) for x in expr.free_symbols - {_t})
    if extra:
        raise ValueError(f"link {label}: σ(t) = {expr} has symbols {extra} besides t; allowed: "
                         f"{LINK_HELP}")
    return Link(label, sp.Lambda(_t, expr))


def _link_expression(obj, label: str) -> sp.Expr:
    """σ(t) of a SymPy Lambda of one variable or of a function of one SymPy symbol."""
    if isinstance(obj, sp.Lambda):
        if len(obj.variables) != 1:
            raise ValueError(f"link {label}: a Lambda of {len(obj.variables)} variables; allowed: "
                             f"{LINK_HELP}")
        expr = obj(_t)
    elif callable(obj) and not isinstance(obj, sp.Basic):
        try:
            expr = sp.sympify(obj(_t))
        except Exception as exc:  # noqa: BLE001 - any failure of the user's function is reported
            raise ValueError(f"link {label}: calling it on a SymPy symbol failed "
                             f"({type(exc).__name__}: {' '.join(str(exc).split())}); allowed: "
                             f"{LINK_HELP}") from None
    else:
        raise ValueError(f"link {label}: a {type(obj).__name__}; allowed: {LINK_HELP}")
    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.Lambda) or expr.is_real is False:
        raise ValueError(f"link {label}: σ(t) is {expr!r}, not a real SymPy expression in t; "
                         f"allowed: {LINK_HELP}")
    return expr


def _derivation_of(link: Link):
    from ..derived import OverlapDerivation
    risk = paper_risk(link.name if link.name in LINKS and link.sigma == LINKS[link.name] else link)
    return OverlapDerivation(OVERLAP_STRUCTURE, risk, PARAMS)


@dataclass(frozen=True)
class DohmatobModel:
    """Dohmatob's student: unit u, v on the sphere, the softmax over the signal token and the
    e^{αd} dummy tokens at inverse temperature β, the link σ applied to the values. Reduced to
    the overlaps (µ, ν, ζ, η, ρ) of ``geometry`` (``OVERLAP_STRUCTURE``) its risk is R̄ of
    Prop. 1 (``risk``), stated by the paper rather than derived from a token sum, with the
    parameters ``params`` (d, α, β, γ).

    link: a :class:`Link` or anything ``as_link`` accepts (a built-in name, a SymPy Lambda, a
          function of one SymPy symbol); name: default 'dohmatob2025 (<link> link)'."""

    link: Link = field(default_factory=lambda: as_link(DEFAULT_LINK))
    name: str = ""
    citation: str = "Dohmatob, NeurIPS 2025 (OpenReview GiqeRe1NsY)"

    def __post_init__(self):
        object.__setattr__(self, "link", as_link(self.link))
        if not self.name:
            object.__setattr__(self, "name", f"dohmatob2025 ({self.link.name} link)")

    @property
    def geometry(self) -> Geometry:
        return OVERLAP_STRUCTURE

    @property
    def params(self) -> tuple[Param, ...]:
        return PARAMS

    @property
    def risk(self) -> sp.Expr:
        """R̄ of Prop. 1 for this link (``theory.derive``'s cache)."""
        from ..derived import derive
        return derive(self).risk

    def derivation(self):
        """R̄'s derivations in the overlaps (one per link in ``theory.derive``'s cache): an
        :class:`theory.OverlapDerivation`."""
        from ..derived import memo_by_model
        return memo_by_model(_derivation_of)(self.link)

    def flow(self):
        """The overlap flow of projected gradient flow on R̄ (``paper_flow``)."""
        return paper_flow(self.link, self.risk)


def build(link="linear", name: str = "", link_name: str | None = None) -> DohmatobModel:
    """Dohmatob's student with link σ (anything ``as_link`` accepts; ``link_name`` names a
    user's link, default its function's name), e.g. ``build(lambda t: t**3, link_name="cube")``."""
    return DohmatobModel(as_link(link, link_name), name)


MODEL = build()
