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
from collections.abc import Mapping
from dataclasses import dataclass

import sympy as sp

from theory.model import Param, check_params
from theory.models import sagitova2026 as _sm

from ..kinds import KINDS, Kind, kind_of
from .base import ReducedModel
from .heads import HeadReduced
from .overlap import OverlapReduced

__all__ = ["Choice", "PAPERS", "paper_model", "dohmatob_reduced", "SAGITOVA_PARAMS", "SAGITOVA_DEFAULTS",
           "Kind", "KINDS", "kind_of", "reduce_token_sum", "reduce_dohmatob", "reduce_heads"]


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
    return reduce_token_sum(mm.MODEL, {**mm.DEFAULT_PARAMS, **dict(params or {})},
                            default_state=mm.DEFAULT_STATE)


# --- Dohmatob 2025 --------------------------------------------------------------------------
def _dm():
    from theory.models import dohmatob2025 as dm
    return dm


def _link_choice(link):
    """``link`` as a :class:`theory.models.dohmatob2025.Link` (a built-in name, a Link, a SymPy
    Lambda or a function of one SymPy symbol); a ValueError naming ``link`` and what is allowed."""
    dm = _dm()
    if isinstance(link, str):
        if link not in dm.LINKS:
            raise ValueError(f"parameter link={link!r} is not allowed; allowed: one of "
                             f"{sorted(dm.LINKS)}, or --param link=PATH.py:NAME naming a SymPy "
                             "Lambda of one variable or a function of one SymPy symbol returning "
                             "a SymPy expression in it (e.g. CUBE = lambda t: t**3)")
        return dm.as_link(link)
    try:
        return dm.as_link(link)
    except ValueError as exc:
        raise ValueError(f"parameter {exc}") from None


def dohmatob_reduced(link=None, risk: sp.Expr | None = None,
                     params: Mapping[str, object] | None = None,
                     extra_params: tuple[Param, ...] = ()) -> OverlapReduced:
    """Dohmatob's overlap flow: the projected gradient flow of R̄(µ, ν, ζ, η, ρ) (Prop. 1,
    ``theory.models.dohmatob2025.paper_risk(link)``) on the Gram structure of (u, v; u*, v*)
    (Sec. 4), as an :class:`OverlapReduced`.

    link:   the link σ of R̄: a name of ``dohmatob2025.LINKS`` (None: ``DEFAULT_LINK``,
            linear), or a user's link (a ``Link``, a SymPy Lambda of one variable or a function
            of one SymPy symbol; ``dohmatob2025.as_link``); it names the model also when
            ``risk`` is given;
    risk:   a risk replacing R̄ (e.g. a deliberately wrong formula); an expression in the five
            order parameters and the parameters (d, α, β, γ) plus ``extra_params``;
    params: values of (d, α, β, γ) (and ``extra_params``) by name, checked against their
            ranges; None leaves them unbound (the symbolic derivations are available, numerical
            methods raise). ``paper_model("dohmatob2025")`` binds ``DEFAULT_PARAMS``.

    A ValueError names a link that is neither a built-in name nor a link of one variable, a
    parameter out of range, or a symbol of ``risk`` that is neither an order parameter nor a
    parameter.
    """
    dm = _dm()
    model = dm.DohmatobModel(_link_choice(dm.DEFAULT_LINK if link is None else link))
    return reduce_dohmatob(model, params, risk=risk, extra_params=extra_params)


def reduce_dohmatob(model, params: Mapping[str, object] | None = None, *,
                     risk: sp.Expr | None = None, extra_params: tuple[Param, ...] = (),
                     **kw) -> OverlapReduced:
    """The Dohmatob kind's reduced model: the overlap flow of the model's R̄ (or ``risk``) on its
    geometry. A ``link`` among ``params`` replaces the model's link."""
    dm = _dm()
    values = dict(params or {}) if params is not None else None
    if values is not None and "link" in values:
        model = dm.DohmatobModel(_link_choice(values.pop("link")))
    kw.setdefault("name", model.name)
    kw.setdefault("default_state", dm.DEFAULT_STATE)
    kw.setdefault("risk_name", ("Rbar", r"\bar{R}"))
    rm = OverlapReduced.from_risk(model.geometry, model.risk if risk is None else risk,
                                  tuple(model.params) + tuple(extra_params), values, **kw)
    rm.declaration = model
    return rm


def _dohmatob(params):
    dm = _dm()
    values = {"link": dm.DEFAULT_LINK, **dm.DEFAULT_PARAMS, **dict(params or {})}
    return reduce_dohmatob(dm.MODEL, values)


# --- Sagitova et al. 2026 -------------------------------------------------------------------
SAGITOVA_PARAMS = _sm.PARAMS
SAGITOVA_DEFAULTS = _sm.DEFAULT_PARAMS
"""Sagitova's parameter declarations, declared in ``theory.models.sagitova2026`` (``PARAMS``,
``DEFAULT_PARAMS``) and kept here under their old names."""

def _sagitova(params):
    from theory.multihead import MultiHeadModel
    values = {**_sm.DEFAULT_PARAMS, **dict(params or {})}
    words = {k: values.pop(k) for k in _sm.WORDS}      # an Activation object stays one
    v = check_params(_sm.PARAMS, values, "sagitova2026")
    H = int(v["H"])
    if int(v["n"]) % 4:
        raise ValueError(f"parameter n={int(v['n'])} is out of range; allowed: a multiple of 4, ≥ 8")
    model = MultiHeadModel(H, int(v["L"]), _sm.FEATURES, words["activation"], delta=v["delta"],
                           output=str(words["output"]))
    return reduce_heads(model, {"n": int(v["n"]), "seed": int(v["seed"]),
                                "sgd_noise": v["sgd_noise"]},
                        prior=_sm.flipping_spike(v["nu1"], v["nu2"]), name="sagitova2026",
                        default_state=_sm.default_state(H))


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
    kw = {} if getattr(mod, "DEFAULT_STATE", None) is None else {"default_state": mod.DEFAULT_STATE}
    return kind_of(mod.MODEL).reduce(mod.MODEL, bound, **kw)


# --- the reduce steps of the built-in kinds (``numerics.kinds``) -----------------------------
def reduce_token_sum(model, params: Mapping[str, object] | None = None, **kw) -> OverlapReduced:
    """The token-sum kind: the risk derived from the model's token sum (``theory.derive``)."""
    rm = OverlapReduced.from_model(model, params, **kw)
    rm.declaration = model
    return rm


def reduce_heads(model, params: Mapping[str, object] | None = None, *, prior=None,
                 **kw) -> HeadReduced:
    """The multi-head kind: ``params`` are HeadReduced's settings (n, seed, sgd_noise) and the
    prior (in ``params``, as ``numerics.sgd.simulate`` takes it, or as the keyword)."""
    values = {**dict(params or {}), **kw}
    if "prior" in values:
        if prior is not None:
            raise ValueError("prior: given twice (in params and as the keyword); give it once")
        prior = values.pop("prior")
    rm = HeadReduced(model, prior, **values)
    rm.declaration = model
    return rm
