"""The result store (``verification.store``): an entry round-trips, task keys are canonical and
every kind of damage is a miss; an entry is data, never a pickle, and is trusted only when the
store key authenticates it: planted, forged, replayed or wrong-shaped entries and planted
non-entries are reported and recomputed, never run, hang or exhaust a run; a full disk keeps
the earlier entries; subtasks are stored one by one, and an interrupted, killed or damaged run
resumes from the store with the same verdicts."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
from pathlib import Path
import pickle
import signal
import subprocess
import sys
import time

from hypothesis import given
from hypothesis import strategies as st
import numpy as np
import pytest

from numerics.codegen import signing
from numerics.codegen.cache import CacheDamaged, cached_text
from verification import Outcome
from verification.declare import REGISTRY, claim
from verification.records import to_jsonable
from verification.runner import run
from verification.store import (MISSING, STORE_ENV, ResultStore, StoreNotStored, Unstorable, decode,
                                encode, task_key)
from verification.tasks import ClaimTask
from tests.helpers import CHEAP_CLAIMS, same_results

ROOT = Path(__file__).resolve().parents[2]
MARKER_NAME = "payload-ran"


class _Payload:
    """What an attacker pickles: unpickling it creates a file."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


# -- the codec --------------------------------------------------------------------------------
_leaf = (st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=True)
         | st.text(max_size=8) | st.binary(max_size=8) | st.complex_numbers(allow_nan=False)
         | st.builds(np.float32, st.floats(-1e6, 1e6, width=32))
         | st.lists(st.floats(allow_nan=False), max_size=4).map(np.array))


_value = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=3)
                      | st.lists(inner, max_size=3).map(tuple)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=3)
                      | st.dictionaries(st.integers(0, 9), inner, max_size=2), max_leaves=12)


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


@given(_value)
def test_an_entry_decodes_to_the_value_it_encodes(value):
    assert _same(decode(encode(value)), value)


def test_what_is_not_data_is_not_stored_and_an_entry_carries_no_pickle(tmp_path):
    for bad in [lambda: 0, object(), np.array([object()]), {"x": set}]:
        with pytest.raises(Unstorable, match="not data the store holds"):
            encode(bad)
    store = ResultStore(tmp_path)
    with pytest.warns(StoreNotStored):
        assert store.put(task_key(x=1), {"f": print}) is False
    assert store.get(task_key(x=1)) is MISSING
    # an NPZ whose member is an object array (a pickle inside) is refused, not unpickled
    buf = io.BytesIO()
    np.savez(buf, tree=np.frombuffer(b'{"~": "ndarray", "i": 0}', np.uint8),
             a0=np.array([_Payload(tmp_path / MARKER_NAME)], dtype=object))
    with pytest.raises(ValueError):
        decode(buf.getvalue())
    assert not (tmp_path / MARKER_NAME).exists()


# -- the store, its keys and its damage -------------------------------------------------------
def test_store_round_trip_and_every_kind_of_damage_is_a_miss(tmp_path):
    store = ResultStore(tmp_path)
    key = task_key(claim="x", seed=1)
    store.put(key, {"a": np.arange(3), "s": "text"})
    assert store.get(key)["a"].tolist() == [0, 1, 2]
    path = store.path(key)
    good = path.read_bytes()
    damages = {"truncated": good[: len(good) // 2], "garbage": b"\x00garbage" * 50,
               "payload changed": good[:-1] + bytes([good[-1] ^ 1]), "empty": b""}
    for what, data in damages.items():
        path.write_bytes(data)
        with pytest.warns(CacheDamaged):
            assert store.get(key) is MISSING, what
        assert not path.exists(), what                 # removed: recomputed next time
    assert len(store.damaged) == len(damages)
    store.put(key, 7)
    assert ResultStore(tmp_path, force=True).get(key) is MISSING
    assert ResultStore(tmp_path).get(key) == 7


def test_task_keys_are_canonical_and_refuse_what_they_cannot_hash():
    assert task_key(a=1, b=(1, 2)) == task_key(b=[1, 2], a=1)
    assert task_key(a=1) != task_key(a=2)
    assert task_key(x=np.float64(0.5)) == task_key(x=0.5)
    with pytest.raises(TypeError, match="cannot key"):
        task_key(a=object())


@pytest.fixture
def key_file(tmp_path, monkeypatch):
    path = tmp_path / "config" / "key"
    monkeypatch.setenv(signing.KEY_ENV, str(path))
    return path


def test_a_team_store_key_signs_the_store_but_never_code(tmp_path, key_file, monkeypatch):
    """A team shares a store by giving each member a copy of one store key: whoever holds it can
    sign store entries (data), but generated code is signed by the member's private key only."""
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path / "cache"))
    team = tmp_path / "team"
    team.mkdir(mode=0o700)
    (team / "store.key").write_text("ab" * 32 + "\n")
    (team / "store.key").chmod(0o600)
    monkeypatch.setenv(signing.STORE_KEY_ENV, str(team / "store.key"))
    team_key = bytes.fromhex("ab" * 32)
    assert signing.store_key() == team_key != signing.user_key()
    store, key = ResultStore(tmp_path / "store"), task_key(x=3)
    store.put(key, {"shared": 1})
    assert store.get(key) == {"shared": 1}
    # a team member forges a code-cache entry with the team key: it is not run
    import hmac as hmac_module
    text = "x = 1\n"
    mac = hmac_module.new(team_key, signing._message("codegen", "k/x", text.encode()),
                          hashlib.sha256).hexdigest()
    path = tmp_path / "cache" / "v2" / "k" / "x.py"
    path.parent.mkdir(parents=True)
    path.write_text(f"# attnv-hmac-sha256: {mac}\n{text}")
    with pytest.warns(CacheDamaged, match="unauthenticated"):
        assert cached_text("k", "x", lambda: "x = 2\n") == "x = 2\n"
    monkeypatch.setenv(signing.STORE_KEY_ENV, str(team / "missing.key"))
    with pytest.raises(signing.UnsafeKey, match="does not exist"):
        store.get(key)
    assert store.path(key).exists()      # a key problem is not the entry's damage: kept


def test_an_entry_another_key_wrote_is_not_trusted(tmp_path, key_file, monkeypatch):
    store, key = ResultStore(tmp_path / "store"), task_key(x=2)
    store.put(key, {"verdict": "confirmed"})
    monkeypatch.setenv(signing.KEY_ENV, str(tmp_path / "someone-else" / "key"))
    with pytest.warns(CacheDamaged, match="not authenticated"):
        assert store.get(key) is MISSING
    assert not store.path(key).exists() and store.damaged == [str(store.path(key))]


# -- planted and forged entries ---------------------------------------------------------------
def _verdict_of(ctx):
    return Outcome(ctx_state.get("verdict", "confirmed"), "toy", {"n": 1})


ctx_state: dict = {}


@pytest.fixture
def toys():
    made = []
    for name in ("a", "b"):
        claim(f"toy2099:store-{name}", "Toy", f"Toy claim {name}.", statistical=False)(_verdict_of)
        made.append(REGISTRY[f"toy2099:store-{name}"])
    yield made
    for c in made:
        del REGISTRY[c.id]
    ctx_state.clear()


def _store_of(where: str, tmp_path: Path, monkeypatch) -> tuple[dict, Path]:
    """run() options for a store given explicitly, the default one (OUT/store) or $ATTNV_STORE."""
    out = tmp_path / "out"
    if where == "explicit":
        return {"out": out, "store": tmp_path / "explicit"}, tmp_path / "explicit"
    if where == "environment":
        monkeypatch.setenv(STORE_ENV, str(tmp_path / "env-store"))
        return {"out": out}, tmp_path / "env-store"
    return {"out": out}, out / "store"


def _entry_path(c, root: Path) -> tuple[ResultStore, str]:
    store = ResultStore(root)
    return store, ClaimTask.make(c, "quick", 0, "cpu", figures=False, store=store).key


def _run(claims, **opts):
    return run(claims, show=False, figures=False, workers=0, calibration=None, **opts)


@pytest.mark.parametrize("where", ["explicit", "default", "environment"])
def test_a_planted_pickle_never_runs_and_is_reported_and_recomputed(tmp_path, monkeypatch, toys,
                                                                    where):
    opts, root = _store_of(where, tmp_path, monkeypatch)
    first = _run(toys[:1], **opts)
    store, key = _entry_path(toys[0], root)
    path = store.path(key)
    assert path.exists() and first["claims"][0]["verdict"] == "confirmed"
    marker = tmp_path / MARKER_NAME
    payload = pickle.dumps(_Payload(marker))
    for head in (b"attnv-store-3 hmac-sha256 " + hashlib.sha256(payload).hexdigest().encode(),
                 b"attnv-store-2 hmac-sha256 " + hashlib.sha256(payload).hexdigest().encode(),
                 b"attnv-store-1 " + hashlib.sha256(payload).hexdigest().encode()):
        path.write_bytes(head + b"\n" + payload)            # the digest recomputed
        legacy = path.with_name(f"{key}.pkl")                # the old layout's name
        legacy.write_bytes(head + b"\n" + payload)
        with pytest.warns(CacheDamaged):
            again = _run(toys[:1], **opts)
        assert not marker.exists()
        assert again["store_damaged"] == [str(path)] and again["reused"] == 0
        assert again["claims"][0]["verdict"] == "confirmed"
        assert store.get(key)["entry"]["verdict"] == "confirmed"     # recomputed and stored


@pytest.mark.parametrize("where", ["explicit", "default"])
def test_a_forged_verdict_is_reported_and_recomputed(tmp_path, monkeypatch, toys, where):
    opts, root = _store_of(where, tmp_path, monkeypatch)
    _run(toys, **opts)
    store, key = _entry_path(toys[0], root)
    path = store.path(key)
    genuine = path.read_bytes()
    head, _, body = genuine.partition(b"\n")
    meta, _, payload = body.partition(b"\n")          # the signed description, then the value
    result = decode(payload)
    result["entry"]["verdict"], result["entry"]["summary"] = "refuted", "forged"
    forged = meta + b"\n" + encode(result)
    for data in (head.split(b" hmac-sha256 ")[0] + b" hmac-sha256 "
                 + hashlib.sha256(forged).hexdigest().encode() + b"\n" + forged,   # digest redone
                 head + b"\n" + forged):                                        # MAC kept
        path.write_bytes(data)
        with pytest.warns(CacheDamaged):
            again = _run(toys[:1], **opts)
        assert again["claims"][0]["verdict"] == "confirmed", again["claims"][0]
        assert again["store_damaged"] == [str(path)]
    # a genuine entry of another claim copied under this one's key (a replay) is not trusted
    ctx_state["verdict"] = "refuted"
    _run(toys[1:], **{**opts, "force": True})
    ctx_state.clear()
    _, other = _entry_path(toys[1], root)
    path.write_bytes(store.path(other).read_bytes())
    with pytest.warns(CacheDamaged):
        again = _run(toys[:1], **opts)
    assert again["claims"][0]["verdict"] == "confirmed"


@pytest.mark.parametrize("bad", [3, {"entry": 3}, {"entry": {}, "arrays": {}, "figures": {},
                                                   "has_figures": False},
                                 "wrong claim", {"arrays": [1]}])
def test_a_store_entry_of_the_wrong_shape_is_damaged_so_recomputed(tmp_path, toys, bad):
    _run(toys[:1], out=tmp_path)
    store, key = _entry_path(toys[0], tmp_path / "store")
    if bad == "wrong claim":
        bad = store.get(key)
        bad["entry"]["id"] = toys[1].id
    elif isinstance(bad, dict) and "arrays" in bad and len(bad) == 1:
        bad = {**store.get(key), **bad}
    store.put(key, bad)                          # authenticated, but not a claim's result
    with pytest.warns(CacheDamaged):
        again = _run(toys[:1], out=tmp_path)
    assert again["claims"][0]["verdict"] == "confirmed" and again["reused"] == 0
    assert again["store_damaged"] == [str(store.path(key))]


def test_a_full_disk_degrades_the_store_to_recomputing_and_keeps_earlier_entries(tmp_path, monkeypatch):
    import errno

    import verification.store as store_module
    store = ResultStore(tmp_path)
    store.put(task_key(x=1), {"kept": 1})

    def full(path, data):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(store_module, "atomic_write_bytes", full)
    with pytest.warns(StoreNotStored, match="cannot write store entry .*No space left"):
        assert store.put(task_key(x=2), {"lost": 2}) is False
    assert store.put(task_key(x=3), {"lost": 3}) is False           # warned once, not again
    assert "No space left" in store.not_written
    assert store.get(task_key(x=1)) == {"kept": 1} and store.get(task_key(x=2)) is MISSING


@pytest.mark.parametrize("plant", ["fifo", "folder", "link to /dev/zero", "link to a file", "huge"])
def test_a_planted_non_entry_neither_hangs_nor_exhausts_a_run_and_is_recomputed(tmp_path, toys,
                                                                                 plant):
    _run(toys[:1], out=tmp_path)
    store, key = _entry_path(toys[0], tmp_path / "store")
    path = store.path(key)
    path.unlink()
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    if plant == "fifo":
        os.mkfifo(path)
    elif plant == "folder":
        path.mkdir()
    elif plant == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif plant == "link to a file":
        path.symlink_to(victim)
    else:
        with open(path, "wb") as f:              # sparse: 2 GiB claimed, nothing on disk
            f.truncate(2 << 30)
    with pytest.warns(CacheDamaged):
        again = _run(toys[:1], out=tmp_path)
    assert again["claims"][0]["verdict"] == "confirmed" and again["reused"] == 0
    assert victim.read_text() == "keep me"
    assert path.is_file() and not path.is_symlink()          # the recomputed entry
    assert store.get(key)["entry"]["verdict"] == "confirmed"


def test_planted_links_at_the_write_probe_and_the_lock_clobber_nothing(tmp_path):
    from verification.store import check_folder
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    for pid in range(os.getpid() - 2, os.getpid() + 3):
        (out / f".write-probe-{pid}").symlink_to(victim)
    check_folder(out, "--out")
    (out / ".lock").symlink_to(victim)
    with pytest.raises(ValueError, match=r"--out .*lock") as info:
        _run([], out=out)
    assert "\n" not in str(info.value) and victim.read_text() == "keep me"


# -- subtasks ---------------------------------------------------------------------------------
CALLS: list[int] = []


def _square(ctx, item):
    """A subtask: its randomness comes from the item and the run seed only."""
    if item == ctx_fail.get("at"):
        raise RuntimeError("interrupted")
    CALLS.append(item)
    return float(np.random.default_rng([ctx.seed, item]).standard_normal()) + item ** 2


ctx_fail: dict = {}


@pytest.fixture
def toy_claim():
    @claim("toy2099:map", "Toy", "Subtasks of a claim are stored one by one.", statistical=False)
    def toy(ctx):
        values = ctx.map(_square, list(range(5)))
        return Outcome("confirmed", f"sum {sum(values):.6f}", {"values": values})
    yield REGISTRY["toy2099:map"]
    del REGISTRY["toy2099:map"]


def test_subtasks_are_stored_one_by_one_and_an_interrupted_claim_resumes(tmp_path, toy_claim):
    CALLS.clear()
    ctx_fail["at"] = 3
    first = run([toy_claim], show=False, out=tmp_path, figures=False)
    assert first["claims"][0]["verdict"] == "error" and CALLS == [0, 1, 2]
    ctx_fail.clear()
    second = run([toy_claim], show=False, out=tmp_path, figures=False)
    assert second["claims"][0]["verdict"] == "confirmed" and CALLS == [0, 1, 2, 3, 4]
    fresh = run([toy_claim], show=False, out=tmp_path / "fresh", figures=False)
    assert to_jsonable(fresh["claims"][0]["evidence"]) == to_jsonable(second["claims"][0]["evidence"])
    from verification.context import Context
    from verification.simtasks import map_subtasks
    with pytest.raises(TypeError, match="item holds a builtins.object"):
        Context(store=ResultStore(tmp_path), mapper=map_subtasks).map(_square, [object()])
    # the context is plain data: without the tasks' mapper it cannot key calls for a store
    with pytest.raises(ValueError, match="needs the mapper"):
        Context(store=ResultStore(tmp_path)).map(_square, [1])
    CALLS.clear()                   # without a store: one after the other, nothing stored
    assert Context(seed=3).map(_square, [0, 1]) == Context(seed=3, mapper=map_subtasks).map(
        _square, [0, 1]) and CALLS == [0, 1, 0, 1]


# -- runs resumed from the store --------------------------------------------------------------
def _cmd(out: Path) -> list[str]:
    args = [sys.executable, "-m", "verification", "run", "--workers", "0", "--no-figures",
            "--out", str(out)]
    for c in CHEAP_CLAIMS:
        args += ["--claim", c]
    return args


def test_a_killed_run_resumes_from_the_store_with_the_same_verdicts(tmp_path):
    env = {**os.environ, "ATTNV_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "killed"
    proc = subprocess.Popen(_cmd(out), env=env, cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial, deadline = None, time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            partial = json.loads((out / "report.json").read_text())
        except (OSError, ValueError):
            partial = None
        if partial and partial["claims"]:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    proc.wait()
    assert partial is not None and partial["complete"] is False, "the run ended before the kill"
    assert 1 <= len(partial["claims"]) < len(CHEAP_CLAIMS)
    subprocess.run(_cmd(out), env=env, cwd=ROOT, check=True, capture_output=True)
    resumed = json.loads((out / "report.json").read_text())
    subprocess.run(_cmd(tmp_path / "whole"), env=env, cwd=ROOT, check=True, capture_output=True)
    whole = json.loads((tmp_path / "whole" / "report.json").read_text())
    assert resumed["complete"] and resumed["reused"] >= len(partial["claims"])
    same_results(whole, resumed)


def test_damaged_cache_and_store_are_recomputed_with_the_same_verdicts(tmp_path):
    """Fresh processes (as a user's next run is), so the generated code is read from the disk
    cache rather than from this process's memory."""
    env = {**os.environ, "ATTNV_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "verification", "run", "--workers", "0", "--no-figures", "--out",
           str(out), "--claim", "marion2025:manifold-invariant", "--claim", "marion2025:cor2-bayes-limit"]
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True)
    first = json.loads((out / "report.json").read_text())
    entries = sorted((out / "store").glob("??/*.entry"))
    generated = sorted((tmp_path / "cache").rglob("*.py"))
    assert first["complete"] and first["reused"] == 0 and entries and generated
    for i, f in enumerate(entries + generated):      # truncate half, garbage into the rest
        f.write_bytes(f.read_bytes()[: 40] if i % 2 else b"garbage\x00" * 9)
    again = subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    second = json.loads((out / "report.json").read_text())
    assert second["reused"] == 0 and len(second["store_damaged"]) == len(entries)
    assert "damaged store entry recomputed" in again.stderr
    assert not any(f.read_bytes().startswith(b"garbage") for f in generated)   # regenerated
    same_results(first, second)
