"""``conclude``: a claim's Outcome from the legs the library judged, so that no claim decides its
verdict by hand: the verdict is :func:`combine`'s, the summary the claim's text for that verdict
(or the library's own), the evidence says each leg's decision."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..declare import Outcome
from .contract import Check, combine, legs_summary

Says = Mapping[str, str] | Callable[[str], str] | str | None
"""What a claim says of its verdict: a text per verdict ({"confirmed": ..., "refuted": ...}),
a function of the verdict, one text for any, or None (the library's legs summary)."""


def conclude(legs: Mapping[str, Check], *, says: Says = None, evidence: dict | None = None,
             tracked: dict | None = None, arrays: dict | None = None,
             figures: dict | None = None) -> Outcome:
    """The Outcome of a claim whose legs (name → the Check a policy returned) were judged:

    - verdict: :func:`combine` over the legs (any refuted → refuted; all confirmed →
      confirmed; else inconclusive);
    - summary: ``says`` for that verdict, else :func:`legs_summary`; an inconclusive verdict
      always ends with what would decide (each undecided leg's ``needs``);
    - evidence: the claim's, with ``legs``: each leg's decision, resolution and needs.

    ``tracked``, ``arrays`` and ``figures`` are the claim's (see ``Outcome``)."""
    if not legs:
        raise ValueError("legs is empty: a verdict needs at least one judged leg")
    for name, check in legs.items():
        if not isinstance(check, Check):
            raise TypeError(f"leg {name!r} is a {type(check).__name__}, not a Check: judge it "
                            "with a policy of the check library")
    checks = list(legs.values())
    verdict = combine(checks)
    text = _said(says, verdict) or legs_summary(checks, list(legs))
    if verdict == "inconclusive":
        needs = [f"{n}: {c.needs}" for n, c in legs.items()
                 if c.decision == "inconclusive" and c.needs and c.needs not in text]
        if needs:
            text = f"{text}; to decide: {'; '.join(needs)}"
    leg_record = {name: {"decision": c.decision, "resolution": c.resolution,
                         **({"needs": c.needs} if c.needs else {})}
                  for name, c in legs.items()}
    return Outcome(verdict, text, {**(evidence or {}), "legs": leg_record}, dict(tracked or {}),
                   dict(arrays or {}), dict(figures or {}))


def _said(says: Says, verdict: str) -> str:
    if says is None:
        return ""
    if isinstance(says, str):
        return says
    if callable(says):
        return str(says(verdict) or "")
    return str(says.get(verdict, ""))
