"""What the claims simulate: Monte Carlo, SGD, ODE integration, quadrature, exact symbolic work;
one package per paper, each simulation a module-level function ``fn(ctx, item)`` that a claim
runs through ``Context.map``.

A simulation is stored under the content hash of the code it runs (its own module's import
closure: this layer, ``numerics`` and ``theory``), its item and, when it is seeded, the run's
seed, profile, device and setting; never under the judging code (the check library, the claim
modules, the tasks). So a change of a judge re-judges stored simulations in seconds, and a change
of a simulation re-simulates exactly the claims whose simulations import it. The layering
(``verification.layers``) keeps this layer below the claim API: a module here that imports the
check library fails ``tests/verification/test_layers.py``."""

from .base import SimContext, SimulationMissing, derive_seed, is_seeded, setting_text, simulation

__all__ = ["SimContext", "SimulationMissing", "simulation", "is_seeded", "derive_seed", "setting_text"]
