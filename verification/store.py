"""The result store: every task's result on disk, keyed by a content hash of what produced it.

A key hashes the task's code (``verification.codehash``: the claim's module and every suite
module it imports), its parameters, seed, profile, device and the library versions, so a result
is reused exactly when recomputing it would run the same code on the same input.

Entries hold data only: a JSON tree (numbers, strings, lists, tuples, dicts, sets) with its
arrays and bytes beside it, in one NPZ read with ``allow_pickle=False`` (``encode``/``decode``),
so reading an entry can never run code. Each entry carries an HMAC-SHA256 of its key and bytes
under the user's key (``numerics.codegen.signing``): an entry that someone else wrote or edited
(a forged verdict with its digest recomputed), or that a full disk truncated, or whose content
has the wrong shape, is reported, removed and recomputed, never trusted. Entries are written
atomically.

Two stages of a claim's work are stored apart: its **simulations** (``Context.map``: keyed by
the simulation's own code, never the judging code) and its **judgement** (the verdict entry:
keyed by the claim's whole code). Each entry's header carries a small description, signed with
it (``meta``: the stage, the claim or simulation, the code hashes and versions it was keyed on),
which ``entries`` reads for the ``store`` commands (``verification.storeops``: size by claim and
stage, prune what no current key reaches, export and import)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
import contextlib
import hashlib
import io
import json
import math
import os
from pathlib import Path
import stat
from typing import Any
import warnings
import zipfile

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: runs on one folder are not locked
    fcntl = None

import numpy as np

from numerics.codegen.cache import CacheDamaged
from numerics.storage import (ForeignFolder, atomic_write_bytes, owned_folder, probe_writable,
                              read_entry, remove_entry)
from numerics.codegen.signing import UnsafeKey, sign, verify

__all__ = ["ResultStore", "task_key", "check_folder", "lock_folder", "LOCK_FILE", "STORE_ENV",
           "MISSING", "encode", "decode", "Unstorable", "StoreNotStored", "parse_entry",
           "MAX_ENTRY_BYTES"]

STORE_ENV = "ATTNV_STORE"
"""Environment variable naming the store folder when ``--store`` is not given."""

_MAGIC = b"attnv-store-3 hmac-sha256 "
_SUFFIX = ".entry"
LOCK_FILE = ".lock"
"""``OUT/.lock``: flock'ed by the run writing in OUT (it holds its pid; ``lock_folder``)."""
MISSING = object()
"""What ``ResultStore.get`` returns on a miss (a stored result may itself be None)."""


STORE_FORMAT = 3
"""Version of the entries' layout: bump it when what is stored for a task changes shape (the
store's module is not part of the code hash, ``verification.layers``; a claim run's key counts
``verification.tasks``, which builds the entry)."""


def task_key(**parts: Any) -> str:
    """SHA-256 of the canonical JSON of ``parts`` and ``STORE_FORMAT`` (sorted keys; tuples as
    lists)."""
    parts = {**parts, "store_format": STORE_FORMAT}
    text = json.dumps(parts, sort_keys=True, default=_canonical, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(x: Any) -> Any:
    if isinstance(x, (set, frozenset)):
        return sorted(x, key=repr)
    if hasattr(x, "item"):          # numpy scalars
        return x.item()
    raise TypeError(f"cannot key a task on {type(x).__name__} {x!r}: use numbers, strings, "
                    "lists or dicts")


def check_folder(path: str | Path, option: str) -> Path:
    """``path`` as a folder that exists (created if needed) and is writable; ValueError naming
    ``option`` otherwise. Called before any work starts."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path} is an existing file; allowed: a folder (new or existing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe_writable(path)
    except OSError as exc:
        raise ValueError(f"{option} {path} is not a writable folder ({exc.strerror or exc})") from None
    return path


class Unstorable(TypeError):
    """A value the store cannot hold as data (an object of a class of its own, a callable,
    an object array): the task's result is used but not stored."""


class StoreNotStored(UserWarning):
    """A result was not stored (it is not data the store can hold); it is recomputed next time."""


MAX_ENTRY_BYTES = 1 << 30
"""Larger entries are not read (a claim's result with its figures is a few megabytes)."""

_TAG = "~"          # a JSON object with this key is a tagged value, not a dict


def encode(value: Any) -> bytes:
    """``value`` as NPZ bytes: a JSON tree plus its arrays and bytes (``Unstorable`` for
    anything else). ``decode`` gives an equal value back: tuples stay tuples, numpy scalars
    keep their dtype, floats keep nan and ±inf."""
    arrays: list[np.ndarray] = []
    tree = _encode(value, arrays, depth=0)
    buf = io.BytesIO()
    members = {"tree": np.frombuffer(json.dumps(tree, allow_nan=False).encode(), np.uint8)}
    members.update({f"a{i}": a for i, a in enumerate(arrays)})
    np.savez(buf, allow_pickle=False, **members)
    return buf.getvalue()


def _array(x: np.ndarray, arrays: list) -> int:
    if x.dtype.hasobject or x.dtype.kind not in "biufcSUMm":
        raise Unstorable(f"an array of dtype {x.dtype} is not data the store holds; allowed: "
                         "numeric, boolean, string or datetime arrays")
    arrays.append(x)
    return len(arrays) - 1


def _float(x: float) -> Any:
    return x if math.isfinite(x) else {_TAG: "float", "v": repr(float(x))}


def _encode(x: Any, arrays: list, depth: int) -> Any:   # noqa: C901 - one case per type
    if depth > 200:
        raise Unstorable("nested deeper than 200 levels")
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int) and type(x) in (int, bool):
        return x
    if type(x) is float:
        return _float(x)
    if type(x) is complex:
        return {_TAG: "complex", "v": [_float(x.real), _float(x.imag)]}
    if isinstance(x, np.ndarray) and type(x) is np.ndarray:
        return {_TAG: "ndarray", "i": _array(x, arrays)}
    if isinstance(x, np.generic):
        return {_TAG: "scalar", "i": _array(np.asarray(x), arrays)}
    if type(x) is bytes:
        return {_TAG: "bytes", "i": _array(np.frombuffer(x, np.uint8), arrays)}
    if type(x) in (list, tuple, set, frozenset):
        items = sorted(x, key=repr) if isinstance(x, (set, frozenset)) else x
        v = [_encode(e, arrays, depth + 1) for e in items]
        return v if type(x) is list else {_TAG: type(x).__name__, "v": v}
    if type(x) is dict:
        if all(type(k) is str for k in x) and _TAG not in x:
            return {k: _encode(v, arrays, depth + 1) for k, v in x.items()}
        return {_TAG: "dict", "v": [[_encode(k, arrays, depth + 1), _encode(v, arrays, depth + 1)]
                                    for k, v in x.items()]}
    raise Unstorable(f"a {type(x).__module__}.{type(x).__qualname__} is not data the store "
                     "holds; allowed: None, bool, int, float, complex, str, bytes, list, tuple, "
                     "set, dict, numpy arrays and scalars")


def decode(data: bytes) -> Any:
    """The value ``encode`` wrote (ValueError for anything else: damaged)."""
    try:
        _check_members(data)
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            members = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"not an entry ({exc})") from None
    tree = members.pop("tree", None)
    if tree is None or tree.dtype != np.uint8 or tree.ndim != 1:
        raise ValueError("no tree in the entry")
    arrays = {int(k[1:]): v for k, v in members.items() if k[:1] == "a" and k[1:].isdigit()}
    if len(arrays) != len(members):
        raise ValueError(f"unexpected members {sorted(members)}")
    return _decode(json.loads(tree.tobytes().decode()), arrays)


def _check_members(data: bytes) -> None:
    """Every member stored uncompressed (as ``encode`` writes them: no zip bomb) and no bigger
    than its header says (a header claiming 2**40 elements would be allocated before reading)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                raise ValueError(f"member {info.filename} is compressed")
            with zf.open(info) as f:
                read = {(1, 0): np.lib.format.read_array_header_1_0,
                        (2, 0): np.lib.format.read_array_header_2_0}.get(np.lib.format.read_magic(f))
                if read is None:
                    raise ValueError(f"member {info.filename} has an unknown format version")
                shape, _, dtype = read(f)
                if dtype.hasobject or math.prod(shape) * dtype.itemsize > info.file_size:
                    raise ValueError(f"member {info.filename} is not the array its header says")


def _member(arrays: dict, i: Any) -> np.ndarray:
    if type(i) is not int or i not in arrays:
        raise ValueError(f"no array {i!r} in the entry")
    return arrays[i]


def _decode(x: Any, arrays: dict) -> Any:   # noqa: C901 - one case per tag
    if isinstance(x, list):
        return [_decode(e, arrays) for e in x]
    if not isinstance(x, dict):
        return x
    if _TAG not in x:
        return {k: _decode(v, arrays) for k, v in x.items()}
    tag, v = x[_TAG], x.get("v")
    if tag == "float" and v in ("nan", "inf", "-inf"):
        return float(v)
    if tag == "complex" and isinstance(v, list) and len(v) == 2:
        return complex(*(_decode(e, arrays) for e in v))
    if tag == "ndarray":
        return _member(arrays, x.get("i"))
    if tag == "scalar" and _member(arrays, x.get("i")).ndim == 0:
        return arrays[x["i"]][()]
    if tag == "bytes" and _member(arrays, x.get("i")).dtype == np.uint8:
        return arrays[x["i"]].tobytes()
    if tag in ("tuple", "set", "frozenset") and isinstance(v, list):
        items = [_decode(e, arrays) for e in v]
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and isinstance(v, list) and all(isinstance(e, list) and len(e) == 2 for e in v):
        return {_decode(k, arrays): _decode(e, arrays) for k, e in v}
    raise ValueError(f"unknown value {x!r:.80}")


def parse_entry(key: str, data: bytes, decode_value: bool = True) -> tuple[dict, Any]:
    """(description, value or None) of an entry's bytes stored under ``key``; ValueError when
    your key does not authenticate them or they are not an entry."""
    head, sep, body = data.partition(b"\n")
    if not (sep and head.startswith(_MAGIC) and verify("store", key, body, head[len(_MAGIC):])):
        raise ValueError("not authenticated by your key: damaged, or written by someone else")
    line, sep, payload = body.partition(b"\n")
    meta = json.loads(line) if sep else None
    if not isinstance(meta, dict):
        raise ValueError("no description in the entry")
    return meta, (decode(payload) if decode_value else None)


class ResultStore:
    """Results on disk under ``root``: ``get(key)``, ``put(key, value)``.

    force: never read (every task is recomputed) but still write, so the next run reuses the
    fresh results. ``damaged`` lists the entries found damaged or unauthenticated by this
    process (reported, removed, recomputed)."""

    def __init__(self, root: str | Path, force: bool = False, read_only: bool = False):
        self.root = Path(root)
        self.force = bool(force)
        self.read_only = bool(read_only)
        self.damaged: list[str] = []
        self.not_written: str | None = None
        """Why the last write failed (None: every write so far succeeded)."""

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r}, force={self.force})"

    def __reduce__(self):   # travels to workers as its location (not its damaged list)
        return (ResultStore, (str(self.root), self.force, self.read_only))

    def path(self, key: str) -> Path:
        if not (len(key) == 64 and all(c in "0123456789abcdef" for c in key)):
            raise ValueError(f"key={key!r}; allowed: a SHA-256 hex digest (task_key)")
        return self.root / key[:2] / f"{key}{_SUFFIX}"

    def get(self, key: str) -> Any:
        """The stored result, or ``MISSING`` (absent, forced, or damaged: then removed)."""
        if self.force or not self.path(key).exists():
            return MISSING
        got = self._read(key, decode_value=True)
        return MISSING if got is None else got[1]

    def meta(self, key: str, discard: bool = True) -> dict | None:
        """The signed description of the entry under ``key`` (None: absent or damaged, then
        removed unless ``discard`` is False); read whatever ``force`` says."""
        if not self.path(key).exists():
            return None
        got = self._read(key, decode_value=False, discard=discard)
        return None if got is None else got[0]

    def _read(self, key: str, decode_value: bool, discard: bool = True) -> tuple[dict, Any] | None:
        path = self.path(key)
        try:
            return parse_entry(key, read_entry(path, MAX_ENTRY_BYTES), decode_value)
        except UnsafeKey:       # the key is at fault, not the entry: keep it, say why
            raise
        except (OSError, ValueError, TypeError, MemoryError, RecursionError) as exc:
            if discard:
                self.discard(key, str(exc))
            return None

    def discard(self, key: str, reason: str) -> None:
        """Report the entry under ``key`` as damaged and remove it (it is recomputed)."""
        path = self.path(key)
        self.damaged.append(str(path))
        warnings.warn(f"damaged store entry {path} ({reason}): recomputing it", CacheDamaged,
                      stacklevel=3)
        remove_entry(path)

    def put(self, key: str, value: Any, meta: Mapping[str, Any] | None = None) -> bool:
        """Store ``value`` with its description ``meta`` (JSON data: the stage, what produced
        it); False (with a ``StoreNotStored`` warning) when it is not data the store holds, or
        when the store cannot be written (disk full, read-only, a shard folder someone else
        made): the result is used and recomputed next time, the run goes on, and every
        earlier entry stays as it was. ``not_written`` says why the store took nothing."""
        try:
            line = json.dumps(dict(meta or {}), sort_keys=True, separators=(",", ":"),
                              allow_nan=False, ensure_ascii=True).encode()
            payload = line + b"\n" + encode(value)
        except (Unstorable, TypeError, ValueError) as exc:
            warnings.warn(f"result not stored ({exc}); it is recomputed next time",
                          StoreNotStored, stacklevel=2)
            return False
        if self.read_only:
            return False
        mac = sign("store", key, payload).encode()
        path = self.path(key)
        try:
            owned_folder(path.parent)
            if path.is_symlink() or (path.exists() and not path.is_file()):
                remove_entry(path)           # something planted where the entry goes
            atomic_write_bytes(path, _MAGIC + mac + b"\n" + payload)
        except OSError as exc:               # ForeignFolder, ENOSPC, EACCES, EROFS, a blocked name
            reason = str(exc) if isinstance(exc, ForeignFolder) else (
                f"cannot write store entry {path}: {exc.strerror or exc}")
            if self.not_written is None:     # once per store: a full disk fails every write
                warnings.warn(f"result not stored ({reason}); results are used and recomputed "
                              "next time", StoreNotStored, stacklevel=2)
            self.not_written = reason
            return False
        return True

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not MISSING

    def keys(self) -> list[str]:
        return sorted(p.name[: -len(_SUFFIX)] for p in self.root.glob(f"??/*{_SUFFIX}"))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def entries(self) -> Iterator[tuple[str, dict | None, int]]:
        """(key, signed description or None when your key does not authenticate it (left in
        place: ``prune`` removes it), size in bytes) of every entry."""
        for key in self:
            try:
                size = self.path(key).stat().st_size
            except OSError:
                continue
            yield key, self.meta(key, discard=False), size

    def remove(self, key: str) -> None:
        """Remove the entry under ``key`` (absent: nothing)."""
        remove_entry(self.path(key))


@contextlib.contextmanager
def lock_folder(out: Path | None, option: str) -> Iterator[None]:
    """``out`` held by this run (``option`` names it in errors): an exclusive flock on
    ``out/.lock`` (holding this process's pid), released when the run ends, or by the kernel
    when its process dies (a kill -9 leaves no stale lock). Another run holding it: ValueError,
    before anything in ``out`` is touched. A file system without flock: not locked."""
    if out is None or fcntl is None:
        yield
        return
    path = out / LOCK_FILE
    try:       # never through a link planted there (it would truncate the file it points to);
        # readable by this user only: whoever can open it can flock it and block every run
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        raise ValueError(f"{option} {out}: cannot open its lock {path} ({exc.strerror or exc}); "
                         "allowed: a folder whose .lock is a plain file of your own (or none)") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            raise ValueError(f"{option} {out}: its lock {path} is not a plain file of your own; "
                             "allowed: a folder whose .lock is a plain file of your own (or none)")
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, 0o600)            # an older run's lock, readable by others
        if _lock(fd):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        else:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise ValueError(f"{option} {out} is in use by another run (pid {holder}); allowed: a "
                             "folder no other run is writing")
        yield
    finally:
        os.close(fd)            # releases the lock (the fd is this run's own, not inherited)


def _lock(fd: int) -> bool:
    """True when the lock was taken (or the file system has no locks), False when it is held."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:             # pragma: no cover - ENOLCK/EOPNOTSUPP: a file system without flock
        return True
    return True


def open_store(store: str | Path | ResultStore | None, out: str | Path | None,
               force: bool = False) -> ResultStore | None:
    """The store a run uses: ``store`` (a folder or a store), else $ATTNV_STORE, else
    ``<out>/store``; None when none of them is given. The folder is validated here."""
    if isinstance(store, ResultStore):
        return store
    root = store or os.environ.get(STORE_ENV) or (Path(out) / "store" if out is not None else None)
    if root is None:
        return None
    option = "--store" if store else (f"${STORE_ENV}" if os.environ.get(STORE_ENV) else "--out")
    path = Path(root)
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK) and os.access(path, os.R_OK | os.X_OK):
        warnings.warn(f"{option} {path} is read-only: its results are read and reused, nothing "
                      "is stored", StoreNotStored, stacklevel=2)
        return ResultStore(path, force=force, read_only=True)
    return ResultStore(check_folder(root, option), force=force)


def describe(versions: Mapping[str, Any]) -> dict:
    """The library versions that enter a key (the platform string does not: it names the
    machine, not the numbers)."""
    return {k: v for k, v in versions.items() if k != "platform"}
