"""What the Dohmatob claim tests share: the run context and how they read an entry."""

from types import SimpleNamespace

from verification import Context, get_claim, run_claim
from verification.checks import Ledger
from verification.claims.dohmatob2025 import stationary_points

CTX = Context(profile="quick", seed=0, device="cpu")
LINKS = ("linear", "quadratic", "relu")
HIGH_T = {"alpha": 0.5, "beta": 0.5}        # β < β_c = 1
FROZEN = {"alpha": 0.2, "beta": 1.5}        # β > β_c = 0.63
S0 = stationary_points.SETTINGS[0]          # (0.1, 1, 0.6): the stationary-point reference


def verdict(cid, **kw):
    return run_claim(get_claim(cid), CTX, **kw)[0]


def at(cid, setting, **kw):
    """The claim's entry at one setting of its domain (its own contract)."""
    return run_claim(get_claim(cid), CTX, setting=setting, **kw)[0]


def families(entry, policy=None):
    """The entry's families by name (only those judged by ``policy`` when given)."""
    return {f["name"]: f for f in entry["contract"]["families"]
            if policy is None or f["policy"] == policy}


def bare_ctx():
    """A bare context for a judge called directly: its own ledger, α = 10⁻⁴, no perturbation."""
    return SimpleNamespace(ledger=Ledger(), alpha=1e-4, perturbation=None)


def per_setting(entry):
    """The evidence of each setting a claim judged (one setting: the entry's own)."""
    ev = entry["evidence"]
    return [s["evidence"] for s in ev["settings"]] if "settings" in ev else [ev]
