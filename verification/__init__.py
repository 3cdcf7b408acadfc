"""Claim registry, runner, reports and regression guard (see ``python -m verification --help``)."""

from .compare import FlowComparison, sgd_vs_flow
from .context import Context
from .registry import REGISTRY, Claim, Outcome, claim, claims_for, get_claim
from .runner import run, run_claim
from . import userfiles  # noqa: F401,I001 (installs the finder of users' files, for workers)

__all__ = ["Context", "Claim", "Outcome", "claim", "claims_for", "get_claim", "REGISTRY",
           "run", "run_claim", "sgd_vs_flow", "FlowComparison"]
