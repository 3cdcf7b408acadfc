"""A refutation survives replication before it is published: each statistical claim a run
refutes is judged again at independent seeds; it stays ``refuted`` only if every replicate
refutes it too, else it becomes ``inconclusive``, saying where it did and did not replicate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import hashlib
from typing import Any

__all__ = ["REPLICATES", "replicate", "replicate_seed", "replicate_seeds", "needs_replication",
           "replicated_entry"]

REPLICATES = 2
"""Further seeds at which a refutation is judged again before it is reported (``run``'s
default; 0 publishes single-seed refutations, as calibration's records measure them)."""


def replicate_seed(seed: int, replicate: int) -> int:
    """The run seed of the ``replicate``-th replication of a run at ``seed`` (independent of
    ``seed`` and of the other replicates: every claim derives its own seeds from it)."""
    digest = hashlib.sha256(f"replicate:{int(seed)}:{int(replicate)}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def replicate_seeds(seed: int, replicates: int) -> list[int]:
    """The run seeds of the 1st … ``replicates``-th replications of a run at ``seed``."""
    return [replicate_seed(seed, r) for r in range(1, replicates + 1)]


def needs_replication(claim, entry: dict) -> bool:
    """Whether ``entry`` (a claim's report entry) is a refutation that replication can test: a
    claim refuted whose verdict depends on its seed (``Claim.replicate``: by default a
    statistical one; an exact check of a seeded random initialisation declares it)."""
    replicable = claim.statistical if claim.replicate is None else claim.replicate
    return bool(replicable) and entry.get("verdict") == "refuted"


def replicated_entry(entry: dict, seed: int, replicates: Sequence[dict]) -> dict:
    """``entry`` with its replicates' verdicts (``replication``: seed, verdict, summary each);
    ``inconclusive`` unless every replicate refutes too."""
    rows = [{"seed": int(r["seed"]), "verdict": r["verdict"], "summary": r["summary"]}
            for r in replicates]
    out = {**entry, "replication": {"seed": int(seed), "replicates": rows}}
    if rows and all(r["verdict"] == "refuted" for r in rows):
        out["summary"] = f"{entry['summary']} [replicated at seeds {[r['seed'] for r in rows]}]"
        return out
    others = ", ".join(f"seed {r['seed']}: {r['verdict']}" for r in rows)
    out.update(verdict="inconclusive",
               summary=f"refuted at seed {seed} but not replicated ({others}): "
                       f"{entry['summary']}")
    out["evidence"] = {**entry.get("evidence", {}),
                       "needs": "a refutation that replicates at independent seeds: more "
                                "samples or larger d where it did not"}
    return out


def replicate(claims: Sequence[Any], results: dict[int, dict], seed: int, replicates: int,
              run_tasks: Callable[[list[tuple[int, int]]], dict[tuple[int, int], dict]]) -> list[int]:
    """Replace each replicable refutation in ``results`` (by claim index: {"entry": ...}) by
    its replicated entry; ``run_tasks([(i, seed), ...])`` runs claim i at each seed and
    returns the entries by (i, seed). The indices whose verdict moved."""
    todo = [i for i in sorted(results) if needs_replication(claims[i], results[i]["entry"])]
    if not todo or replicates < 1:
        return []
    seeds = replicate_seeds(seed, replicates)
    got = run_tasks([(i, s) for i in todo for s in seeds])
    moved = []
    for i in todo:
        reps = [{**got[(i, s)], "seed": s} for s in seeds]
        entry = replicated_entry(results[i]["entry"], seed, reps)
        if entry["verdict"] != results[i]["entry"]["verdict"]:
            moved.append(i)
        results[i] = {**results[i], "entry": entry}
    return moved
