"""The SGD simulators' calling convention, ``simulate(declaration, params, config, method)``,
and ``SIMULATORS`` (declaration type → method → class): both are the kind registry's
(``numerics.kinds``), where each kind lists its simulators by method. Methods are data (as
dedalus keeps its timesteppers): 'direct' moves the vectors in dimension d (or D); 'gram'
moves their Gram matrix, exactly in law, at a cost per step independent of the dimension."""

from __future__ import annotations

from ..kinds import SIMULATORS, simulate, simulator

__all__ = ["SIMULATORS", "simulator", "simulate"]
