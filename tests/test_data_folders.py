"""Data folders hold data: the result store and the code cache never run what they read, and
never trust an entry that the user's key does not authenticate (planted, forged, replayed,
damaged); local clusters listen on the loopback only; a claim that raises SystemExit or
KeyboardInterrupt is that claim's error."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
from pathlib import Path
import pickle
import stat

from hypothesis import given
from hypothesis import strategies as st
import numpy as np
import pytest

from numerics.codegen import signing
from numerics.codegen.cache import CacheDamaged, cached_text, check_cache
from verification import Outcome
from verification.declare import REGISTRY, claim
from verification.runner import run
from verification.store import (MISSING, STORE_ENV, ResultStore, StoreNotStored, Unstorable, decode,
                                encode, task_key)
from verification.tasks import ClaimTask

MARKER_NAME = "payload-ran"


class _Payload:
    """What an attacker pickles: unpickling it creates a file."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


# -- the codec ----------------------------------------------------------------------------------
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


# -- the key ------------------------------------------------------------------------------------
@pytest.fixture
def key_file(tmp_path, monkeypatch):
    path = tmp_path / "config" / "key"
    monkeypatch.setenv(signing.KEY_ENV, str(path))
    return path


def test_the_key_is_made_on_first_use_readable_by_the_user_only(key_file):
    key = signing.user_key()
    assert len(key) == 32 and signing.user_key() == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    signing._create(key_file)                     # a second creator keeps the first key
    assert signing.user_key() == key
    assert signing.verify("store", "k", b"x", signing.sign("store", "k", b"x"))
    assert not signing.verify("store", "other", b"x", signing.sign("store", "k", b"x"))


@pytest.mark.parametrize("mode, fragment", [(0o622, "written by others"),
                                            (0o660, "written by others"),
                                            (0o604, "read by others"),
                                            (0o640, "read by others")])
def test_a_key_file_others_can_write_or_read_is_refused(key_file, mode, fragment):
    signing.user_key()
    key_file.chmod(mode)
    with pytest.raises(signing.UnsafeKey, match=fragment) as info:
        signing.user_key()
    assert "\n" not in str(info.value) and str(key_file) in str(info.value)
    key_file.chmod(0o400)
    assert len(signing.user_key()) == 32


def test_a_key_that_is_a_link_belongs_to_another_user_or_sits_in_a_folder_others_write_is_refused(
        key_file, tmp_path):
    key = signing.user_key()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    key_file.rename(elsewhere / "key")
    key_file.symlink_to(elsewhere / "key")
    with pytest.raises(signing.UnsafeKey, match="not a regular file"):
        signing.user_key()
    key_file.unlink()
    (elsewhere / "key").rename(key_file)
    key_file.parent.chmod(0o770)
    with pytest.raises(signing.UnsafeKey, match="which others can write"):
        signing.user_key()
    key_file.parent.chmod(0o700)
    assert signing.user_key() == key
    if os.getuid() == 0:                 # only root can give a file away
        os.chown(key_file, 1234, -1)
        with pytest.raises(signing.UnsafeKey, match="belongs to uid 1234"):
            signing.user_key()
        os.chown(key_file, 0, -1)
        os.chown(key_file.parent, 1234, -1)
        with pytest.raises(signing.UnsafeKey, match="which belongs to uid 1234"):
            signing.user_key()


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


def test_a_key_file_that_is_not_a_key_is_refused(key_file):
    key_file.parent.mkdir(mode=0o700)
    key_file.write_text("not hex")
    key_file.chmod(0o600)
    with pytest.raises(signing.UnsafeKey, match="not a key"):
        signing.user_key()


def test_an_entry_another_key_wrote_is_not_trusted(tmp_path, key_file, monkeypatch):
    store, key = ResultStore(tmp_path / "store"), task_key(x=2)
    store.put(key, {"verdict": "confirmed"})
    monkeypatch.setenv(signing.KEY_ENV, str(tmp_path / "someone-else" / "key"))
    with pytest.warns(CacheDamaged, match="not authenticated"):
        assert store.get(key) is MISSING
    assert not store.path(key).exists() and store.damaged == [str(store.path(key))]


# -- planted and forged store entries -----------------------------------------------------------
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
    for head in (b"attnv-store-2 hmac-sha256 " + hashlib.sha256(payload).hexdigest().encode(),
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
    head, _, payload = genuine.partition(b"\n")
    result = decode(payload)
    result["entry"]["verdict"], result["entry"]["summary"] = "refuted", "forged"
    forged = encode(result)
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


def test_a_full_disk_fails_the_write_and_keeps_earlier_entries(tmp_path, monkeypatch):
    import errno

    import verification.store as store_module
    store = ResultStore(tmp_path)
    store.put(task_key(x=1), {"kept": 1})

    def full(path, data):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(store_module, "atomic_write_bytes", full)
    with pytest.raises(OSError, match="cannot write store entry .*No space left"):
        store.put(task_key(x=2), {"lost": 2})
    assert store.get(task_key(x=1)) == {"kept": 1} and store.get(task_key(x=2)) is MISSING


# -- the code cache -------------------------------------------------------------------------------
def test_a_planted_code_line_in_the_cache_is_reported_and_regenerated_never_run(tmp_path,
                                                                                monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path / "cache"))
    marker = tmp_path / MARKER_NAME
    text = "def f(x):\n    return x + 1\n"
    assert cached_text("codegen-numpy", "k1", lambda: text) == text
    path = tmp_path / "cache" / "v2" / "codegen-numpy" / "k1.py"
    head, _, body = path.read_text().partition("\n")
    planted = body + f"open({str(marker)!r}, 'w')\n"
    for stored in (f"{head}\n{planted}",                                    # the MAC kept
                   f"# attnv-digest: {hashlib.sha256(planted.encode()).hexdigest()}\n{planted}",
                   f"# attnv-hmac-sha256: {hashlib.sha256(planted.encode()).hexdigest()}\n"
                   f"{planted}"):                                          # a digest recomputed
        path.write_text(stored)
        with pytest.warns(CacheDamaged, match="unauthenticated"):
            got = cached_text("codegen-numpy", "k1", lambda: text)
        assert got == text
        exec(compile(got, "<test>", "exec"), {})
        assert not marker.exists()
        assert cached_text("codegen-numpy", "k1", lambda: "unused") == text   # regenerated entry


def test_evaluate_never_runs_a_planted_line_in_the_generated_code(tmp_path):
    """A fresh process (the user's next command) reads the generated code from the disk cache."""
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "ATTNV_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "verification", "evaluate", "marion2025"]
    first = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True, check=True)
    marker = tmp_path / MARKER_NAME
    files = sorted((tmp_path / "cache").rglob("*.py"))
    assert files
    for f in files:
        head, _, body = f.read_text().partition("\n")
        planted = f"open({str(marker)!r}, 'w')\n" + body
        f.write_text(f"# attnv-hmac-sha256: {hashlib.sha256(planted.encode()).hexdigest()}\n"
                     f"{planted}")
    again = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True, check=True)
    assert not marker.exists()
    assert again.stdout == first.stdout and "unauthenticated cache entry" in again.stderr


def test_the_cache_folder_is_checked_before_any_work(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(ValueError, match=r"\$ATTNV_CACHE_DIR .* is not a writable folder") as info:
        check_cache()
    assert "\n" not in str(info.value)
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path / "ok"))
    assert check_cache() == tmp_path / "ok"


def test_an_unwritable_cache_costs_only_the_regeneration(tmp_path, monkeypatch):
    import verification  # noqa: F401 - the suite's warnings filters
    import numerics.codegen.cache as cache
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path))

    def full(path, text):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(cache, "atomic_write_text", full)
    with pytest.warns(CacheDamaged, match="without being cached"):
        assert cached_text("k", "x", lambda: "y = 1\n") == "y = 1\n"


# -- the cluster listens on the loopback only ----------------------------------------------------
def _listening(pids) -> list[tuple[int, str]]:
    import psutil
    found = []
    for pid in pids:
        for c in psutil.Process(pid).net_connections(kind="inet"):
            if c.status == psutil.CONN_LISTEN:
                found.append((pid, c.laddr.ip))
    return found


def test_a_local_cluster_listens_on_the_loopback_only_and_serves_no_dashboard_unless_asked():
    import ipaddress

    import psutil
    from verification.engine import Engine
    me = psutil.Process()
    with Engine(workers=2) as engine:
        info = engine._client.scheduler_info()
        addresses = [info["address"], *info["workers"]]
        pids = [me.pid] + [c.pid for c in me.children(recursive=True)]
        sockets = _listening(pids)
        http = (info.get("services") or {}).get("dashboard")
        answers = _http_answers(http, "/health"), _http_answers(http, "/info/main/workers.html")
        worker_http = [w.get("services", {}).get("dashboard") for w in info["workers"].values()]
        worker_answers = [_http_answers(port, "/health") for port in worker_http]
        assert engine.dashboard_link is None
        strangers = _connect_as_a_stranger(info["address"])
    assert strangers == ["refused", "refused"], strangers
    assert worker_answers == [False, False]
    assert len(info["workers"]) == 2 and len({pid for pid, _ in sockets}) == 3   # + 2 workers
    assert all(a.startswith("tls://127.0.0.1:") for a in addresses), addresses
    assert all(ipaddress.ip_address(ip).is_loopback for _, ip in sockets), sockets
    assert answers == (False, False) and http != 8787       # no route, not dask's fixed port
    with Engine(workers=1, dashboard=True) as engine:
        link = engine.dashboard_link
        sockets = _listening([me.pid])
        health = _http_answers(int(link.split(":")[2].split("/")[0]), "/health")
    assert link.startswith("http://127.0.0.1:") and health
    assert all(ipaddress.ip_address(ip).is_loopback for _, ip in sockets), sockets


def _connect_as_a_stranger(address: str) -> list[str]:
    """Another user of the machine reaches the loopback: without the cluster's certificate (in
    plain TCP, or with a certificate of its own) it cannot connect, so it cannot send work."""
    from distributed import Client
    from distributed.security import Security
    out = []
    for addr, security in ((address.replace("tls://", "tcp://"), None),
                           (address, Security.temporary())):
        try:
            with Client(addr, timeout="3s", security=security) as c:
                c.submit(os.getpid).result()
            out.append("connected")
        except (OSError, TimeoutError, ValueError):
            out.append("refused")
    return out


def _http_answers(port, path) -> bool:
    """Whether an HTTP GET of ``path`` on the loopback ``port`` answers 200."""
    import urllib.error
    import urllib.request
    if not port:
        return False
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def test_tls_options_are_checked_before_connecting(tmp_path):
    from verification.engine import Engine
    pem = {name: tmp_path / f"{name}.pem" for name in ("ca_file", "cert", "key")}
    for p in pem.values():
        p.write_text("-----BEGIN CERTIFICATE-----\n")
    tls = {k: str(v) for k, v in pem.items()}
    with pytest.raises(ValueError, match="only with --scheduler"):
        Engine(workers=1, tls=tls)
    with pytest.raises(ValueError, match="plain address"):
        Engine(scheduler="tcp://127.0.0.1:8786", tls=tls)
    with pytest.raises(ValueError, match="--tls-key .*no such file"):
        Engine(scheduler="tls://127.0.0.1:8786", tls={**tls, "key": str(tmp_path / "none")})
    engine = Engine(scheduler="tls://127.0.0.1:8786", tls=tls)
    assert engine.security.require_encryption and engine.security.tls_client_key == tls["key"]


# -- a claim cannot end the run -------------------------------------------------------------------
def _exits(ctx):
    raise SystemExit(0)


def _interrupts(ctx):
    raise KeyboardInterrupt


@pytest.mark.parametrize("workers", [0, 1])
def test_system_exit_or_keyboard_interrupt_in_a_claim_is_its_error_and_the_run_goes_on(
        tmp_path, toys, workers):
    claim("toy2099:exits", "Toy", "Exits.", statistical=False)(_exits)
    claim("toy2099:interrupts", "Toy", "Interrupts.", statistical=False)(_interrupts)
    try:
        report = run([REGISTRY["toy2099:exits"], REGISTRY["toy2099:interrupts"], toys[0]],
                     show=False, figures=False, workers=workers, out=tmp_path, calibration=None)
    finally:
        del REGISTRY["toy2099:exits"], REGISTRY["toy2099:interrupts"]
    verdicts = {c["id"]: (c["verdict"], c["summary"]) for c in report["claims"]}
    assert report["complete"] and verdicts[toys[0].id][0] == "confirmed"
    assert verdicts["toy2099:exits"][0] == "error" and "SystemExit" in verdicts["toy2099:exits"][1]
    assert verdicts["toy2099:interrupts"][0] == "error"
    assert "KeyboardInterrupt" in verdicts["toy2099:interrupts"][1]
    assert json.loads((tmp_path / "report.json").read_text())["complete"]


# -- what else can be planted in a shared folder ---------------------------------------------------
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


def test_a_planted_non_entry_in_the_cache_is_regenerated(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "cache" / "v2" / "k" / "x.py"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with pytest.warns(CacheDamaged, match="unauthenticated"):
        assert cached_text("k", "x", lambda: "x = 1\n") == "x = 1\n"
    assert path.is_file()


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


def _exits_in_a_subtask(ctx):
    ctx.map(_exit_item, [1])
    return Outcome("confirmed", "not reached", {})


def _exit_item(ctx, item):
    raise SystemExit(item)


def _exit_now():
    raise SystemExit(3)


@pytest.mark.parametrize("workers", [0, 1])
def test_system_exit_in_a_subtask_or_a_mutation_is_that_claims_error(tmp_path, toys, workers):
    claim("toy2099:sub-exit", "Toy", "Exits in a subtask.", statistical=False)(_exits_in_a_subtask)
    claim("toy2099:mut-exit", "Toy", "Its mutation exits.", statistical=False,
          mutations={"exits": _exit_now})(_verdict_of)
    from verification.tasks import ClaimTask, claim_task
    try:
        report = run([REGISTRY["toy2099:sub-exit"], toys[0]], show=False, figures=False,
                     workers=workers, out=tmp_path, calibration=None)
        mutated = claim_task(ClaimTask.make(REGISTRY["toy2099:mut-exit"], "quick", 0, "cpu",
                                            mutation="exits", figures=False))
    finally:
        del REGISTRY["toy2099:sub-exit"], REGISTRY["toy2099:mut-exit"]
    verdicts = {c["id"]: c for c in report["claims"]}
    assert report["complete"] and verdicts[toys[0].id]["verdict"] == "confirmed"
    assert verdicts["toy2099:sub-exit"]["verdict"] == "error"
    assert "SystemExit" in verdicts["toy2099:sub-exit"]["summary"]
    assert mutated["entry"]["verdict"] == "error" and "SystemExit" in mutated["entry"]["summary"]


def _swallows_ctrl_c(ctx):
    """A claim whose code turns the person's Ctrl-C into another exception."""
    import signal
    try:
        os.kill(os.getpid(), signal.SIGINT)
    except KeyboardInterrupt as exc:
        raise RuntimeError("a library wrapped it") from exc
    return Outcome("confirmed", "not interrupted", {})


def test_a_ctrl_c_that_a_claim_swallows_still_stops_the_run(tmp_path, toys):
    claim("toy2099:swallows", "Toy", "Swallows Ctrl-C.", statistical=False)(_swallows_ctrl_c)
    try:
        with pytest.raises(KeyboardInterrupt):
            run([REGISTRY["toy2099:swallows"], toys[0]], show=False, figures=False, workers=0,
                out=tmp_path, calibration=None)
    finally:
        del REGISTRY["toy2099:swallows"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["complete"] is False and report["interrupted"] == "KeyboardInterrupt"
    assert toys[0].id not in [c["id"] for c in report["claims"]]
