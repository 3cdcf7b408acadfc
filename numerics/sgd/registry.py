"""The SGD simulators, by model kind and method, and the one way to call them: ``simulate``.

Methods are data (as dedalus keeps its timesteppers): 'direct' moves the vectors in dimension
d (or D); 'gram' moves their Gram matrix, exactly in law, at a cost per step independent of the
dimension. A new kind adds its simulator classes here; each takes (model, params, config)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from theory.model import Model
from theory.multihead import MultiHeadModel

from .base import SGDResult, SGDSimulator, SimulationConfig
from .direct import DirectSGD
from .gram import GramSGD
from .multihead import MultiHeadSGD
from .multihead_gram import MultiHeadGramSGD

__all__ = ["SIMULATORS", "simulator", "simulate"]

SIMULATORS: dict[type, dict[str, type[SGDSimulator]]] = {
    Model: {"direct": DirectSGD, "gram": GramSGD},
    MultiHeadModel: {"direct": MultiHeadSGD, "gram": MultiHeadGramSGD},
}
"""Declaration type → method → simulator class."""


def simulator(model: object, method: str = "direct") -> type[SGDSimulator]:
    """The simulator class of ``model``'s kind for ``method``; a ValueError naming what exists."""
    for declaration, methods in SIMULATORS.items():
        if isinstance(model, declaration):
            if method not in methods:
                raise ValueError(f"method={method!r}; allowed: {sorted(methods)}")
            return methods[method]
    kinds = ", ".join(t.__name__ for t in SIMULATORS)
    raise TypeError(f"simulate: no SGD simulator for a {type(model).__name__}; allowed: {kinds}")


def simulate(model: object, params: Mapping[str, object], config: SimulationConfig,
             method: str = "direct", *, progress: Callable[[int, int], None] | None = None,
             until: Callable[[dict], bool] | None = None) -> SGDResult:
    """Online SGD of ``model`` on fresh samples, batched over ``config.seeds`` seeds.

    params: the model's parameters by name: a token-sum ``Model``'s (d, L, …), a
    ``MultiHeadModel``'s D (the dimension) and prior (the law of θ). config: a
    :class:`SimulationConfig` (step, steps, batch, seeds, seed, records, device, dtype, init;
    what ``init`` may be is the kind's: see its simulator). method: 'direct' or 'gram'.
    progress(k, steps) is called at each record; until(state) may stop the run at a record.
    Every option is checked before the first step."""
    if not isinstance(config, SimulationConfig):
        raise TypeError(f"config: a {type(config).__name__}; allowed: a SimulationConfig")
    return simulator(model, method)(model, params, config).run(progress, until)
