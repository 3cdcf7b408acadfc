"""On-disk cache of generated source, keyed by a content hash, written atomically."""

from __future__ import annotations

from collections.abc import Callable
import contextlib
import hashlib
import os
from pathlib import Path
import tempfile

__all__ = ["cache_dir", "content_hash", "atomic_write_text", "atomic_write_bytes", "cached_text"]


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
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def cached_text(kind: str, key: str, make: Callable[[], str]) -> str:
    """The text stored under (kind, key), computing it with ``make()`` on a miss."""
    path = cache_dir() / kind / f"{key}.py"
    if path.exists():
        try:
            return path.read_text()
        except OSError:
            pass
    text = make()
    atomic_write_text(path, text)
    return text
