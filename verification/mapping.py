"""Where a claim holds over its domain: ``map`` samples the domain, judges each setting as a
task of the engine (stored: a map killed midway resumes from what it finished), locates the
boundaries between verdicts and shrinks a refuted setting to a minimal counterexample.

The pipeline, one pass per function:

1. ``sample``: scrambled Sobol points over the ranged coordinates, every choice
   (``Domain.sample``); each judged at the claim's α (``Claim.at``);
2. ``locate_boundaries``: each setting paired with its nearest neighbour of another verdict
   (same choices), the segment between them bisected until it is shorter than ``BOUNDARY_TOL``
   of every range; ``replicate_boundaries`` then judges both settings of each final bracket
   at the campaign's ``replicate`` independent seeds (default 2) (a boundary is
   ``confirmed`` when both keep their verdicts). With ``escalate``, each setting of the
   sample and of the bisection that is inconclusive at the quick profile is judged again at
   the full one (more draws, larger dimensions), and that verdict counts: the effort goes
   to the undecided settings, which cluster at the boundaries, so a boundary sits where the
   effect appears rather than where it first exceeds the quick profile's resolution; its
   sides are replicated at the profile that decided them;
3. ``shrink``: the refuted setting nearest the reference whose refutation replicates at those
   seeds, moved towards the reference while it stays refuted and replicated: along the segment,
   then coordinate by coordinate (integers down, choices to the first), each move bisected to
   ``BOUNDARY_TOL``, until no move keeps it refuted. An inconclusive setting (or a refutation
   that does not replicate) is unknown, never taken for one where the claim holds: a bisection
   stops there. A published counterexample is therefore refuted at three seeds (with
   ``escalate``, at the profile that decided it).

Why not python-adaptive or hypothesis: adaptive's learners refine a real-valued function over a
box (no integer or choice coordinates, no constraints, and a verdict is a category, not a value
with a loss to spread), and its runners ask for one point at a time, while a verdict boundary
only needs a bisection per pair of neighbours, batched over pairs. hypothesis's ``find`` shrinks
its own choice sequence from generated examples, hundreds of them, each here a simulation; the
shrink here starts from a counterexample the map already has and moves it towards a declared
reference with a bounded number of judgements. Both walks are deterministic given the verdicts,
so a resumed map takes the same steps and reads them from the store.

Output (``write_map``): map.json = {"claim", "domain", "reference", "seed", "profile",
"escalate_to", "complete", "seconds" (the wall clock of its runs, an interrupted run's included:
"seconds_before_resuming"), "points": [{"setting", "verdict", "summary", "contract", "stage",
"sequential", "escalated": {"profile", "verdict", "summary", "contract"}}], "boundary":
[{"setting", "between", "bracket", "resolution", "profiles", "replication", "confirmed", "kind",
"to_decide"}], "paper_boundaries": [{"statement", "where", "expression",
"coordinates"}], "counterexample": {"setting", "summary", "replication", "unknown", "judgements",
"budget_exhausted"} | null, "refutations_not_replicated", "holds_at", "judgements": {"map_seed",
"replicate", "escalated", "reused"}}, map.md, map.html and figures/ (one panel per pair of ranged
coordinates).

A point judged by the ``sequential`` policy draws until its confidence sequence decides, so
settings far from the boundary stop early and those near it draw up to the budget; a point's
``sequential`` says how many samples each such family drew and could have
(``sequential_cost`` sums them for the map)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import contextlib
import json
import math
from pathlib import Path
import time
from typing import TYPE_CHECKING, Any

from .domain import setting_key
from .map_pages import (COLOURS, JUDGED, boundary_kind, decision,  # noqa: F401 - the
                        draw_pair, map_html, map_markdown, map_summary,  # command's names
                        sequential_cost, verdict_of, write_map)
from .replication import replicate_seeds
from .records import read_json, write_json

if TYPE_CHECKING:
    from .campaign import Campaign, CampaignOptions
    from .declare import Claim

__all__ = ["map_claim", "write_map", "sequential_cost", "BOUNDARY_TOL", "MAP_FILES"]

BOUNDARY_TOL = 0.01
"""Boundaries and counterexamples are located to this fraction of each coordinate's range."""
MAX_SHRINK_JUDGEMENTS = 64
"""The shrink stops after this many judgements (the map records that it did)."""
FLUSH_SECONDS = 5.0
"""map.json is rewritten after a judgement that ends this long or longer after the last write."""
MAP_FILES = ("map.json", "map.md", "map.html", "figures")


class _Judge:
    """Settings judged as tasks of the campaign's engine, stored ones first; the engine is
    started at the first setting left to compute and kept for the whole map."""

    def __init__(self, campaign: Campaign, claim: Claim, seed: int, figures: bool,
                 on_point: Callable[[dict], None], progress=None,
                 on_judged: Callable[[dict], None] | None = None,
                 escalate_to: str | None = None):
        self.campaign, self.claim, self.seed, self.figures = campaign, claim, seed, figures
        self.on_point, self.progress, self.on_judged = on_point, progress, on_judged
        self.profile, self.escalate_to = campaign.profile, escalate_to
        self.seen: dict[tuple[int, str, str], dict] = {}
        self._stack = contextlib.ExitStack()
        self._entered = False

    def __enter__(self) -> _Judge:
        return self

    def __exit__(self, *exc) -> None:
        self._stack.__exit__(*exc)

    def __call__(self, settings: Sequence[dict], stage: str, seed: int | None = None,
                 profile: str | None = None) -> list[dict]:
        """The point record of each setting ({"setting", "verdict", "summary", "contract",
        "stage"}), judging those not seen yet; at ``seed`` (a replication) or ``profile`` (an
        escalation) instead of the map's (such records are kept apart: ``replicated``,
        ``decided``)."""
        from .campaign import checked_result
        from .tasks import claim_task, failed_result
        seed = self.seed if seed is None else int(seed)
        profile = profile or self.profile
        todo: dict[tuple[int, str, str], Any] = {}
        for s in settings:
            key = self._key(s, seed, profile)
            if key not in self.seen and key not in todo:
                todo[key] = self.campaign.task(self.claim, seed, setting=s,
                                               figures=self.figures, profile=profile)
        pending = []
        for key, spec in todo.items():
            hit = spec.lookup()
            if hit is not None:
                self._record(key, spec.setting, hit, stage)
            else:
                pending.append((key, spec))
        if pending:
            engine = self.campaign.engine
            if not self._entered:
                self._stack.enter_context(engine)
                self._entered = True
            index = {engine.submit(claim_task, spec).index: (key, spec) for key, spec in pending}
            for handle, result in engine.completed():
                key, spec = index[handle.index]
                result = (failed_result(spec, result) if isinstance(result, Exception)
                          else checked_result(spec, result))
                self._record(key, spec.setting, result, stage)
        return [self.seen[self._key(s, seed, profile)] for s in settings]

    def decided(self, settings: Sequence[dict], stage: str) -> list[dict]:
        """The map's point records of ``settings``, each one inconclusive at the map's profile
        judged again at ``escalate_to`` (a larger budget: more draws, larger dimensions) when
        the map escalates; that judgement is kept in the point's ``escalated``, and
        ``verdict_of`` reads it."""
        points = self(settings, stage)
        undecided = [p for p in points if p["verdict"] == "inconclusive" and "escalated" not in p]
        if self.escalate_to and undecided:
            again = self([p["setting"] for p in undecided], stage, profile=self.escalate_to)
            for p, q in zip(undecided, again):
                p["escalated"] = {"profile": self.escalate_to,
                                  **{k: q[k] for k in ("verdict", "summary", "contract",
                                                       "seconds", "reused", "sequential")
                                     if k in q}}
        return points

    def count(self) -> dict:
        """The settings judged (stored ones included): at the map's seed and profile, at
        replicate seeds (either profile), escalated (the map's seed at the larger profile), and
        how many of all were reused from the store."""
        own = sum(k[:2] == (self.seed, self.profile) for k in self.seen)
        larger = sum(k[0] == self.seed and k[1] != self.profile for k in self.seen)
        return {"map_seed": own, "replicate": len(self.seen) - own - larger,
                "escalated": larger, "reused": sum(p["reused"] for p in self.seen.values())}

    @staticmethod
    def _key(setting: dict, seed: int, profile: str) -> tuple[int, str, str]:
        return seed, profile, setting_key(setting)

    def replicated(self, setting: dict, verdict: str, stage: str,
                   profile: str | None = None) -> dict:
        """``setting`` judged again at the campaign's ``replicate`` independent seeds (the same
        option as ``run``'s), at ``profile`` (that of the verdict replicated; default the
        map's): {"seeds", "verdicts", "replicated": every one gave ``verdict``}."""
        if not self.claim.statistical:         # an exact check answers the same at every seed
            return {"seeds": [], "verdicts": [], "replicated": True, "exact": True}
        seeds = replicate_seeds(self.seed, self.campaign.options.replicate)
        verdicts = [self([setting], stage, seed=s, profile=profile)[0]["verdict"] for s in seeds]
        out = {"seeds": seeds, "verdicts": verdicts,
               "replicated": all(v == verdict for v in verdicts)}
        return {**out, "profile": profile} if profile and profile != self.profile else out

    def _record(self, key: tuple[int, str, str], setting: dict, result: dict,
                stage: str) -> None:
        entry = result["entry"]
        point = {"setting": setting, "verdict": entry["verdict"], "summary": entry["summary"],
                 "contract": entry.get("contract"), "stage": stage,
                 "seconds": round(float(entry.get("seconds") or 0.0), 3),
                 "reused": bool(result.get("reused"))}
        drawn = {name: {"samples": d["samples"], "budget": d["budget"]}
                 for name, d in (entry.get("family_data") or {}).items() if "samples" in d}
        if drawn:            # a sequential check stops when decided: how much it drew here
            point["sequential"] = drawn
        self.seen[key] = point
        if self.on_judged is not None:
            self.on_judged(point)
        if key[:2] != (self.seed, self.profile):   # a replication or an escalation: kept apart
            return
        self.on_point(point)
        if self.progress is not None:
            self.progress(point)


# --- the passes ------------------------------------------------------------------------------
def sample(claim: Claim, judge: _Judge, n: int, seed: int) -> list[dict]:
    return judge.decided(claim.domain.sample(n, seed), "sample")


def _segment(domain, a: dict, b: dict, t: float) -> dict:
    """The setting at fraction ``t`` from ``a`` to ``b`` (in each range's own scale; a and b
    share their choices)."""
    ua, ub = domain.to_unit(a), domain.to_unit(b)
    return domain.from_unit([x + t * (y - x) for x, y in zip(ua, ub)],
                            {k: a[k] for k in domain.choices})


def _close(domain, a: dict, b: dict) -> bool:
    """Whether a and b are within ``BOUNDARY_TOL`` of every range (integers: adjacent)."""
    for k in domain.ranged:
        c = domain.coordinates[k]
        if type(c).__name__ == "Integers":
            if abs(a[k] - b[k]) > 1 and abs(c.to_unit(a[k]) - c.to_unit(b[k])) > BOUNDARY_TOL:
                return False
        elif abs(c.to_unit(a[k]) - c.to_unit(b[k])) > BOUNDARY_TOL:
            return False
    return True


def _pairs(domain, points: list[dict]) -> list[tuple[dict, dict]]:
    """Each judged point with its nearest neighbour (same choices) of another judged verdict;
    each pair once."""
    judged = [(p, v) for p in points if (v := verdict_of(p)) in JUDGED]
    pairs, seen = [], set()
    for p, v in judged:
        others = [q for q, w in judged if w != v
                  and all(q["setting"][k] == p["setting"][k] for k in domain.choices)]
        if not others:
            continue
        up = domain.to_unit(p["setting"])
        q = min(others, key=lambda o: math.dist(up, domain.to_unit(o["setting"])))
        key = frozenset((setting_key(p["setting"]), setting_key(q["setting"])))
        if key not in seen:
            seen.add(key)
            pairs.append((p, q))
    return pairs


def locate_boundaries(claim: Claim, judge: _Judge, points: list[dict]) -> list[dict]:
    """Bisect every pair of neighbours with different verdicts (all pairs one step at a time,
    each step one batch of tasks); the boundary is the midpoint of each final bracket."""
    domain = claim.domain
    if not domain.ranged:
        return []
    brackets = [[p, q] for p, q in _pairs(domain, points)]
    done: list[dict] = []
    while brackets:
        open_, mids = [], []
        for a, b in brackets:
            if _close(domain, a["setting"], b["setting"]):
                done.append(_boundary(domain, a, b))
                continue
            m = _segment(domain, a["setting"], b["setting"], 0.5)
            if not domain.satisfies(m) or m in (a["setting"], b["setting"]):
                done.append(_boundary(domain, a, b))
                continue
            open_.append((a, b))
            mids.append(m)
        judged = judge.decided(mids, "boundary") if mids else []
        brackets = []
        for (a, b), m in zip(open_, judged):
            if verdict_of(m) == verdict_of(a):
                brackets.append([m, b])
            elif verdict_of(m) == verdict_of(b):
                brackets.append([a, m])
            elif verdict_of(m) in JUDGED:         # a third verdict between: two boundaries
                brackets += [[a, m], [m, b]]
            else:                                 # an error between: no boundary located there
                done.append({**_boundary(domain, a, b), "error_between": m["summary"]})
    return _unique(done)


def _boundary(domain, a: dict, b: dict) -> dict:
    sides = [decision(a), decision(b)]
    out = {"setting": _segment(domain, a["setting"], b["setting"], 0.5),
           "between": [d["verdict"] for d in sides],
           "bracket": [a["setting"], b["setting"]],
           "resolution": [(d["contract"] or {}).get("resolution") for d in sides]}
    if any(d["profile"] for d in sides):      # a side decided at the escalated profile
        out["profiles"] = [d["profile"] for d in sides]
    undecided = [d["summary"] for d in sides if d["verdict"] == "inconclusive"]
    if undecided:                 # an inconclusive side says what would decide it
        out["to_decide"] = undecided
    return out


def replicate_boundaries(judge: _Judge, boundaries: list[dict]) -> None:
    """Each boundary's two bracketing settings judged again at independent seeds: a boundary
    is ``confirmed`` when both keep their verdicts (``replication``: one record per side);
    its ``kind`` (``map_pages.boundary_kind``) says whether both sides are decided and kept."""
    for b in boundaries:
        if "error_between" not in b:
            profiles = b.get("profiles") or [None, None]
            reps = [judge.replicated(s, v, "boundary", profile)
                    for s, v, profile in zip(b["bracket"], b["between"], profiles)]
            b["replication"] = reps
            b["confirmed"] = all(r["replicated"] for r in reps)
        b["kind"] = boundary_kind(b)


def _unique(rows: list[dict]) -> list[dict]:
    out, seen = [], set()
    for r in rows:
        k = setting_key(r["setting"])
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def shrink(claim: Claim, judge: _Judge, points: list[dict],
           budget: int = MAX_SHRINK_JUDGEMENTS, notes: dict | None = None) -> dict | None:
    """The minimal counterexample: the refuted setting nearest the reference whose refutation
    replicates at independent seeds, moved towards the reference while it stays refuted and
    replicated (segment first, then each coordinate; each move bisected). A setting that is
    inconclusive, or refuted without replicating, is unknown: a bisection stops there rather
    than take it for one where the claim holds. None when no sampled refutation replicates
    (``notes["refutations_not_replicated"]`` lists those that did not)."""
    domain, ref = claim.domain, claim.domain.reference
    refuted = sorted((p for p in points if verdict_of(p) == "refuted"),
                     key=lambda p: (domain.distance(p["setting"], ref), setting_key(p["setting"])))
    if not refuted:
        return None
    walk = _Shrink(domain, judge, budget)
    best, rejected = _replicated_start(walk, refuted)
    if notes is not None:
        notes["refutations_not_replicated"] = rejected
    if best is None:
        return None
    changed = True
    while changed and not walk.exhausted:
        changed = False
        moves = [_with(best["setting"], {k: ref[k] for k in domain.ranged})] if domain.ranged else []
        moves += [_with(best["setting"], {k: ref[k]}) for k in domain.names]
        for target in moves:
            if walk.exhausted:
                break
            if target == best["setting"]:
                continue
            new = walk.move(best, target)
            if new["setting"] != best["setting"] and _nearer(domain, new["setting"],
                                                              best["setting"], ref):
                best, changed = new, True
    return {"setting": best["setting"], "summary": best["summary"],
            "replication": best["replication"], "unknown": walk.unknown, "judgements": walk.spent,
            "budget_exhausted": walk.exhausted}


def _replicated_start(walk: _Shrink, refuted: list[dict]) -> tuple[dict | None, list[dict]]:
    """The first of ``refuted`` (nearest the reference first) whose refutation replicates, and
    those before it that did not."""
    rejected = []
    for p in refuted:
        if walk.exhausted:
            break
        d = decision(p)
        rep = walk.replication(p["setting"], d["profile"])
        if rep["replicated"]:
            return {**p, "summary": d["summary"], "replication": rep}, rejected
        rejected.append({"setting": p["setting"], **rep})
    return None, rejected


class _Shrink:
    """The judgements one shrink spends (at most ``budget``, replications included)."""

    def __init__(self, domain, judge: _Judge, budget: int):
        self.domain, self.judge, self.budget, self.spent = domain, judge, budget, 0
        self.unknown: list[dict] = []
        """Settings met on the way that are neither refuted (and replicated) nor confirmed."""

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.budget

    def replication(self, setting: dict, profile: str | None = None) -> dict:
        rep = self.judge.replicated(setting, "refuted", "shrink", profile)
        self.spent += len(rep["seeds"])
        return rep

    def state(self, s: dict) -> tuple[str, dict | None]:
        """("refuted", point) for a refutation that replicates; ("holds", None) where the claim
        is confirmed; ("unknown", None) otherwise (and outside the domain: "holds", as before)."""
        if not self.domain.satisfies(s):
            return "holds", None
        p = self.judge.decided([s], "shrink")[0]
        d = decision(p)
        self.spent += 1 + ("escalated" in p)
        if d["verdict"] == "confirmed":
            return "holds", None
        if d["verdict"] == "refuted":
            rep = self.replication(s, d["profile"])
            if rep["replicated"]:
                return "refuted", {**p, "summary": d["summary"], "replication": rep}
        self.unknown.append({"setting": s, "verdict": d["verdict"]})
        return "unknown", None

    def move(self, current: dict, target: dict) -> dict:
        """The refuted setting nearest ``target`` on the segment from ``current`` (bisected to
        ``BOUNDARY_TOL``, the verdict taken as monotone along it, stopping at an unknown
        setting); a choice moves whole."""
        state, hit = self.state(target)
        if hit is not None:
            return hit
        if any(target[k] != current["setting"][k] for k in self.domain.choices):
            return current
        far, near = current, target         # far: refuted; near: not (or unknown)
        while not _close(self.domain, far["setting"], near) and not self.exhausted:
            mid = _segment(self.domain, far["setting"], near, 0.5)
            if mid in (far["setting"], near):
                break
            state, hit = self.state(mid)
            if state == "refuted":
                far = hit
            elif state == "holds":
                near = mid
            else:
                break
        return far


def _with(setting: dict, change: dict) -> dict:
    return {**setting, **change}


def _nearer(domain, new: dict, old: dict, ref: dict) -> bool:
    """Whether ``new`` is nearer the reference than ``old``: in the largest coordinate distance,
    or in the sum of them (a move of one coordinate), or in its choices."""
    if domain.distance(new, ref) < domain.distance(old, ref):
        return True
    un, uo, ur = domain.to_unit(new), domain.to_unit(old), domain.to_unit(ref)
    closer = sum(abs(a - c) for a, c in zip(un, ur)) < sum(abs(b - c) for b, c in zip(uo, ur)) - 1e-12
    fewer = sum(new[k] != ref[k] for k in domain.choices) < sum(old[k] != ref[k]
                                                                 for k in domain.choices)
    return closer or fewer


# --- the command -----------------------------------------------------------------------------
def map_claim(claim: Claim, points: int = 64, seed: int = 0,
              options: CampaignOptions | None = None, *, out: str | Path | None = None,
              figures: bool = True, refine: bool = True, show: bool = False, console=None,
              escalate: bool = False, **option_fields: Any) -> dict:
    """Map ``claim`` over its domain (see the module docstring) and return map.json's content;
    with ``out``, write map.json (rewritten after every batch, ``"complete": false`` until the
    end), map.md, map.html and figures/ there. ``options``: a
    ``verification.campaign.CampaignOptions`` or its fields as keywords (as for
    ``verification.runner.run``), checked before any work. ``escalate`` (profile quick only):
    every setting of the sample, the bisection and the shrink that is inconclusive is judged
    again at the full profile, whose verdict then counts when it decides (``_Judge.decided``,
    ``map_pages.decision``)."""
    from .campaign import Campaign, CampaignOptions
    from .runner import _progress
    if not claim.domain.coordinates:
        raise ValueError(f"{claim.id} declares no domain: there is nothing to map "
                         "(@claim(domain=...))")
    if not (isinstance(points, int) and points >= 1):
        raise ValueError(f"--points {points!r}; allowed: an integer ≥ 1")
    options = CampaignOptions.of(options, **option_fields)
    if escalate and options.profile != "quick":
        raise ValueError(f"escalate needs profile 'quick' (got {options.profile!r}: there is no "
                         "larger profile to escalate to)")
    campaign = Campaign(options, out)
    profile = options.profile
    start = time.perf_counter()
    doc = {"claim": claim.id, "statement": claim.statement, "domain": claim.domain.to_json(),
           "reference": claim.domain.reference, "seed": int(seed), "profile": profile,
           "points_requested": points, "escalate_to": "full" if escalate else None,
           "complete": False, "seconds": 0.0, "points": [],
           "boundary": [], "counterexample": None, "holds_at": None,
           "paper_boundaries": [b.to_json() for b in claim.boundaries]}
    out_path = campaign.out
    map_file = _MapFile(out_path, doc, start)
    flush = map_file.flush

    def on_point(point: dict) -> None:
        doc["points"].append(point)

    with campaign.locked(), _progress(show, console) as bar:
        task = bar.add_task(f"map {claim.id}", total=points) if bar else None
        tick = (lambda p: bar.update(task, advance=1,
                                     description=f"map {claim.id} ({p['stage']})")) if bar else None
        if out_path is not None:
            _clear(out_path)
            flush()
        with _Judge(campaign, claim, seed, False, on_point, tick, map_file.judged,
                    doc["escalate_to"]) as judge:
            try:
                sampled = sample(claim, judge, points, seed)
                flush()
                if refine:
                    doc["boundary"] = locate_boundaries(claim, judge, sampled)
                    flush()
                    replicate_boundaries(judge, doc["boundary"])
                    flush()
                    doc["counterexample"] = shrink(claim, judge, sampled, notes=doc)
            except BaseException:           # Ctrl-C or a failure: its time so far on disk
                flush()
                raise
        doc["judgements"] = judge.count()
        judged = [p for p in sampled if verdict_of(p) in JUDGED]
        doc["holds_at"] = (sum(verdict_of(p) == "confirmed" for p in judged) / len(judged)
                           if judged else None)
        doc["sampled"] = len(sampled)
        doc["complete"] = True
        flush()
        if out_path is not None:
            write_map(out_path, doc, figures, claim.boundaries)
            flush()
    return doc


class _MapFile:
    """map.json on disk: rewritten after every batch, after each judgement (replications
    too) that ends ``FLUSH_SECONDS`` or more after the last write, and when the map is
    interrupted, so that a resumed map's ``seconds`` count its interrupted run's too (a kill
    loses the time of the judgements under way)."""

    def __init__(self, out: Path | None, doc: dict, start: float):
        self.out, self.doc, self.start, self.last = out, doc, start, start
        self.earlier = _interrupted_seconds(out, doc)
        if self.earlier:
            doc["seconds_before_resuming"] = self.earlier

    def flush(self) -> None:
        self.last = time.perf_counter()
        self.doc["seconds"] = round(self.earlier + self.last - self.start, 2)
        if self.out is not None:
            write_json(self.out / "map.json", self.doc)

    def judged(self, _point: dict) -> None:
        if time.perf_counter() - self.last > FLUSH_SECONDS:
            self.flush()


def _interrupted_seconds(out: Path | None, doc: dict) -> float:
    """The wall clock an interrupted run of the same map (same claim, domain, seed, profile
    and points, left ``"complete": false`` in ``out``) had spent: a resumed map's ``seconds``
    count from its first start; 0 for a new map or a complete one (re-run from the store)."""
    if out is None or not (out / "map.json").is_file():
        return 0.0
    try:
        old = read_json(out / "map.json")
    except ValueError:                       # unreadable: it is cleared and rewritten
        return 0.0
    keys = ("claim", "domain", "seed", "profile", "points_requested", "escalate_to")
    same = isinstance(old, dict) and old.get("complete") is False and all(
        old.get(k) == json.loads(json.dumps(doc[k])) for k in keys)
    seconds = old.get("seconds") if same else None
    ok = isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds >= 0
    return float(seconds) if ok else 0.0


def _clear(out: Path) -> None:
    """The previous map's files, but map.json, which is rewritten at once (atomically)."""
    import shutil
    for name in MAP_FILES[1:]:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
