"""What runs leave behind and later runs read: the JSON and NPZ files (``to_jsonable``, atomic
writes), the calibration record (``calibration/<profile>.json``: ``load_calibration``,
``summary_rows``) and the run history (the committed baselines and the previous report, whose
seconds order the next run's tasks: ``expected_seconds``).

Below the reports, runs and calibration that write and read these files
(``verification.layers``): ``report``, ``runner``, ``sweep`` and ``calibrate`` import from here,
never from each other for a record.

The calibration record, as ``calibrate`` writes it: {"suite_version", "profile", "seeds",
"claims": [{"id", "alpha", "resolution", "exact", "runs", "false_refutations", "verdicts",
"mutations": [{"name", "runs", "refuted", "not_applied"?}], "not_applicable", "code",
"stages"}], "complete", "engine", "seconds", "parts"?, "rejudged"?}; ``code`` holds the two
content hashes of the claim's code, {"simulation", "judge"} (``claim_code``): a record is the
claim's record only while both are unchanged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import io
import json
import math
from pathlib import Path
import re
from typing import Any

import numpy as np

from numerics.codegen.cache import atomic_write_bytes

from .declare import REGISTRY, Claim

__all__ = ["to_jsonable", "cannot_write", "write_bytes", "write_json", "write_npz", "read_json",
           "DEFAULT_CALIBRATION", "MIN_MUTATIONS", "claim_code", "load_calibration",
           "load_calibration_data", "stale_parts",
           "whole_records", "summary_rows", "DEFAULT_BASELINE", "expected_seconds"]


# --- JSON and NPZ files --------------------------------------------------------------------
def to_jsonable(x: Any) -> Any:
    """``x`` with numpy scalars and arrays as Python numbers and lists, tuples as lists,
    non-finite floats as None, complex as {re, im}, anything else unknown as its str()."""
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else None
    if isinstance(x, complex):
        return {"re": to_jsonable(x.real), "im": to_jsonable(x.imag)}
    if x is None or isinstance(x, (str, int)):
        return x
    return str(x)


def cannot_write(path: str | Path, exc: OSError, verb: str = "write") -> OSError:
    """``exc`` (same errno, so the same OSError subclass) as "cannot write PATH: reason"."""
    reason = exc.strerror or str(exc)
    if exc.errno is None:
        return OSError(f"cannot {verb} {path}: {reason}")
    return OSError(exc.errno, f"cannot {verb} {path}: {reason}")


def write_bytes(path: str | Path, data: bytes) -> None:
    """``data`` to ``path`` atomically (a reader sees the old file or the new one, never half of
    one); a failure (ENOSPC, EACCES, ...) raises an OSError naming ``path``."""
    try:
        atomic_write_bytes(Path(path), data)
    except OSError as exc:
        raise cannot_write(path, exc) from exc


def write_json(path: str | Path, obj: Any) -> None:
    """``obj`` as indented strict JSON (``to_jsonable`` first), written atomically."""
    write_bytes(path, (json.dumps(to_jsonable(obj), indent=2, allow_nan=False) + "\n").encode())


def write_npz(path: str | Path, arrays: Mapping[str, Any]) -> None:
    """The arrays, compressed, in one NPZ file written atomically."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    write_bytes(path, buf.getvalue())


# --- JSON read back -------------------------------------------------------------------------
MAX_JSON_BYTES = 512 << 20
MAX_JSON_DEPTH = 64
"""What a JSON file the suite reads back (a report, a baseline, a calibration, a part to
merge) may be: a deeper or larger one is refused with one line, never parsed into a
RecursionError or a MemoryError."""


def read_json(path: str | Path) -> Any:
    """The JSON document in the file ``path``, as data: ValueError (one line, naming the file)
    when it is larger than ``MAX_JSON_BYTES``, nested deeper than ``MAX_JSON_DEPTH``, not JSON,
    or holds a number that is not finite (NaN, Infinity, 1e400); OSError when it cannot be
    read."""
    path = Path(path)
    with open(path, "rb") as f:
        data = f.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise ValueError(f"{path}: larger than {MAX_JSON_BYTES >> 20} MB")
    _check_depth(data, path)
    try:
        return json.loads(data, parse_constant=_not_finite, parse_float=_finite_float)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not JSON data ({' '.join(str(exc).split())[:200]})") from None


def _not_finite(name: str) -> float:
    raise ValueError(f"the number {name} is not finite")


def _finite_float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"the number {text[:40]} is not finite")
    return x


def _check_depth(data: bytes, path: Path) -> None:
    """Brackets nested deeper than ``MAX_JSON_DEPTH`` (strings skipped): refused before any
    parsing."""
    depth = 0
    for token in _TOKENS.finditer(data):
        b = token.group()
        if b in (b"[", b"{"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"{path}: nested deeper than {MAX_JSON_DEPTH} levels; allowed: "
                                 "a file this suite wrote")
        elif b in (b"]", b"}"):
            depth -= 1


_TOKENS = re.compile(rb'"(?:\\.|[^"\\])*"|[\[\]{}]')
"""A JSON string (skipped whole) or a bracket."""


# --- the calibration record ----------------------------------------------------------------
MIN_MUTATIONS = 3
"""Mutations each claim should be calibrated against (those that apply to it, the per-family
power runs counting as one); fewer is flagged."""

DEFAULT_CALIBRATION = Path(__file__).resolve().parents[1] / "calibration"
"""Where the committed calibration lives (``<profile>.json``); a run's report quotes it."""


def claim_code(claim: Claim) -> dict[str, str] | None:
    """The two content hashes of the code a claim's runs execute (its module and extra
    modules with their import closures, split by ``verification.codehash.split_hash``): what
    simulates ({"simulation"}) and what judges ({"judge"}); None for code without a source
    file."""
    from .codehash import split_hash
    try:
        return split_hash((claim.module or claim.check.__module__, *claim.extra_modules,
                           "verification.tasks"))
    except ValueError:
        return None


def load_calibration_data(path: str | Path) -> dict:
    """The calibration file ``path`` as written (ValueError naming it when it is absent,
    damaged or not whole)."""
    path = Path(path)
    try:
        data = read_json(path)
        if not (isinstance(data, dict) and isinstance(data.get("claims"), list)
                and whole_records(data["claims"]) and data.get("profile") and data.get("seeds")):
            raise ValueError("a record lacks the fields calibrate writes")
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not a calibration file ({exc})") from None
    return data


def load_calibration(path: str | Path, ids: Sequence[str] | None = None) -> dict | None:
    """The calibration in ``path`` restricted to the claims ``ids`` (all when None), for a
    report's calibration section; None when the file is absent or damaged (never trusted
    half-read: every record must have the fields calibrate writes). Each record gets
    ``current`` and, when it is not, ``stale``: which of its claim's code hashes moved."""
    try:
        data = load_calibration_data(path)
    except ValueError:
        return None
    keep = []
    for r in data["claims"]:
        if ids is None or r["id"] in set(ids):
            stale = stale_parts(r)
            keep.append({**r, "current": None if stale is None else not stale,
                         **({"stale": stale} if stale else {})})
    return {"source": str(path), "profile": data.get("profile"), "seeds": data.get("seeds"),
            "complete": data.get("complete", False), "claims": keep}


def whole_records(records) -> bool:
    """Every record has the fields calibrate writes (a half-written file is never trusted)."""
    needed = {"id", "alpha", "resolution", "runs", "false_refutations", "mutations"}
    return isinstance(records, list) and all(
        isinstance(r, dict) and needed <= set(r) and isinstance(r["id"], str)
        and type(r["runs"]) is int and type(r["false_refutations"]) is int
        and isinstance(r["mutations"], list) and all(isinstance(m, dict) for m in r["mutations"])
        for r in records)


def stale_parts(record: dict) -> list[str] | None:
    """Which of the claim's code hashes moved since the record was measured: [] when it is
    current, ["simulation"], ["judge"] or both, ["code"] for a record of the older single-hash
    format; None when it cannot be told (no hash, or the claim is not registered here)."""
    code = record.get("code")
    if not code or record["id"] not in REGISTRY:
        return None
    now = claim_code(REGISTRY[record["id"]])
    if now is None:
        return None
    if not isinstance(code, dict):
        return ["code"]
    return [part for part in ("simulation", "judge") if code.get(part) != now[part]]


def summary_rows(result: dict) -> list[str]:
    """The calibration tables. Claims: α, resolution, the true model's refutations over the K
    seeds with its verdicts (false refutations only where the claim holds: for a claim refuted
    at every seed they are the finding reproduced), the sign flip's and each declared
    mutation's refutations with its size in resolutions (a missed one marked). Families: each
    statistical family's resolution, power at 0.5× and 1× its resolution, pulls and flags."""
    rows = ["| claim | α | resolution | refuted under the true model | mutations refuted "
            "(size in resolutions) |", "|---|---|---|---|---|"]
    fam_rows = ["| claim | family | policy | resolution | power at 0.5× | power at 1× | "
                "pull mean [99 %] | pull sd [99 %] | flags |",
                "|---|---|---|---|---|---|---|---|---|"]
    for c in result["claims"]:
        muts = ", ".join(_mutation_text(m) for m in c["mutations"]) or "—"
        if c.get("not_applicable"):
            muts += f" (not applicable: {', '.join(c['not_applicable'])})"
        always_refuted = c["runs"] > 0 and c["false_refutations"] == c["runs"]
        if always_refuted and c["mutations"]:
            muts += " (the claim is refuted at every seed: no power shown)"
        mix = ", ".join(f"{v} {n}" for v, n in sorted((c.get("verdicts") or {}).items()))
        true_model = f"{c['false_refutations']}/{c['runs']}" + (f" ({mix})" if mix else "")
        alpha = "0 (exact)" if c.get("exact") else ("—" if c["alpha"] is None else f"{c['alpha']:.0e}")
        stale = ("" if c.get("current") is not False else
                 f" (stale: its {' and '.join(c.get('stale') or ['code'])} code changed)")
        powered = any(any((f.get("power_runs") or {}).values()) for f in c.get("families") or [])
        if c["runs"] and sum(m["runs"] > 0 for m in c["mutations"]) + powered < MIN_MUTATIONS:
            muts += f" — fewer than {MIN_MUTATIONS} mutations that apply"
        rows.append(f"| `{c['id']}`{stale} | {alpha} | {percent_text(c['resolution'])} | {true_model} "
                    f"| {muts} |")
        for f in c.get("families") or []:
            pw = f.get("power") or {}
            runs = f.get("power_runs") or {}
            power = [("—" if pw.get(k) is None else f"{pw[k]:.0%} ({runs.get(k, 0)})")
                     for k in ("0.5", "1")]
            pulls = f.get("pulls") or {}
            mean = _with_ci(pulls.get("mean"), pulls.get("mean_ci"), "+.2f")
            sd = _with_ci(pulls.get("sd"), pulls.get("sd_ci"), ".2f")
            flags = "; ".join(f.get("flags") or []) or "—"
            if always_refuted:
                flags = "the claim is refuted at every seed: no power shown; " + flags
            fam_rows.append(f"| `{c['id']}` | {f['name']} | {f.get('policy') or '—'} | "
                            f"{percent_text(f.get('resolution'))} | {power[0]} | {power[1]} | {mean} | "
                            f"{sd} | {flags} |")
    out = rows
    if len(fam_rows) > 2:
        out += ["", "Families (power: refuted fraction of the runs with the family's claimed "
                "values moved by 0.5× and 1× its own resolution, runs in brackets; pulls: "
                "(estimate − claim)/se under the true model, 99 % jackknife intervals over the "
                "seeds; a direction has no pulls):", ""] + fam_rows
    return out


def percent_text(r) -> str:
    """A resolution as text: "—" when not stated, "∞" when infinite, else a percentage."""
    return "—" if r is None else ("∞" if r == math.inf else f"{100 * r:.3g} %")


def _with_ci(x, ci, fmt: str) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:{fmt}}" + (f" [{ci[0]:{fmt}}, {ci[1]:{fmt}}]" if ci else "")


def _mutation_text(m: dict) -> str:
    size = m.get("size_in_resolutions")
    size = "" if size is None else f", {size:.3g}×" if math.isfinite(size) else ", ∞×"
    missed = " — missed by design: " + m["missed"] if m.get("missed") else ""
    return f"{m['name']}: {m['refuted']}/{m['runs']}{size}{missed}"


# --- the run history -----------------------------------------------------------------------
_BASELINES = Path(__file__).resolve().parents[1] / "baselines"


def DEFAULT_BASELINE(profile: str) -> Path:  # noqa: N802 - reads as the constant it stands for
    """The committed baseline of a profile: ``baselines/<profile>.json``."""
    return _BASELINES / f"{profile}.json"


def expected_seconds(out: Path | None, profile: str) -> dict[str, float]:
    """Seconds each claim took last time (the previous report in ``out``, else the committed
    baseline): the longest claims are started first."""
    for path in ([out / "report.json"] if out is not None else []) + [DEFAULT_BASELINE(profile)]:
        try:
            rep = read_json(path)
            seconds = {c["id"]: float(c.get("seconds") or 0) for c in rep["claims"]}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        return {k: v for k, v in seconds.items() if isinstance(k, str) and 0 <= v < 1e9}
    return {}
