"""The result store: every task's result on disk, keyed by a content hash of what produced it.

A key hashes the task's code (``verification.codehash``: the claim's module and every suite
module it imports), its parameters, seed, profile, device and the library versions, so a result
is reused exactly when recomputing it would run the same code on the same input. Entries are
written atomically and carry the SHA-256 of their payload; an entry whose digest does not match
(truncated, overwritten) is reported, removed and recomputed, never trusted.

Entries are pickles: the store is trusted like the code cache (it lives in the user's own
output folder); the digest protects against damage, not against an adversary."""

from __future__ import annotations

from collections.abc import Mapping
import contextlib
import hashlib
import json
import os
from pathlib import Path
import pickle
from typing import Any
import warnings

from numerics.codegen.cache import CacheDamaged, atomic_write_bytes

__all__ = ["ResultStore", "task_key", "check_folder", "STORE_ENV", "MISSING"]

STORE_ENV = "ATTNV_STORE"
"""Environment variable naming the store folder when ``--store`` is not given."""

_MAGIC = b"attnv-store-1 "
MISSING = object()
"""What ``ResultStore.get`` returns on a miss (a stored result may itself be None)."""


STORE_FORMAT = 1
"""Version of the entries' layout: bump it when what is stored for a task changes shape (the
store's module is not part of the code hash, ``verification.codehash.ORCHESTRATION``)."""


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
        probe = path / f".write-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"{option} {path} is not a writable folder ({exc.strerror or exc})") from None
    return path


class ResultStore:
    """Results on disk under ``root``: ``get(key)``, ``put(key, value)``.

    force: never read (every task is recomputed) but still write, so the next run reuses the
    fresh results. ``damaged`` lists the entries found damaged by this process."""

    def __init__(self, root: str | Path, force: bool = False):
        self.root = Path(root)
        self.force = bool(force)
        self.damaged: list[str] = []

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r}, force={self.force})"

    def __reduce__(self):   # travels to workers as its location (not its damaged list)
        return (ResultStore, (str(self.root), self.force))

    def path(self, key: str) -> Path:
        if not (len(key) == 64 and all(c in "0123456789abcdef" for c in key)):
            raise ValueError(f"key={key!r}; allowed: a SHA-256 hex digest (task_key)")
        return self.root / key[:2] / f"{key}.pkl"

    def get(self, key: str) -> Any:
        """The stored result, or ``MISSING`` (absent, forced, or damaged: then removed)."""
        path = self.path(key)
        if self.force or not path.exists():
            return MISSING
        try:
            data = path.read_bytes()
            head, sep, payload = data.partition(b"\n")
            if not (sep and head.startswith(_MAGIC)
                    and hashlib.sha256(payload).hexdigest().encode() == head[len(_MAGIC):]):
                raise ValueError("digest mismatch")
            return pickle.loads(payload)
        except Exception as exc:  # noqa: BLE001 - any damage means: recompute
            self.damaged.append(str(path))
            warnings.warn(f"damaged store entry {path} ({exc}): recomputing it", CacheDamaged,
                          stacklevel=2)
            with contextlib.suppress(OSError):
                path.unlink()
            return MISSING

    def put(self, key: str, value: Any) -> None:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        digest = hashlib.sha256(payload).hexdigest().encode()
        atomic_write_bytes(self.path(key), _MAGIC + digest + b"\n" + payload)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not MISSING

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("??/*.pkl"))


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
    return ResultStore(check_folder(root, option), force=force)


def describe(versions: Mapping[str, Any]) -> dict:
    """The library versions that enter a key (the platform string does not: it names the
    machine, not the numbers)."""
    return {k: v for k, v in versions.items() if k != "platform"}
