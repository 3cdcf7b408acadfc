"""Cost per judgement of the committed maps (``docs/maps/*/map.json``), before and after a
re-make: the maps at a git revision (``--before``, read with ``git show``) against those in the
working tree. A judgement is one setting judged at one seed: before the re-make a map judged at
its own seed only; after it, the settings bracketing each boundary and each refutation the
shrink uses are judged again at two further seeds (``judgements.replicate``). Seconds are the
map's own wall clock (``seconds``), on the machine and under the load it was made with, so the
ratio is a record, not a measurement side by side (``benchmarks/map_cost.py`` is one).

    python benchmarks/map_cost_committed.py --before 4066be1 [--out benchmarks/map_cost.json]
        [--wall-clock FOLDER=SECONDS ...]

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
    escalated = n.get("escalated", 0)       # inconclusive settings judged at the full profile
    return {"map_seed": n["map_seed"], "replicate": n["replicate"],
            **({"escalated": escalated} if escalated else {}),
            "total": n["map_seed"] + n["replicate"] + escalated}


def _row(doc: dict, wall_clock: float | None = None) -> dict:
    n = _judgements(doc)
    ce = doc.get("counterexample")
    seconds = doc["seconds"] if wall_clock is None else wall_clock
    return {"seconds": seconds,
            "seconds_from": "map.json" if wall_clock is None else "--wall-clock",
            "judgements": n, "seconds_per_judgement": round(seconds / n["total"], 2),
            "holds_at": doc["holds_at"], "boundary_points": len(doc["boundary"]),
            "counterexample": ce and {k: ce[k] for k in ("setting", "summary")},
            "complete": doc["complete"]}


def _wall_clocks(pairs: list[str]) -> dict[str, float]:
    out = {}
    for pair in pairs:
        folder, _, value = pair.partition("=")
        try:
            seconds = float(value)
        except ValueError:
            seconds = float("nan")
        if not folder or not seconds > 0 or seconds == float("inf"):
            raise SystemExit(f"--wall-clock {pair!r}: allowed FOLDER=SECONDS, seconds > 0")
        out[folder] = seconds
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="git revision of the maps before")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "map_cost.json")
    ap.add_argument("--wall-clock", action="append", default=[], metavar="FOLDER=SECONDS",
                    help="the wall clock of a map made in several runs before map.json counted "
                         "an interrupted run's time (its seconds are the last run's only)")
    args = ap.parse_args()
    wall = _wall_clocks(args.wall_clock)
    rows = {}
    for path in sorted((ROOT / "docs" / "maps").glob("*/map.json")):
        rel = path.relative_to(ROOT).as_posix()
        old = subprocess.run(["git", "show", f"{args.before}:{rel}"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        before = _row(json.loads(old))
        after = _row(json.loads(path.read_text()), wall.pop(path.parent.name, None))
        if before == after:
            after = None                   # not re-made
        rows[path.parent.name] = {
            "claim": json.loads(old)["claim"], "before": before, "after": after,
            "ratio_per_judgement": after and round(after["seconds_per_judgement"]
                                                   / before["seconds_per_judgement"], 2)}
    if wall:
        raise SystemExit(f"--wall-clock: no map folder {sorted(wall)} in docs/maps")
    out = json.loads(args.out.read_text()) if args.out.exists() else {}
    out["committed_maps"] = {"before_revision": args.before, "maps": rows}
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    for name, r in rows.items():
        print(name, r["before"]["seconds_per_judgement"],
              r["after"] and r["after"]["seconds_per_judgement"], r["ratio_per_judgement"])


if __name__ == "__main__":
    main()
