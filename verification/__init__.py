"""Claim API, catalogue, runner, reports and regression guard (see ``python -m verification --help``).

The public names are imported on first use (PEP 562), so that ``python -m verification --help``
and the light commands do not pay for SymPy, SciPy and torch; the import statements stay
statements, so the content hash of a claim's code (``verification.codehash``) still follows
them."""

from . import userfiles  # noqa: F401 (installs the finder of users' files, for workers)

__all__ = ["Context", "Claim", "Outcome", "claim", "missed", "claims_for", "get_claim", "REGISTRY",
           "run", "run_claim", "CampaignOptions", "conclude", "sgd_vs_flow", "FlowComparison"]


def __getattr__(name: str):
    if name in ("FlowComparison", "sgd_vs_flow", "conclude"):
        from . import checks as module
    elif name == "CampaignOptions":
        from . import campaign as module
    elif name == "Context":
        from . import context as module
    elif name in ("REGISTRY", "Claim", "Outcome", "claim", "missed"):
        from . import declare as module
    elif name in ("claims_for", "get_claim"):
        from . import catalogue as module
    elif name in ("run", "run_claim"):
        from . import runner as module
    else:
        raise AttributeError(f"module 'verification' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
