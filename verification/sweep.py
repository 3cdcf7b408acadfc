"""Seed sweeps: the same claims at several run seeds, on one engine and one store, with their
verdicts side by side. A verdict that moves with the seed is either a false refutation within
the claim's α (its calibration record says how often that happens) or a check that cannot
decide; the table shows which claims to look at."""

from __future__ import annotations

from collections.abc import Sequence
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .declare import Claim

if TYPE_CHECKING:
    from .campaign import CampaignOptions

__all__ = ["sweep", "table_rows"]


def sweep(claims: Sequence[Claim], seeds: Sequence[int], options: CampaignOptions | None = None,
          *, out: str | Path | None = None, **option_fields: Any) -> dict:
    """{"profile", "seeds", "complete", "claims": [{"id", "verdicts": {seed: verdict},
    "summaries": {seed: summary}, "contract", "agree"}]}; sweep.json and sweep.md are
    rewritten in ``out`` after every finished run. ``options``: a
    ``verification.campaign.CampaignOptions`` or its fields as keywords (as for
    ``verification.runner.run``)."""
    from .campaign import Campaign, CampaignOptions
    from .records import DEFAULT_CALIBRATION, load_calibration

    seeds = [int(s) for s in seeds]
    if not seeds or min(seeds) < 0:
        raise ValueError(f"--seeds {seeds!r}; allowed: one or more integers ≥ 0")
    options = CampaignOptions.of(options, **option_fields)
    campaign = Campaign(options, out)
    profile, out = options.profile, campaign.out
    pairs = [(c, s) for s in seeds for c in claims]
    specs = [campaign.task(c, s) for c, s in pairs]
    rows = {c.id: {"id": c.id, "verdicts": {}, "summaries": {}, "contract": None} for c in claims}
    cal = load_calibration(DEFAULT_CALIBRATION / f"{profile}.json", [c.id for c in claims])
    records = {r["id"]: r for r in (cal or {}).get("claims", [])}
    result = {"profile": profile, "seeds": seeds, "complete": False, "claims": []}

    def finished(i: int, res: dict) -> None:
        c, s = pairs[i]
        e = res["entry"]
        rows[c.id]["verdicts"][str(s)] = e["verdict"]
        rows[c.id]["summaries"][str(s)] = e["summary"]
        rows[c.id]["contract"] = rows[c.id]["contract"] or e.get("contract")
        _refresh(result, rows, records, out)

    with campaign.locked():
        campaign.run(specs, finished)
        result["complete"] = True
        _refresh(result, rows, records, out)
    return result


def _refresh(result: dict, rows: dict, records: dict, out: Path | None) -> None:
    for row in rows.values():
        row["agree"] = len(set(row["verdicts"].values())) <= 1
        if row["id"] in records:
            rec = records[row["id"]]
            row["calibration"] = {"runs": rec["runs"], "false_refutations": rec["false_refutations"],
                                  "verdicts": rec.get("verdicts", {}), "current": rec.get("current")}
    result["claims"] = list(rows.values())
    if out is None:
        return
    from numerics.codegen.cache import atomic_write_text

    from .records import to_jsonable
    atomic_write_text(out / "sweep.json", json.dumps(to_jsonable(result), indent=2) + "\n")
    head = [f"# Seed sweep ({result['profile']} profile, seeds {result['seeds']}"
            f"{'' if result['complete'] else ', incomplete'})", ""]
    atomic_write_text(out / "sweep.md", "\n".join(head + table_rows(result)) + "\n")


def table_rows(result: dict) -> list[str]:
    """The sweep as a Markdown table: one row per claim, one column per seed."""
    seeds = [str(s) for s in result["seeds"]]
    rows = ["| claim | " + " | ".join(f"seed {s}" for s in seeds) + " | agree | calibration |",
            "|---|" + "---|" * len(seeds) + "---|---|"]
    for c in result["claims"]:
        rows.append(f"| `{c['id']}` | " + " | ".join(c["verdicts"].get(s, "…") for s in seeds)
                    + f" | {'yes' if c['agree'] else '**no**'} | {_calibration_cell(c, seeds[0])} |")
    return rows


def _calibration_cell(row: dict, first_seed: str) -> str:
    """The claim's calibration record: refutations under the true model are false refutations
    for a claim confirmed at the first seed, and the finding's reproducibility otherwise."""
    cal = row.get("calibration")
    if not cal or not cal["runs"]:
        return "—"
    if cal.get("current") is False:
        return "— (calibrated on other code)"
    first = row["verdicts"].get(first_seed)
    mix = ", ".join(f"{v} {n}" for v, n in sorted(cal.get("verdicts", {}).items()))
    if first == "confirmed":
        return f"{cal['false_refutations']}/{cal['runs']} false refutations" + (f" ({mix})" if mix else "")
    return f"refuted at {cal['false_refutations']}/{cal['runs']} seeds" + (f" ({mix})" if mix else "")

