"""The former home of the claim API, kept so that a user's claims file written as
``from verification.registry import Outcome, claim`` still loads: the names are
``verification.declare``'s (write ``from verification import Outcome, claim``). What finds and
loads claims (``load_all``, ``claims_for``, ``get_claim``, ``source_of``) is in
``verification.catalogue``; this module does not import it, so it creates no circle."""

from .declare import REGISTRY, VERDICTS, Claim, Outcome, claim

__all__ = ["VERDICTS", "Outcome", "Claim", "claim", "REGISTRY"]
