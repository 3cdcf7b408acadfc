"""The order parameters of H attention heads: ``HeadState`` and ``head_state_names``, declared
in the symbolic layer (``theory.headstate``, beside the multi-head model) and re-exported here
for the reduced flow, the Monte Carlo losses and the SGD simulators."""

from theory.headstate import HeadState, head_state_names

__all__ = ["HeadState", "head_state_names"]
