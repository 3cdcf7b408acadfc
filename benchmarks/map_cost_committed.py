"""Cost per judgement of the committed maps (``docs/maps/*/map.json``), before and after a
re-make: the maps at a git revision (``--before``, read with ``git show``) against those in the
working tree. A judgement is one setting judged at one seed: before the re-make a map judged at
its own seed only; after it, the settings bracketing each boundary and each refutation the
shrink uses are judged again at two further seeds (``judgements.replicate``). Seconds are the
map's own wall clock (``seconds``), on the machine and under the load it was made with, so the
ratio is a record, not a measurement side by side (``benchmarks/map_cost.py`` is one).

    python benchmarks/map_cost_committed.py --before 4066be1 [--out benchmarks/map_cost.json]

Writes the key ``committed_maps`` of ``--out`` (its other keys kept)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import subprocess

ROOT = Path(__file__).resolve().parents[1]


def _judgements(doc: dict) -> dict:
    """{"map_seed", "replicate", "total"}: recorded by the map when it counts them, else (a map
    made before replication) its points, each judged once."""
    n = doc.get("judgements") or {"map_seed": len(doc["points"]), "replicate": 0}
    return {"map_seed": n["map_seed"], "replicate": n["replicate"],
            "total": n["map_seed"] + n["replicate"]}


def _row(doc: dict) -> dict:
    n = _judgements(doc)
    ce = doc.get("counterexample")
    return {"seconds": doc["seconds"], "judgements": n,
            "seconds_per_judgement": round(doc["seconds"] / n["total"], 2),
            "holds_at": doc["holds_at"], "boundary_points": len(doc["boundary"]),
            "counterexample": ce and {k: ce[k] for k in ("setting", "summary")},
            "complete": doc["complete"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="git revision of the maps before")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "map_cost.json")
    args = ap.parse_args()
    rows = {}
    for path in sorted((ROOT / "docs" / "maps").glob("*/map.json")):
        rel = path.relative_to(ROOT).as_posix()
        old = subprocess.run(["git", "show", f"{args.before}:{rel}"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        before, after = _row(json.loads(old)), _row(json.loads(path.read_text()))
        if before == after:
            after = None                   # not re-made
        rows[path.parent.name] = {
            "claim": json.loads(old)["claim"], "before": before, "after": after,
            "ratio_per_judgement": after and round(after["seconds_per_judgement"]
                                                   / before["seconds_per_judgement"], 2)}
    out = json.loads(args.out.read_text()) if args.out.exists() else {}
    out["committed_maps"] = {"before_revision": args.before, "maps": rows}
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    for name, r in rows.items():
        print(name, r["before"]["seconds_per_judgement"],
              r["after"] and r["after"]["seconds_per_judgement"], r["ratio_per_judgement"])


if __name__ == "__main__":
    main()
