"""Calibration over a claim's domain, not only its reference: each claim is judged at sampled
settings of its whole domain (scrambled Sobol points, each with the next combination of the
choices in turn, plus the settings next to a transition the paper states,
``Claim.transitions``) at several seeds, single-seed verdicts as ``run`` judges
them before replication. A setting whose first run read nothing of its seed (``Tally.drew_seed``:
no seeded simulation, ``rng``, ``claim_seed`` or ``seed``) gives that verdict at every seed: it
is judged once, its verdict stands for every seed, and its row says ``seed_free``. A setting
refuted at some seeds and confirmed at others holds a false refutation of the single-seed check
(the claim cannot be both true and false there: each of its refutations is counted); one
refuted and never confirmed is a consistent finding (an inconclusive seed there lacked the
power), for the claim's own record to explain.

Output: ``domain.json`` = {"profile", "seeds", "settings_requested", "seconds", "complete",
"claims": [{"claim", "settings": [{"setting", "near_transition", "verdicts", "refuted",
"seed_free"}], "runs" (judgements made), "refuted_runs", "false_refutations", "seed_dependent",
"consistent_refutations", "coverage"}]}."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import functools
from pathlib import Path
import time
from typing import Any

from .declare import Claim
from .domain import setting_key
from .records import write_json

__all__ = ["calibrate_domain", "domain_record"]


def _settings(claim: Claim, n: int, seed: int) -> list[tuple[dict, bool]]:
    near = [(dict(s), True) for s in claim.transitions]
    sampled = claim.domain.sample(n - len(near), seed, paired=False) if n > len(near) else []
    return near + [(s, False) for s in sampled]


def domain_record(claim: Claim, rows: list[dict], seeds: Sequence[int]) -> dict:
    """A claim's record from its per-setting rows ({"setting", "near_transition", "verdicts":
    {seed: verdict}})."""
    out_rows, false, dependent, consistent = [], 0, [], []
    for r in rows:
        verdicts = [r["verdicts"].get(s) for s in seeds]
        # a seed-free setting's verdicts are one judgement's, copied: one run, refuted or not
        refuted = (sum(v == "refuted" for v in verdicts[:1]) if r.get("seed_free")
                   else sum(v == "refuted" for v in verdicts))
        row = {"setting": r["setting"], "near_transition": r["near_transition"],
               "verdicts": verdicts, "refuted": refuted, "seed_free": bool(r.get("seed_free"))}
        out_rows.append(row)
        if refuted and "confirmed" in verdicts:
            false += refuted
            dependent.append(setting_key(r["setting"]))
        elif refuted:
            consistent.append(setting_key(r["setting"]))
    done = sum(1 if r["seed_free"] else sum(v is not None for v in r["verdicts"])
               for r in out_rows)
    return {"claim": claim.id, "settings": out_rows, "runs": done,
            "refuted_runs": sum(r["refuted"] for r in out_rows), "false_refutations": false,
            "seed_dependent": dependent, "consistent_refutations": consistent,
            "coverage": {"settings": len(out_rows),
                         "near_transitions": sum(r["near_transition"] for r in out_rows),
                         "seeds": list(seeds),
                         "seed_free_settings": sum(r["seed_free"] for r in out_rows)}}


def _judge_settings(campaign, claim: Claim, plan: list, seed_list: list[int]) -> list[dict]:
    """Each setting of ``plan`` judged at the first seed, then at the others unless that run
    read nothing of its seed (``seed_free``: its verdict stands for every seed)."""
    rows = [{"setting": s, "near_transition": near, "verdicts": {}, "seed_free": False}
            for s, near in plan]

    def done(j: int, res: dict, pairs: list, first: bool) -> None:
        k, seed = pairs[j]
        rows[k]["verdicts"][seed] = res["entry"]["verdict"]
        if first and res.get("seed_free") and res["entry"]["verdict"] != "error":
            rows[k]["seed_free"] = True

    def judge(pairs: list, first: bool) -> None:
        campaign.run([campaign.task(claim, seed, setting=plan[k][0]) for k, seed in pairs],
                     functools.partial(done, pairs=pairs, first=first))
    judge([(k, seed_list[0]) for k in range(len(plan))], first=True)
    judge([(k, seed) for k in range(len(plan)) if not rows[k]["seed_free"]
           for seed in seed_list[1:]], first=False)
    for r in rows:
        if r["seed_free"]:
            r["verdicts"].update({s: r["verdicts"][seed_list[0]] for s in seed_list})
    return rows


MAX_SETTINGS = 1024
"""The most settings a domain calibration samples (each is judged at every seed)."""
MAX_SEEDS = 1000


def calibrate_domain(claims: Sequence[Claim], settings: int = 8, seeds: int = 5,
                     options=None, *, out: str | Path | None = None,
                     progress: Callable[[str], object] | None = None,
                     **option_fields: Any) -> dict:
    """Judge each claim with a domain at ``settings`` settings (its declared transition
    settings first, then Sobol points of the domain) × seeds 1..``seeds``, on the run engine
    and its result store (``options``: a ``CampaignOptions`` or its fields; the device defaults
    to the CPU); write domain.json to ``out`` after every finished claim. Claims without a
    domain are skipped (listed under ``skipped``). ValueError on bad options, before any work."""
    from .campaign import Campaign, CampaignOptions

    for name, value, most in (("--domain", settings, MAX_SETTINGS), ("--seeds", seeds, MAX_SEEDS)):
        if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= most):
            raise ValueError(f"{name} {value!r}; allowed: an integer in 1..{most}")
    options = CampaignOptions.of(options or CampaignOptions(device="cpu"), **option_fields)
    campaign = Campaign(options, out)
    start = time.perf_counter()
    seed_list = list(range(1, seeds + 1))
    result = {"profile": options.profile, "seeds": seeds, "settings_requested": settings,
              "claims": [], "skipped": [c.id for c in claims if not c.domain.coordinates],
              "complete": False}

    def flush():
        result["seconds"] = round(time.perf_counter() - start, 1)
        if campaign.out is not None:
            write_json(campaign.out / "domain.json", result)

    with campaign.locked():
        for claim in (c for c in claims if c.domain.coordinates):
            plan = _settings(claim, settings, 0)
            rows = _judge_settings(campaign, claim, plan, seed_list)
            result["claims"].append(domain_record(claim, rows, seed_list))
            flush()
            if progress is not None:
                rec = result["claims"][-1]
                progress(f"{claim.id}: {rec['runs']} runs at {len(plan)} settings, "
                         f"{rec['false_refutations']} false refutations")
    result["complete"] = True
    flush()
    return result
