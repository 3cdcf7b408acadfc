"""On-disk cache of generated source, keyed by a content hash, written atomically
(``numerics.storage``, the suite's one way of writing and reading files back) and authenticated
(``signing``) before it is run."""

from __future__ import annotations

from collections.abc import Callable
import hashlib
import os
from pathlib import Path
import warnings

from ..storage import (atomic_write_bytes, atomic_write_text, owned_folder, probe_writable,
                       read_entry, remove_entry)
from .signing import sign, user_key, verify

__all__ = ["cache_dir", "check_cache", "content_hash", "atomic_write_text", "atomic_write_bytes",
           "cached_text", "CacheDamaged", "read_entry", "remove_entry", "probe_writable"]


def cache_dir() -> Path:
    """$ATTNV_CACHE_DIR, else ~/.cache/attention-verification."""
    root = os.environ.get("ATTNV_CACHE_DIR") or Path.home() / ".cache" / "attention-verification"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def content_hash(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


_HEADER = "# attnv-hmac-sha256: "
_LAYOUT = "v2"
"""Entries of this layout live under ``cache_dir()/v2``; older ones (SHA-256 digests, which
anyone can recompute) are never read."""


def _signed(kind: str, key: str, text: str) -> str:
    return f"{_HEADER}{sign('codegen', f'{kind}/{key}', text.encode())}\n{text}"


def _authentic_body(kind: str, key: str, stored: bytes) -> str | None:
    """The body of a stored entry when its HMAC under the user's key matches, else None."""
    head, sep, body = stored.partition(b"\n")
    prefix = _HEADER.encode()
    if not (sep and head.startswith(prefix)):
        return None
    if not verify("codegen", f"{kind}/{key}", body, head[len(prefix):]):
        return None
    try:
        return body.decode()
    except UnicodeDecodeError:
        return None


MAX_ENTRY_BYTES = 64 << 20
"""Larger cache entries are not read (generated modules are kilobytes to a few megabytes)."""


def check_cache() -> Path:
    """The cache folder, checked before any work starts: it exists (created if needed) and is
    writable, and the user's key can be read (ValueError with a one-line reason otherwise)."""
    root = os.environ.get("ATTNV_CACHE_DIR")
    option = "$ATTNV_CACHE_DIR" if root else "the code cache"
    try:
        path = cache_dir()
        probe_writable(path)
    except OSError as exc:
        where = root or Path.home() / ".cache" / "attention-verification"
        raise ValueError(f"{option} {where} is not a writable folder ({exc.strerror or exc}); "
                         "allowed: a folder you can write (set ATTNV_CACHE_DIR)") from None
    user_key()
    return path


def cached_text(kind: str, key: str, make: Callable[[], str]) -> str:
    """The text stored under (kind, key), computing it with ``make()`` on a miss.

    Each entry carries an HMAC of its body under the user's key (``signing``), checked before
    the text is returned: an entry that does not authenticate (planted, edited, truncated by a
    full disk) is reported, removed and regenerated, never executed. A cache that cannot be
    written (disk full) only costs the regeneration next time."""
    path = cache_dir() / _LAYOUT / kind / f"{key}.py"
    if path.exists() or path.is_symlink():
        try:
            stored = read_entry(path, MAX_ENTRY_BYTES)
        except (OSError, ValueError):
            stored = b""
        body = _authentic_body(kind, key, stored)
        if body is not None:
            return body
        warnings.warn(f"unauthenticated cache entry {path} (damaged, or not written by this "
                      "user): regenerating it, never running it", CacheDamaged, stacklevel=2)
        remove_entry(path)
    text = make()
    try:
        owned_folder(path.parent)
        atomic_write_text(path, _signed(kind, key, text))
    except OSError as exc:
        warnings.warn(f"cannot write cache entry {path} ({exc.strerror or exc}): the code is "
                      "used without being cached", CacheDamaged, stacklevel=2)
    return text


class CacheDamaged(UserWarning):
    """A cache or store entry failed its check (damaged or unauthenticated) and was recomputed."""
