"""One reduced-model interface for every model kind (see ``base.ReducedModel``).

>>> from numerics.reduced import reduced
>>> rm = reduced("marion2025")                     # the paper's model with default parameters
>>> y = rm.default_state(); rm.loss(y), rm.rhs(y)   # (value, standard error), dq/dt

The kinds (``KINDS``, the registry ``numerics.kinds``): a token-sum ``theory.Model``, Dohmatob's
student ``theory.models.dohmatob2025.DohmatobModel`` (its link a field) and a multi-head
``theory.multihead.MultiHeadModel``; each is reduced by ``reduced(declaration, params, **kw)``,
which asks ``kind_of(declaration).reduce``.
"""

from __future__ import annotations

from collections.abc import Mapping

from theory.model import Geometry

from ..kinds import KINDS, Kind, find_kind, kind_of
from .base import Equation, ReducedModel
from .heads import HeadReduced
from .overlap import OverlapReduced
from .registry import PAPERS, paper_model

__all__ = ["ReducedModel", "Equation", "OverlapReduced", "HeadReduced", "reduced", "paper_model",
           "PAPERS", "KINDS", "Kind", "kind_of"]


def reduced(obj: str | Geometry | object, params: Mapping[str, object] | None = None,
            **kw) -> ReducedModel:
    """The reduced model of ``obj``:

    * a paper's name ('marion2025', 'dohmatob2025', 'sagitova2026', or a module of
      ``theory.models`` with a MODEL): its default, ``params`` overriding by name;
    * a declaration of one of the ``KINDS``, through that kind's ``reduce``:
      a :class:`theory.Model`: :class:`OverlapReduced` of its derived risk, ``params`` bound;
      a :class:`theory.models.dohmatob2025.DohmatobModel`: :class:`OverlapReduced` of R̄ for
      its link (``params``: d, alpha, beta, gamma, and ``link`` to replace the model's);
      a :class:`theory.multihead.MultiHeadModel` with ``prior=``: :class:`HeadReduced`
      (``params`` and keywords: n, seed, sgd_noise, backend);
    * a :class:`theory.Geometry` with ``risk=`` (and ``param_spec=``, a tuple of Param):
      :class:`OverlapReduced` of that risk;
    * a ReducedModel: itself.
    """
    if isinstance(obj, ReducedModel):
        if params or kw:
            raise ValueError(f"reduced: {obj.name} is already a reduced model; build a new one to "
                             "change its parameters")
        return obj
    if isinstance(obj, str):
        if kw:
            raise ValueError(f"reduced({obj!r}): keywords {sorted(kw)} are not allowed with a "
                             "paper's name; give params={...}")
        return paper_model(obj, params)
    kind = find_kind(obj)
    if kind is not None:
        return kind.reduce(obj, params, **kw)
    if isinstance(obj, Geometry):
        if "risk" not in kw:
            raise ValueError("reduced(geometry): give risk= (a SymPy expression in its overlaps)")
        risk = kw.pop("risk")
        return OverlapReduced.from_risk(obj, risk, kw.pop("param_spec", ()), params, **kw)
    raise TypeError(f"reduced: cannot reduce a {type(obj).__name__}; allowed: a paper's name, "
                    "a declaration of a registered kind ("
                    + ", ".join(k.declaration.__name__ for k in KINDS.values())
                    + "; a MultiHeadModel with prior=), a Geometry (with risk=), a ReducedModel")
