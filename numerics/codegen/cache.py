"""On-disk cache of generated source, keyed by a content hash, written atomically."""

from __future__ import annotations

from collections.abc import Callable
import contextlib
import hashlib
import os
from pathlib import Path
import tempfile
import warnings

__all__ = ["cache_dir", "content_hash", "atomic_write_text", "atomic_write_bytes", "cached_text",
           "CacheDamaged"]


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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, then rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())     # mkstemp's 0600 would hide reports from a group
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


_HEADER = "# attnv-digest: "


def _with_digest(text: str) -> str:
    return f"{_HEADER}{hashlib.sha256(text.encode()).hexdigest()}\n{text}"


def _checked_body(stored: str) -> str | None:
    """The body of a stored entry when its digest line matches, else None (damaged)."""
    head, sep, body = stored.partition("\n")
    if not (sep and head.startswith(_HEADER)):
        return None
    if hashlib.sha256(body.encode()).hexdigest() != head[len(_HEADER):]:
        return None
    return body


def cached_text(kind: str, key: str, make: Callable[[], str]) -> str:
    """The text stored under (kind, key), computing it with ``make()`` on a miss.

    Each entry carries the SHA-256 of its body on its first line and is checked when read: a
    truncated or overwritten entry (a full disk, a bad copy) is reported and regenerated, never
    executed."""
    path = cache_dir() / kind / f"{key}.py"
    if path.exists():
        try:
            stored = path.read_bytes().decode()
        except (OSError, UnicodeDecodeError):
            stored = _HEADER                 # unreadable: damaged
        body = _checked_body(stored)
        if body is not None:
            return body
        if stored.startswith(_HEADER[:8]):   # entries written before digests were kept are
            warnings.warn(f"damaged cache entry {path} (digest mismatch): regenerating it",
                          CacheDamaged, stacklevel=2)   # regenerated without a word
    text = make()
    atomic_write_text(path, _with_digest(text))
    return text


class CacheDamaged(UserWarning):
    """A cache or store entry failed its digest check and was recomputed."""
