"""The suite's layering, bottom to top: a module imports only from its own layer or those below
it (``tests/verification/test_layers.py`` checks every import statement, lazy ones included, and that no
modules import each other in a circle).

The same table says what the content hash of a claim's code follows (``verification.codehash``):
the layers marked ``hashed`` are what a claim computes with (the symbolic models, the numerics,
the claim API and check library, the claims themselves); the others schedule, store, find or
report results without computing them, and an edit there does not throw the stored results away.
The code cache's storage (``numerics.codegen.cache``, ``numerics.codegen.signing``) sits below
the numerics that use it but is not hashed: it keeps the text that the generators (which are)
produce; it does not make it.

Imports nothing: ``codehash`` reads it while hashing."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Layer", "LAYERS", "CLAIMS_LAYER", "SIMULATED", "EXACT", "layer_of", "hashed",
           "simulated"]


@dataclass(frozen=True)
class Layer:
    name: str
    modules: tuple[str, ...]
    """Module names; a name covers its submodules too unless a longer name is listed elsewhere."""
    hashed: bool
    """Part of what a claim computes with: followed and counted by the code hash."""


LAYERS: tuple[Layer, ...] = (
    Layer("theory: symbolic models and their derivations", ("theory",), hashed=True),
    Layer("storage: where generated code and results are kept", (
        "numerics.storage", "numerics.codegen.cache", "numerics.codegen.signing"), hashed=False),
    Layer("numerics: generated code, expectations, flows, SGD", ("numerics",), hashed=True),
    Layer("simulations: what the claims simulate, keyed by their own code",
          ("verification.simulations",), hashed=True),
    Layer("claim API: what a claim computes and judges with",
          ("verification.domain", "verification.paper_boundaries", "verification.declare",
           "verification.registry", "verification.stats",
           "verification.checks", "verification.context"), hashed=True),
    Layer("claims: the papers' statements", ("verification.claims",), hashed=True),
    Layer("catalogue: which claims, models and users' files there are",
          ("verification.catalogue", "verification.userfiles"), hashed=False),
    Layer("execution: tasks, where they run, where results and records are kept",
          ("verification.layers", "verification.codehash", "verification.store",
           "verification.storeops", "verification.records", "verification.simtasks",
           "verification.engine", "verification.tasks", "verification.replication",
           "verification.figures",
           "verification.campaign"), hashed=False),
    Layer("reports: what is written about a run", ("verification.report", "verification.guard"),
          hashed=False),
    Layer("runs: a run, a sweep, a calibration, a map",
          ("verification.runner", "verification.sweep", "verification.calibrate",
           "verification.domain_calibration", "verification.mapping", "verification.map_pages"),
          hashed=False),
    Layer("interface: the public names and the command line",
          ("verification", "verification.cli", "verification.__main__"), hashed=False),
)

CLAIMS_LAYER = next(i for i, layer in enumerate(LAYERS) if "verification.claims" in layer.modules)
SIMULATED = next(i for i, layer in enumerate(LAYERS) if "verification.simulations" in layer.modules)
"""The layers at or below this one (theory, numerics, the simulations) are what a claim
simulates with; those above it up to the claims' are what it judges with (the simulation and
judge hashes of a claim's code, ``verification.codehash.claim_hashes``)."""

EXACT = frozenset({"verification"})
"""Listed names that stand for their package's ``__init__`` alone (the public names), not for
its submodules: each of those is listed on its own."""

_INDEX = {m: i for i, layer in enumerate(LAYERS) for m in layer.modules}


def layer_of(module: str) -> int | None:
    """The index in ``LAYERS`` of ``module`` (its longest listed prefix); None when unlisted."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        i = _INDEX.get(prefix)
        if i is not None and (n == len(parts) or prefix not in EXACT):
            return i
    return None


def simulated(module: str) -> bool:
    """Whether ``module`` is simulation code (theory, numerics, ``verification.simulations``)
    rather than judging code (the claim API, the check library, the claims)."""
    i = layer_of(module)
    return i is not None and i <= SIMULATED


def hashed(module: str) -> bool:
    """Whether the code hash follows and counts ``module``: a module of a hashed layer, at or
    below the claims' (an unlisted module counts too: recomputing is the safe side)."""
    i = layer_of(module)
    return i is None or (LAYERS[i].hashed and i <= CLAIMS_LAYER)
