"""Each paper's reduced model with default parameters, for the command line and notebooks.

``paper_model("marion2025")`` is the token-sum model at the README's point (d = 20, L = 3,
λ = 0.7, γ = 0.8, ε = 0.3); ``paper_model("dohmatob2025")`` Dohmatob's R̄ with the linear link at
the first exact setting of the stationary-point claims; ``paper_model("sagitova2026")`` two
softmax heads, L = 4, F = 2, with the flipping-spike prior θ = (√ν₁, ±√ν₂), ν = (4, 1.5).
Any other name is looked up as ``theory.models.<name>.MODEL`` (with its ``DEFAULT_PARAMS``, if
any). Overrides are given by name; values may be strings (they come from the command line).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from dataclasses import dataclass

import sympy as sp

from theory.model import Param, check_params

from .base import ReducedModel
from .heads import HeadReduced
from .overlap import OverlapReduced

__all__ = ["Choice", "PAPERS", "paper_model", "dohmatob_reduced", "SAGITOVA_PARAMS", "SAGITOVA_DEFAULTS"]


@dataclass(frozen=True)
class Choice:
    """A parameter taking one of a few named values."""

    name: str
    allowed: tuple[str, ...]

    def describe(self) -> str:
        return f"one of {list(self.allowed)}"

    def check(self, value: object) -> str:
        if str(value) not in self.allowed:
            raise ValueError(f"parameter {self.name}={value!r} is not allowed; allowed: "
                             f"{self.describe()}")
        return str(value)


def _split(params: Mapping[str, object] | None, choices: tuple[Choice, ...],
           defaults: Mapping[str, object]) -> tuple[dict, dict]:
    """(checked choices, the other values) of defaults updated by params."""
    values = {**defaults, **dict(params or {})}
    picked = {c.name: c.check(values.pop(c.name)) for c in choices}
    return picked, values


# --- Marion et al. 2025 ---------------------------------------------------------------------
def _marion(params):
    from theory.models import marion2025 as mm
    return OverlapReduced.from_model(mm.MODEL, {**mm.DEFAULT_PARAMS, **dict(params or {})},
                                     default_state=mm.DEFAULT_STATE)


# --- Dohmatob 2025 --------------------------------------------------------------------------
_DOHMATOB_STATE = {"mu": 0.5, "nu": 0.5, "zeta": 0.0, "eta": 0.0, "rho": 0.0}
"""A realisable point off the oracle (u ⊥ v*, v ⊥ u*, u ⊥ v: on M)."""


def dohmatob_reduced(link: str | None = None, risk: sp.Expr | None = None,
                     params: Mapping[str, object] | None = None,
                     extra_params: tuple[Param, ...] = ()) -> OverlapReduced:
    """Dohmatob's overlap flow: the projected gradient flow of R̄(µ, ν, ζ, η, ρ) (Prop. 1,
    ``theory.models.dohmatob2025.paper_risk(link)``) on the Gram structure of (u, v; u*, v*)
    (Sec. 4), as an :class:`OverlapReduced`.

    link:   the link σ of R̄, one of ``dohmatob2025.LINKS`` (None: ``DEFAULT_LINK``, linear); it
            names the model also when ``risk`` is given;
    risk:   a risk replacing R̄ (e.g. a deliberately wrong formula); an expression in the five
            order parameters and the parameters (d, α, β, γ) plus ``extra_params``;
    params: values of (d, α, β, γ) (and ``extra_params``) by name, checked against their
            ranges; None leaves them unbound (the symbolic derivations are available, numerical
            methods raise). ``paper_model("dohmatob2025")`` binds ``DEFAULT_PARAMS``.

    A ValueError names a link outside ``LINKS``, a parameter out of range, or a symbol of
    ``risk`` that is neither an order parameter nor a parameter.
    """
    from theory.models import dohmatob2025 as dm
    link = Choice("link", tuple(sorted(dm.LINKS))).check(dm.DEFAULT_LINK if link is None else link)
    return OverlapReduced.from_risk(
        dm.OVERLAP_STRUCTURE, dm.paper_risk(link) if risk is None else risk,
        dm.PARAMS + tuple(extra_params), params, name=f"dohmatob2025 ({link} link)",
        risk_name=("Rbar", r"\bar{R}"), default_state=_DOHMATOB_STATE)


def _dohmatob(params):
    from theory.models import dohmatob2025 as dm
    link_choice = Choice("link", tuple(sorted(dm.LINKS)))
    picked, values = _split(params, (link_choice,), {"link": dm.DEFAULT_LINK, **dm.DEFAULT_PARAMS})
    return dohmatob_reduced(picked["link"], params=values)


# --- Sagitova et al. 2026 -------------------------------------------------------------------
def _sym(name):
    return sp.Symbol(name, real=True)


SAGITOVA_PARAMS = (
    Param(_sym("H"), 1, math.inf, integer=True, doc="number of heads"),
    Param(_sym("L"), 2, math.inf, integer=True, doc="number of tokens"),
    Param(_sym("delta"), 0, math.inf, open_high=True, doc="label-noise level Δ"),
    Param(_sym("nu1"), 0, math.inf, open_high=True, doc="flipping spike: θ₁ = √ν₁"),
    Param(_sym("nu2"), 0, math.inf, open_high=True, doc="flipping spike: θ₂ = ±√ν₂"),
    Param(_sym("sgd_noise"), 0, math.inf, open_high=True, doc="κ = γD/N_b (0: gradient flow)"),
    Param(_sym("n"), 8, math.inf, integer=True, open_high=True,
          doc="quasi-Monte Carlo draws (a multiple of 4)"),
    Param(_sym("seed"), 0, math.inf, integer=True, open_high=True, doc="seed of the draws"),
)
SAGITOVA_DEFAULTS = {"H": 2, "L": 4, "activation": "softmax", "output": "mean", "delta": 0.0,
                     "nu1": 4.0, "nu2": 1.5, "sgd_noise": 0.0, "n": 2**14, "seed": 0}
"""Two softmax heads, L = 4, F = 2 features, the flipping-spike prior ν = (4, 1.5)."""


def _sagitova(params):
    from theory.models.sagitova2026 import flipping_spike
    from theory.multihead import MultiHeadModel
    values = {**SAGITOVA_DEFAULTS, **dict(params or {})}
    names = ("activation", "output")
    words = {k: str(values.pop(k)) for k in names}
    v = check_params(SAGITOVA_PARAMS, values, "sagitova2026")
    H, F = int(v["H"]), 2
    if int(v["n"]) % 4:
        raise ValueError(f"parameter n={int(v['n'])} is out of range; allowed: a multiple of 4, ≥ 8")
    model = MultiHeadModel(H, int(v["L"]), F, words["activation"], delta=v["delta"],
                           output=words["output"])
    default = {f"m[{h},{h % F}]": 0.1 for h in range(H)}
    return HeadReduced(model, flipping_spike(v["nu1"], v["nu2"]), n=int(v["n"]), seed=int(v["seed"]),
                       sgd_noise=v["sgd_noise"], name="sagitova2026", default_state=default)


PAPERS = {"marion2025": _marion, "dohmatob2025": _dohmatob, "sagitova2026": _sagitova}


def paper_model(paper: str, params: Mapping[str, object] | None = None) -> ReducedModel:
    """The reduced model of ``paper`` with its defaults, overridden by ``params`` (by name)."""
    if paper in PAPERS:
        return PAPERS[paper](params)
    try:
        mod = importlib.import_module(f"theory.models.{paper}")
    except ModuleNotFoundError as exc:
        if exc.name not in (f"theory.models.{paper}", "theory.models"):
            raise                          # the module exists but one of its imports is missing
        raise ValueError(f"model {paper!r} not found; allowed: {sorted(PAPERS)} or a module "
                         "theory.models.<name> with a MODEL") from None
    if not hasattr(mod, "MODEL"):
        raise ValueError(f"theory.models.{paper} has no MODEL; allowed: {sorted(PAPERS)} or a "
                         "module theory.models.<name> with a MODEL")
    defaults = getattr(mod, "DEFAULT_PARAMS", None)
    bound = None if (params is None and defaults is None) else {**(defaults or {}), **(params or {})}
    return OverlapReduced.from_model(mod.MODEL, bound,
                                     default_state=getattr(mod, "DEFAULT_STATE", None))
