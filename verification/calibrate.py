"""Calibration: each claim's measured record of false refutations, power and pulls.

For each claim, K runs under the true model with fresh seeds (1, …, K; seed 0 is the default
run's) count false refutations; perturbed and mutated runs measure power:

- **power per family**, once the K true runs are in, against a fixed alternative per setting of
  the claim's domain (each setting counted by its own verdict): a value family's finest
  comparison (the one its resolution is the resolution of) moved by k × the median over the
  seeds of the family's resolution at that setting (k = 0.5 and 1; ``ctx.perturbation =
  ("relative", ((setting, k·r), ...), family, None, "finest")``), judging the same simulations
  (the runs reuse them); a direction (``trend``, a directional ``sequential``) judged as "the
  effect is m + k·u", m its mean effect at that setting over the other seeds, u the median
  absolute resolution there. The stated resolution promises refutation with probability
  ≥ 95 % at k = 1; a family refuted less than 80 % of the time at 1× (resolution understated)
  or more than 99 % at 0.5× (overstated) is flagged;
- **sign flip**: every claimed value (or claimed direction) negated;
- **declared mutations** (``@claim(mutations=...)``: a dropped term, a wrong factor, a wrong
  model), all of them, caught or not (one known to be missed is declared with
  ``verification.declare.missed``): each is recorded with its size in units of its family's
  resolution (the largest change of estimate − claim over the comparisons, in units of that
  comparison's absolute resolution, against the true run of the same seed) and how often it
  was refuted; a missed one is what the check cannot see;
- **pulls**: (estimate − claimed value)/se of every statistical comparison under the true
  model, per family: their mean and sd with 99 % intervals from a jackknife over the seeds
  (clusters: the comparisons of one run are not independent), flagged when the interval
  excludes 0 (mean) or 1 (sd). A wrong standard error or an unstated bias shows there long before a false
  refutation does.

A perturbation that changes nothing (a sign flip of a claimed 0) is not counted; a claim whose
checks do not go through the check library gets no perturbed runs (listed as not applicable).

Output: ``calibration.json`` = {"suite_version", "profile", "seeds", "claims": [{"id", "alpha",
"resolution", "runs", "false_refutations", "verdicts", "families": [{"name", "policy",
"resolution", "required", "power": {"0.5", "1"}, "power_runs": {"0.5", "1"}, "pulls": {"mean",
"mean_ci", "sd", "sd_ci", "n", "seeds"}, "flags"}], "mutations": [{"name", "runs", "refuted",
"size_in_resolutions", "family", "missed"}], "not_applicable", "code", "stages"}], "seconds"} and
``calibration.md``, both written atomically. ``code`` holds the two content hashes of the
claim's code (``claim_code``: what it simulates with and what it judges with): a record is the
claim's record only while both are unchanged, and reports and sweeps say so, and which moved,
when they are not (``"current": false``, ``"stale"``). ``stages`` counts the runs that
simulated, those re-judged from stored simulations and those whose judgement was stored.

Every run reuses the stored simulations its key reaches: the perturbed runs and the declared
mutations that change only the judged side judge the true model's simulations (no new draws);
a mutation that changes the simulated model simulates once per seed. ``rejudge`` brings the
stale records of a calibration file up to date from stored simulations only, and lists the
records that still need simulating with their estimated time. Calibrations run in parts are
combined by ``merge_calibrations`` (``calibrate --merge A.json B.json``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
import functools
import json
import math
from pathlib import Path
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .declare import Claim
from .records import (DEFAULT_CALIBRATION, MIN_MUTATIONS, claim_code, expected_seconds,
                      load_calibration, load_calibration_data, read_json, summary_rows,
                      to_jsonable, whole_records)
from .tasks import SUITE_VERSION

if TYPE_CHECKING:
    from .campaign import CampaignOptions

__all__ = ["calibrate", "calibrate_claim", "rejudge", "write_calibration", "merge_calibrations",
           # the calibration record's format and reading are ``verification.records``'s:
           "summary_rows", "load_calibration", "claim_code", "DEFAULT_CALIBRATION", "MIN_MUTATIONS"]


POWER_AT = (0.5, 1.0)
"""Multiples of a family's resolution its claimed values are moved by to measure its power."""

SIGN_FLIP = "sign flip"

STAGES = ("simulated", "rejudged", "reused")
"""How a calibration run was computed: it simulated (some simulation was not stored), it was
re-judged from stored simulations, or its whole judgement was stored."""


def _uses_library(entry: dict) -> bool:
    c = entry.get("contract") or {}
    return bool(c.get("stated", True)) and not c.get("exact", False) and entry["verdict"] != "error"


def _power_key(k: float) -> str:
    return f"{k:g}"


class _ClaimRecord:
    """What the runs of one claim have shown so far."""

    def __init__(self, claim: Claim, seeds: int):
        self.claim, self.seeds = claim, seeds
        self.true: dict[int, dict] = {}
        self.declared = dict(claim.mutations or {})
        self.mutations: dict[str, dict[int, dict]] = {SIGN_FLIP: {}, **{n: {} for n in self.declared}}
        self.power: dict[tuple[str, str], list[str]] = {}
        self.not_applied: Counter[str] = Counter()
        self.stages: Counter[str] = Counter()
        self.missing: str | None = None
        """A simulation a re-judging run did not find (the record cannot be finished)."""

    # --- runs coming in ------------------------------------------------------------------
    def add(self, name: Any, seed: int, entry: dict, stage: str | None = None) -> list[tuple]:
        """Record one run (``name``: None for the true model, a mutation's name, or
        ("power", family, k, settings)); returns the perturbed runs it calls for: [(seed,
        perturbation, name)]. A power run counts each setting it moved by that setting's own
        verdict (a family spent at several settings states the coarsest resolution: moved
        together by it, the finer settings would be hit at several times their own).
        ``stage``: how the run was computed (``verification.tasks.claim_task``)."""
        if stage:
            self.stages[stage] += 1
        if isinstance(name, tuple):
            if entry.get("perturbation_applied") is False:
                self.not_applied[f"{name[1]} at {_power_key(name[2])}×"] += 1
            else:
                verdicts = _setting_verdicts(entry)
                self.power.setdefault((name[1], _power_key(name[2])), []).extend(
                    verdicts[key] for key in name[3] if key in verdicts)
            return []
        if name is not None:
            if entry.get("perturbation_applied") is False:
                self.not_applied[name] += 1
            else:
                self.mutations[name][seed] = entry
            return []
        self.true[seed] = entry
        follow = [(seed, ("sign",), SIGN_FLIP)] if _uses_library(entry) else []
        if len(self.true) == self.seeds:         # every family moved by a fixed alternative
            follow += self._power_runs()
        return follow

    def _statistical(self, entry: dict) -> list[tuple[dict, dict]]:
        """[(family's contract entry, its data (``Ledger.family_data``))] of the statistical
        families of a run."""
        data = entry.get("family_data") or {}
        return [(fam, data[fam["name"]])
                for fam in (entry.get("contract") or {}).get("families") or []
                if not fam.get("exact") and fam["name"] in data
                and not data[fam["name"]].get("exact")]

    def _power_runs(self) -> list[tuple]:
        """Each family's power runs, once the K true runs are in, as a fixed alternative per
        setting (not each seed's own realised resolution, which would measure only whether the
        standard error is right): a value family's finest comparison moved by k × the median
        over seeds of that setting's resolution; a direction judged as "the effect is m + k·u",
        m the mean effect at that setting over the other seeds, u the median absolute
        resolution there."""
        per: dict[str, dict] = {}
        for seed, e in sorted(self.true.items()):
            if not _uses_library(e):
                continue
            for fam, data in self._statistical(e):
                rec = per.setdefault(fam["name"], {"direction": bool(data.get("direction")),
                                                   "seeds": {}})
                rec["seeds"][seed] = data["settings"]
        out = []
        for name, rec in per.items():
            seeds = rec["seeds"]
            keys = sorted({key for at in seeds.values() for key in at})
            if rec["direction"]:
                out += self._direction_runs(name, seeds, keys)
                continue
            res = {key: float(np.median([at[key]["resolution"] for at in seeds.values()
                                         if key in at and _finite_positive(at[key]["resolution"])]
                                        or [math.nan])) for key in keys}
            res = {key: r for key, r in res.items() if _finite_positive(r)}
            if not res:
                self.not_applied[f"{name}: no finite resolution"] += 1
                continue
            for seed, at in seeds.items():
                own = tuple(key for key in res if key in at)
                out += [(seed, ("relative", tuple((key, k * res[key]) for key in own), name, None,
                                "finest"), ("power", name, k, own)) for k in POWER_AT if own]
        return out

    def _direction_runs(self, name: str, seeds: dict, keys: list[str]) -> list[tuple]:
        effect = {key: {s: float(np.mean(at[key]["deviation"])) for s, at in seeds.items()
                        if key in at} for key in keys}
        unit = {key: float(np.median([float(np.min(at[key]["unit"])) for at in seeds.values()
                                      if key in at])) for key in keys}
        out = []
        for seed in seeds:
            ref, delta = [], {}
            for key in keys:
                others = [v for s, v in effect[key].items() if s != seed] or list(
                    effect[key].values())
                m = float(np.mean(others))
                if m > 0 and unit[key] > 0 and seed in effect[key]:
                    ref.append((key, m))
                    delta[key] = unit[key] / m
            if not ref:
                self.not_applied[f"{name}: no effect in the claimed direction"] += 1
                continue
            own = tuple(key for key, _ in ref)
            out += [(seed, ("relative", tuple((key, k * delta[key]) for key in own), name,
                            tuple(ref)), ("power", name, k, own)) for k in POWER_AT]
        return out

    # --- the record ----------------------------------------------------------------------
    def to_json(self) -> dict:
        runs = [self.true[s] for s in sorted(self.true)]
        verdicts = Counter(e["verdict"] for e in runs)
        contract = (runs[0].get("contract") or {}) if runs else {}
        library = any(_uses_library(e) for e in runs)
        muts = [self._mutation(n) for n in self.mutations
                if (library or n != SIGN_FLIP) and (self.mutations[n] or not self.not_applied[n])]
        no_op = ([SIGN_FLIP] if self.not_applied[SIGN_FLIP] and not self.mutations[SIGN_FLIP]
                 else [])
        if not library and runs:
            no_op = [SIGN_FLIP, "power per family"]
        no_op += [k for k in self.not_applied
                  if k.endswith("claimed direction") or k.endswith("no finite resolution")]
        return {"id": self.claim.id, "alpha": contract.get("alpha"),
                "resolution": contract.get("resolution"), "exact": bool(contract.get("exact")),
                "runs": len(runs), "false_refutations": verdicts.get("refuted", 0),
                "verdicts": dict(verdicts), "families": self._families(runs),
                "mutations": muts, "not_applicable": no_op, "code": claim_code(self.claim),
                "stages": {k: self.stages.get(k, 0) for k in STAGES}}

    def _families(self, runs: list[dict]) -> list[dict]:
        order: dict[str, dict] = {}
        per_seed: dict[str, list[dict]] = {}
        for e in runs:
            for fam, data in self._statistical(e):
                order.setdefault(fam["name"], fam)
                per_seed.setdefault(fam["name"], []).append({**data, "resolution": fam["resolution"]})
        out = []
        for name, fam in order.items():
            seeds = per_seed[name]
            direction = bool(seeds[0].get("direction"))
            power = {_power_key(k): self.power.get((name, _power_key(k)), []) for k in POWER_AT}
            rec = {"name": name, "policy": fam.get("policy"),
                   "resolution": float(np.median([d["resolution"] for d in seeds])),
                   "required": fam.get("required"),
                   "power": {k: (sum(v == "refuted" for v in vs) / len(vs) if vs else None)
                             for k, vs in power.items()},
                   "power_runs": {k: len(vs) for k, vs in power.items()},
                   # a bound is an inequality: its estimates need not centre on the bound, so
                   # its pulls are taken about each comparison's mean over the seeds (their sd
                   # still tests the standard error)
                   "pulls": None if direction else pull_summary(
                       _centred(seeds) if fam.get("policy") == "bound" else seeds)}
            rec["flags"] = _family_flags(rec)
            out.append(rec)
        return out

    def _mutation(self, name: str) -> dict:
        done = self.mutations[name]
        sizes = []
        for s, e in done.items():
            x = _mutation_size(self.true[s], e) if s in self.true else None
            # refuted with nothing moved in any family: decided outside the check library (a
            # comparison the claim makes by hand), so no size can be given
            if x is not None and not (x[0] == 0 and e["verdict"] == "refuted"):
                sizes.append(x)
        sizes.sort(key=lambda x: x[0])
        median = sizes[(len(sizes) - 1) // 2] if sizes else None       # its family with it
        rec = {"name": name, "runs": len(done),
               "refuted": sum(e["verdict"] == "refuted" for e in done.values()),
               "size_in_resolutions": median[0] if median else None,
               "family": median[1] if median else None,
               "missed": getattr(self.declared.get(name), "why", None)}
        if self.not_applied[name]:
            rec["not_applied"] = self.not_applied[name]
        return rec


def _finite_positive(x) -> bool:
    return x is not None and math.isfinite(x) and x > 0


def _setting_verdicts(entry: dict) -> dict[str, str]:
    """{setting key: verdict} of a run: each setting's own over a claim's domain (its evidence
    lists them), else the claim's verdict for its one setting."""
    from .domain import setting_key

    ev = entry.get("evidence") or {}
    for holder in (ev.get("domain"), ev.get("judged_setting")):
        rows = holder.get("settings") if isinstance(holder, dict) else None
        if isinstance(rows, list) and rows and all(
                isinstance(r, dict) and "verdict" in r and isinstance(r.get("setting"), dict)
                for r in rows):
            return {setting_key(r["setting"]): r["verdict"] for r in rows}
    return {"": entry["verdict"]}


def _mutation_size(true: dict, mutated: dict) -> tuple[float, str] | None:
    """(the largest change of estimate − claim from the true run, in units of that comparison's
    absolute resolution, or of an exact family's tolerance; the family it is in), over the
    families both runs judged alike; a
    family whose comparisons the mutation changed counts as unbounded (inf). For a direction
    the change of the effect counts whichever way it goes (only a sign change refutes)."""
    a, b = true.get("family_data") or {}, mutated.get("family_data") or {}
    best = None
    for name, d in a.items():
        e = b.get(name)
        if e is None or len(e["deviation"]) != len(d["deviation"]):
            # the mutation changed what is compared: not a size in resolutions, but not 0
            if e is not None or not b:
                best = (math.inf, f"{name} (comparisons changed)") if best is None else best
            continue
        unit = np.asarray(d["unit"], float)
        change = np.abs(np.asarray(e["deviation"], float) - np.asarray(d["deviation"], float))
        with np.errstate(divide="ignore", invalid="ignore"):
            size = np.where(unit > 0, change / unit, np.where(change > 0, np.inf, 0.0))
        x = float(np.max(size)) if size.size else 0.0
        if best is None or x > best[0]:
            best = (x, name)
    return best


def pull_summary(seeds: list[dict]) -> dict | None:
    """Mean and sd of the pulls (estimate − claim)/se over every comparison of every seed, with
    99 % intervals from a jackknife over the seeds (the comparisons of one run are not
    independent: the seeds are the clusters), at Student t with K − 1 dof; None without a
    standard error. Fewer than 3 seeds: no intervals."""
    from scipy.stats import t as student_t

    per, bias = [], []
    for d in seeds:
        dev, se = np.asarray(d["deviation"], float), np.asarray(d["se"], float)
        ok = se > 0
        if ok.any():
            per.append(dev[ok] / se[ok])
            bias.append(np.asarray(d["bias"], float)[ok] / se[ok])
    if not per:
        return None

    def stats(groups):
        allp = np.concatenate(groups)
        return float(allp.mean()), float(allp.std(ddof=1)) if allp.size > 1 else math.nan
    mean, sd = stats(per)
    allowance = np.concatenate(bias)
    out = {"mean": mean, "sd": sd, "n": int(sum(p.size for p in per)), "seeds": len(per),
           "bias_allowance": float(np.median(allowance)),
           "bias_allowance_min": float(allowance.min()), "mean_ci": None, "sd_ci": None,
           **({"centred": True} if seeds and seeds[0].get("centred") else {})}
    k = len(per)
    if k >= 3 and math.isfinite(sd):
        loo = np.array([stats(per[:i] + per[i + 1:]) for i in range(k)])
        se_jk = np.sqrt((k - 1) / k * np.sum((loo - loo.mean(0)) ** 2, axis=0))
        q = float(student_t.ppf(0.995, k - 1))      # 99 %: the jackknife's sd interval under-covers
        out["mean_ci"] = [mean - q * se_jk[0], mean + q * se_jk[0]]
        out["sd_ci"] = [max(sd - q * se_jk[1], 0.0), sd + q * se_jk[1]]
    return out


def _centred(seeds: list[dict]) -> list[dict]:
    """The seeds' deviations less each comparison's mean over the seeds, scaled by
    √(K/(K − 1)) so that their sd estimates the estimates' own (``pulls`` of a bound:
    ``centred`` set, their mean not judged); unchanged when the seeds' comparisons differ in
    number."""
    sizes = {len(d["deviation"]) for d in seeds}
    k = len(seeds)
    if len(sizes) != 1 or k < 2:
        return seeds
    dev = np.array([d["deviation"] for d in seeds], float)
    dev = (dev - dev.mean(0)) * math.sqrt(k / (k - 1))
    return [{**d, "deviation": row.tolist(), "centred": True} for d, row in zip(seeds, dev,
                                                                               strict=True)]


def _family_flags(rec: dict) -> list[str]:
    """What the record says is wrong with the family's stated resolution or its se."""
    flags = []
    p1, ph = rec["power"].get("1"), rec["power"].get("0.5")
    if p1 is not None and p1 < 0.8:
        flags.append(f"power at 1× is {p1:.0%} < 80 %: the resolution is understated")
    if ph is not None and ph > 0.99:
        flags.append(f"power at 0.5× is {ph:.0%} > 99 %: the resolution is overstated")
    pulls = rec.get("pulls")
    if pulls and pulls.get("mean_ci"):
        lo, hi = pulls["mean_ci"]
        if (lo > 0 or hi < 0) and not pulls.get("centred"):
            within = abs(pulls["mean"]) <= pulls.get("bias_allowance", 0.0)
            flags.append(f"mean pull {pulls['mean']:+.2f} ≠ 0"
                         + (" (within the stated bias allowance)" if within else
                            ": a bias the check does not allow for"))
        lo, hi = pulls["sd_ci"]
        if lo > 1:
            # pulls spread within the bias the check adds to z·se do not move its decisions:
            # nearly all (3 sd about their mean) inside the smallest allowance
            within = (abs(pulls["mean"]) + 3 * pulls["sd"]
                      <= pulls.get("bias_allowance_min", pulls.get("bias_allowance", 0.0)))
            flags.append(f"pull sd {pulls['sd']:.2f} > 1" + (
                " (within the stated bias allowance)" if within else
                ": the standard error is understated"))
        elif hi < 1:
            flags.append(f"pull sd {pulls['sd']:.2f} < 1: the standard error is overstated "
                         "(conservative)")
    return flags


def calibrate_claim(claim: Claim, seeds: int, profile: str = "quick", device: str = "cpu",
                    progress: Callable[[str], object] | None = None) -> dict:
    """One claim's calibration record (see the module docstring), in this process."""
    return calibrate([claim], seeds, profile=profile, device=device,
                     progress=progress)["claims"][0]


def calibrate(claims: Sequence[Claim], seeds: int = 10, options: CampaignOptions | None = None,
              *, out: str | Path | None = None, progress: Callable[[str], object] | None = None,
              simulate: bool = True, write: Callable[[dict], None] | None = None,
              **option_fields: Any) -> dict:
    """Calibrate ``claims`` (``seeds`` runs each under the true model and each mutation) on the
    run engine and its result store (``options``: a ``verification.campaign.CampaignOptions``
    or its fields as keywords, as for ``verification.runner.run``; the device defaults to the
    CPU here, so that records do not depend on the machine), so an interrupted
    calibration resumes and every run judges the simulations stored for it; write
    calibration.json and calibration.md to ``out`` (or call ``write``) after every finished run
    (atomically). ``simulate=False``: only re-judge from stored simulations; a claim one of
    whose runs misses a simulation gets ``"missing"`` in its record (and no finished record)."""
    from .campaign import Campaign, CampaignOptions, checked_result
    from .tasks import claim_task

    if not (isinstance(seeds, int) and seeds >= 1):
        raise ValueError(f"--seeds {seeds!r}; allowed: an integer ≥ 1")
    options = CampaignOptions.of(options or CampaignOptions(device="cpu"), **option_fields)
    campaign = Campaign(options, out)
    profile, out, engine = options.profile, campaign.out, campaign.engine
    if write is None and out is not None:
        write = functools.partial(write_calibration, out)
    start = time.perf_counter()
    records = [_ClaimRecord(c, seeds) for c in claims]
    result = {"suite_version": SUITE_VERSION, "profile": profile, "seeds": seeds, "claims": [],
              "complete": False, "engine": engine.describe()}
    meta: dict[int, tuple[int, Any, int, Any]] = {}

    def submit(i: int, seed: int, mutation=None, perturbation=None, name=None, priority=0.0):
        if records[i].missing:          # re-judging: this claim cannot be finished
            return
        spec = campaign.task(claims[i], seed, mutation=mutation, perturbation=perturbation,
                             simulate=simulate)
        meta[engine.submit(claim_task, spec, priority=priority).index] = (i, name, seed, spec)

    # The cheapest claims run first, and a perturbed run (cheap: it reuses its unperturbed
    # run's simulations) before any new run, so that the claims finish one after the other and
    # an interrupted calibration leaves whole records behind.
    rank = {i: r for r, i in enumerate(sorted(range(len(claims)),
                                              key=lambda i: _expected_cost(claims[i], profile)))}
    with campaign.locked(), engine:
        for i, c in enumerate(claims):
            for s in range(1, seeds + 1):
                submit(i, s, priority=-rank[i])
                for name in c.mutations or {}:
                    submit(i, s, mutation=name, name=name, priority=-rank[i])
        for handle, res in engine.completed():
            i, name, s, spec = meta.pop(handle.index)
            res = res if isinstance(res, Exception) else checked_result(spec, res)
            for seed, perturbation, follow in _received(records[i], name, s, res, progress):
                submit(i, seed, perturbation=perturbation, name=follow, priority=1.0)
            _update(result, records, start, write)
    result["complete"] = not any(r.missing for r in records)
    return _update(result, records, start, write)


def _received(record: _ClaimRecord, name: Any, seed: int, res: Any,
              progress: Callable[[str], object] | None) -> list[tuple]:
    """One finished run into its claim's record; the perturbed runs it calls for."""
    what = (f"{name[1]} at {name[2]:g}× its resolution" if isinstance(name, tuple)
            else name or "true model")
    if isinstance(res, dict) and res.get("missing"):
        record.missing = record.missing or res["missing"]
        if progress:
            progress(f"{record.claim.id}: seed {seed} {what} → needs simulating ({res['missing']})")
        return []
    entry = res["entry"] if isinstance(res, dict) else {"verdict": "error"}
    follow = record.add(name, seed, entry, res.get("stage") if isinstance(res, dict) else None)
    if progress:
        progress(f"{record.claim.id}: seed {seed} {what} → {entry['verdict']}")
    return follow


def _expected_cost(claim: Claim, profile: str) -> float:
    """Seconds of one seed's runs (true model and declared mutations) by the committed
    baseline's timing of the claim; 0 for a claim it does not time (a user's: it goes first)."""
    return _baseline_seconds(profile).get(claim.id, 0.0) * (1 + len(claim.mutations or {}))


@functools.cache
def _baseline_seconds(profile: str) -> dict[str, float]:
    return expected_seconds(None, profile)


def _update(result: dict, records: list[_ClaimRecord], start: float,
            write: Callable[[dict], None] | None) -> dict:
    result["claims"] = [r.to_json() for r in records]
    for rec, r in zip(records, result["claims"]):
        if rec.missing:
            r["missing"] = rec.missing
    result["seconds"] = time.perf_counter() - start
    if write is not None:
        write(result)
    return result


def write_calibration(out: str | Path, result: dict) -> None:
    """calibration.json and calibration.md in the folder ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_calibration_file(out / "calibration.json", result)


def write_calibration_file(path: str | Path, result: dict) -> None:
    """The calibration as JSON in ``path`` and its tables beside it (``path`` with ``.md``),
    each written atomically."""
    from numerics.codegen.cache import atomic_write_text

    path = Path(path)
    atomic_write_text(path, json.dumps(to_jsonable(result), indent=2) + "\n")
    head = [f"# Calibration ({result['profile']} profile, {result['seeds']} seeds per claim"
            f"{'' if result.get('complete') else ', incomplete'})", ""]
    atomic_write_text(path.with_suffix(".md"), "\n".join(head + summary_rows(result)) + "\n")


def rejudge(path: str | Path, claims: Sequence[Claim] | None = None,
            options: CampaignOptions | None = None, *,
            progress: Callable[[str], object] | None = None, out: str | Path | None = None,
            **option_fields: Any) -> dict:
    """Bring the calibration file ``path`` (``calibration/quick.json``, say) up to date from
    stored simulations: every stale record (``verification.records.load_calibration``) of a
    registered claim (or of ``claims``) is measured again at the file's profile and K with
    ``simulate=False``; each record whose runs found every simulation replaces the old one,
    the file and its tables are rewritten (atomically), and the others are listed:
    {"rejudged": [ids], "current": [ids already current], "needs_simulating": [{"id",
    "missing", "estimated_seconds"}], "seconds"}. ``estimated_seconds``: one core's time to
    simulate the record afresh, from the committed baseline's timing of the claim. ``options``
    as for :func:`calibrate` (the file's profile is used whatever they say). ``out``: a folder
    to write the re-judged file to (``out/<path's name>``, with its tables) instead of
    rewriting ``path``, which is then left as it is."""
    from .campaign import CampaignOptions
    from .catalogue import load_all
    from .declare import REGISTRY

    load_all()                       # the built-in claims (and plugins'), for their code hashes
    path = Path(path)
    target = path
    if out is not None:
        from .store import check_folder
        target = check_folder(out, "--out") / path.name
    data = load_calibration_data(path)
    shown = load_calibration(path)
    wanted = None if claims is None else {c.id for c in claims}
    stale = [r["id"] for r in shown["claims"]
             if r["current"] is False and r["id"] in REGISTRY and (wanted is None or r["id"] in wanted)]
    current = [r["id"] for r in shown["claims"] if r["current"]]
    start = time.perf_counter()
    report = {"rejudged": [], "current": current, "needs_simulating": []}
    if stale:
        options = CampaignOptions.of(options or CampaignOptions(device="cpu"), **option_fields)
        out = calibrate([REGISTRY[i] for i in stale], seeds=int(data["seeds"]),
                        options=CampaignOptions.of(options, profile=data["profile"]),
                        progress=progress, simulate=False)
        fresh = {r["id"]: r for r in out["claims"]}
        for cid in stale:
            rec = fresh[cid]
            if rec.get("missing"):
                report["needs_simulating"].append(
                    {"id": cid, "missing": rec["missing"],
                     "estimated_seconds": _expected_cost(REGISTRY[cid], data["profile"])
                     * int(data["seeds"])})
            else:
                report["rejudged"].append(cid)
    if report["rejudged"]:
        records = [fresh[r["id"]] if r["id"] in report["rejudged"] else r for r in data["claims"]]
        data = {**data, "claims": records,
                "rejudged": {"claims": report["rejudged"], "seconds": out["seconds"]}}
        data["complete"] = all(r["runs"] >= int(data["seeds"]) for r in records)
    if report["rejudged"] or target != path:
        write_calibration_file(target, data)
    report["file"] = str(target)
    report["seconds"] = time.perf_counter() - start
    return report


def merge_calibrations(paths: Sequence[str | Path]) -> dict:
    """One calibration from several files of the same suite version, profile and K: each
    claim's record from the last file that has run it (a later part supersedes an earlier one,
    records with no runs never replace one with runs); ``seconds`` is the sum of the parts'
    wall times and ``parts`` lists each file's claims and seconds. A file that is not a
    calibration, or that disagrees on version, profile or K, is a ValueError naming it."""
    parts, merged, order = [], {}, []
    for path in paths:
        path = Path(path)
        try:
            data = read_json(path)
            records = data["claims"]
            if not isinstance(records, list):
                raise TypeError("its claims are not a list")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"--merge {path}: not a calibration.json ({exc})") from None
        if not whole_records(records):
            raise ValueError(f"--merge {path}: a record lacks the fields calibrate writes")
        head = {k: data.get(k) for k in ("suite_version", "profile", "seeds")}
        if parts and head != parts[0]["head"]:
            raise ValueError(f"--merge {path}: {head} differs from {parts[0]['head']} of "
                             f"{parts[0]['path']}; only parts of one calibration merge")
        parts.append({"path": str(path), "head": head, "seconds": data.get("seconds"),
                      "complete": bool(data.get("complete")),
                      "claims": [r["id"] for r in records if r["runs"]]})
        for r in records:
            if r["id"] not in merged:
                order.append(r["id"])
            if r["runs"] or r["id"] not in merged:
                merged[r["id"]] = r
    seconds = [p["seconds"] for p in parts]
    return {**parts[0]["head"], "claims": [merged[i] for i in order],
            "complete": all(merged[i]["runs"] >= parts[0]["head"]["seeds"] for i in order),
            "engine": "merged parts",
            "seconds": sum(seconds) if all(isinstance(x, (int, float)) for x in seconds) else None,
            "parts": [{k: p[k] for k in ("path", "seconds", "complete", "claims")} for p in parts]}
