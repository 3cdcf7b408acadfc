"""The result store as a cache of simulations: what it holds (by stage and claim), pruning what
no current key can reach, and moving a store's entries between machines (export to one tar
file, import from one).

Every operation reads an entry's signed description (``ResultStore.meta``) and trusts nothing
else: an entry that your key does not authenticate (damaged, planted, of the older format) is
counted as unreadable and removed by ``prune``; an imported entry is written only when your key
authenticates it, so sharing a store between machines needs the same store key on both
(``$ATTNV_STORE_KEY_FILE``, README "Runs at scale"). Entries are data: exporting and importing
them never runs code."""

from __future__ import annotations

from collections import defaultdict
import contextlib
import io
import json
from pathlib import Path
import re
import tarfile
from typing import Any
import warnings

from .store import MAX_ENTRY_BYTES, ResultStore, parse_entry

__all__ = ["usage", "prune", "export_store", "import_store", "reachable"]

_NAME = re.compile(r"^([0-9a-f]{2})/([0-9a-f]{64})\.entry$")
MANIFEST = "attnv-store-export.json"


@contextlib.contextmanager
def _quiet():
    """An unauthenticated entry is counted and reported by the caller, not warned about one by
    one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def usage(store: ResultStore) -> dict[str, Any]:
    """What the store holds: {"entries", "bytes", "unreadable", "rows": [{"stage", "claim",
    "what", "entries", "bytes"}]}, a row per (stage, claim, simulation function), largest first.
    A simulation is listed under the claim that first asked for it (others share it)."""
    rows: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    total = [0, 0]
    unreadable = 0
    with _quiet():
        for _key, meta, size in store.entries():
            total[0] += 1
            total[1] += size
            if meta is None:
                unreadable += 1
                continue
            what = meta.get("fn", "") if meta.get("stage") == "simulation" else ""
            row = rows[(str(meta.get("stage", "?")), str(meta.get("claim") or "—"), what)]
            row[0] += 1
            row[1] += size
    out = [{"stage": s, "claim": c, "what": w, "entries": n, "bytes": b}
           for (s, c, w), (n, b) in rows.items()]
    out.sort(key=lambda r: -r["bytes"])
    return {"entries": total[0], "bytes": total[1], "unreadable": unreadable, "rows": out}


def reachable(meta: dict | None) -> bool | None:
    """Whether a current key can reach the entry described by ``meta``: its library versions
    are this machine's and its code hashes are the code's now (a simulation's module, a claim's
    two hashes). None: it cannot be told (a claim or module not found here, a user's file:
    kept)."""
    from .codehash import code_hash
    from .declare import REGISTRY
    from .records import claim_code
    from .tasks import key_versions

    if meta is None:
        return False
    if meta.get("versions") != key_versions():
        return False
    if meta.get("stage") == "simulation":
        try:
            return code_hash(str(meta.get("module"))) == meta.get("code")
        except (ValueError, SyntaxError):
            return None
    if meta.get("stage") == "judgement":
        claim = REGISTRY.get(str(meta.get("claim")))
        if claim is None:
            return None
        now = claim_code(claim)
        return None if now is None else now == meta.get("code")
    return False


def prune(store: ResultStore, dry_run: bool = False) -> dict[str, Any]:
    """Remove every entry that no current key reaches (``reachable`` is False: unauthenticated,
    of another format, other library versions or code that has changed since); entries whose
    reach cannot be told are kept. {"removed", "bytes", "kept", "unknown"}; ``dry_run``: count,
    remove nothing."""
    from .catalogue import load_all
    load_all()                                    # the registry, for the claims' hashes
    removed = freed = kept = unknown = 0
    with _quiet():
        for key in store:
            path = store.path(key)
            try:
                size = path.stat().st_size
            except OSError:
                continue
            verdict = reachable(store.meta(key, discard=False) if path.exists() else None)
            if verdict is False:
                removed += 1
                freed += size
                if not dry_run:
                    store.remove(key)
            else:
                kept += 1
                unknown += verdict is None
    return {"removed": removed, "bytes": freed, "kept": kept, "unknown": unknown,
            "dry_run": bool(dry_run)}


def export_store(store: ResultStore, dest: str | Path, claims: list[str] | None = None,
                 stages: tuple[str, ...] = ("simulation", "judgement")) -> dict[str, Any]:
    """Every authenticated entry of ``store`` (of the ``stages``; of the ``claims`` only, when
    given: the judgements of those claims and the simulations they asked for first) written to
    the tar file ``dest`` (atomically), with a manifest. {"entries", "bytes", "path"}."""
    from numerics.codegen.cache import atomic_write_bytes

    wanted = set(claims) if claims else None
    buf = io.BytesIO()
    count = size = 0
    listing = []
    with _quiet(), tarfile.open(fileobj=buf, mode="w") as tar:
        for key in store:
            meta = store.meta(key)
            if meta is None or meta.get("stage") not in stages:
                continue
            if wanted is not None and meta.get("claim") not in wanted:
                continue
            data = store.path(key).read_bytes()
            info = tarfile.TarInfo(f"{key[:2]}/{key}.entry")
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
            listing.append({"key": key, "stage": meta.get("stage"), "claim": meta.get("claim")})
            count += 1
            size += len(data)
        manifest = json.dumps({"format": 1, "entries": listing}).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size, info.mode = len(manifest), 0o600
        tar.addfile(info, io.BytesIO(manifest))
    atomic_write_bytes(Path(dest), buf.getvalue())
    return {"entries": count, "bytes": size, "path": str(dest)}


def import_store(src: str | Path, store: ResultStore) -> dict[str, Any]:
    """The entries of the tar file ``src`` (as ``export_store`` writes it) into ``store``: a
    member is taken only when it is a plain file named like an entry, no larger than an entry
    may be, and authenticated by your store key (else it is counted as refused, never
    written). An entry already there is left. {"imported", "present", "refused"}."""
    counts = {"imported": 0, "present": 0, "refused": 0}
    try:
        with tarfile.open(src, mode="r:") as tar, _quiet():
            for info in tar:
                if info.name != MANIFEST:
                    counts[_import_member(tar, info, store)] += 1
    except tarfile.TarError as exc:
        raise ValueError(f"store import {src}: not a store export ({exc})") from None
    except OSError as exc:
        raise ValueError(f"store import {src}: cannot read it ({exc.strerror or exc})") from None
    return counts


def _import_member(tar: tarfile.TarFile, info: tarfile.TarInfo, store: ResultStore) -> str:
    """"imported", "present" or "refused" (see ``import_store``)."""
    from numerics.codegen.cache import atomic_write_bytes

    match = _NAME.match(info.name)
    if not (match and info.isreg() and match[1] == match[2][:2]
            and 0 < info.size <= MAX_ENTRY_BYTES):
        return "refused"
    key = match[2]
    if store.path(key).exists() and store.meta(key) is not None:
        return "present"
    data = tar.extractfile(info).read(MAX_ENTRY_BYTES + 1)
    try:
        parse_entry(key, data)                   # authenticated by your key, and data
    except (ValueError, TypeError, RecursionError, MemoryError):
        return "refused"
    path = store.path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, data)
    return "imported"
