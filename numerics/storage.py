"""Files the suite writes and reads back, for every writer alike (the code cache, the result
store, a run's reports, a map's folder): atomic writes that never follow a link, folders checked
before anything is written into them, entries read without following a link or trusting a size.

- ``atomic_write_bytes``: a fresh temporary in the same folder (``mkstemp``: O_CREAT|O_EXCL, a
  random name, so nothing planted there is opened), then a rename over the target (a link
  planted at the target is replaced, never written through).
- ``owned_folder``: a folder to write into: made if absent; an existing one must be a real
  folder (not a link) of this user's, or root's with the sticky bit (``/tmp``): anything else is
  a ``ForeignFolder`` naming it, before any write.
- ``read_entry``: the bytes of a regular file, at most a limit, opened with O_NOFOLLOW.

Not part of any code hash (``verification.layers``): it keeps what the generators produce and
what the tasks compute; it computes nothing."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
import stat
import tempfile

__all__ = ["atomic_write_bytes", "atomic_write_text", "owned_folder", "ForeignFolder",
           "probe_writable", "read_entry", "remove_entry", "copy_tree"]


class ForeignFolder(PermissionError):
    """A folder the suite would write into is a link, not a folder, or someone else's."""


def owned_folder(path: str | Path, created_mode: int = 0o777) -> Path:
    """``path`` as a folder this user may safely write into: created (with ``created_mode``
    less the umask, parents too) when absent; when it exists, a real folder owned by this user,
    or by root with the sticky bit set. ``ForeignFolder`` otherwise (the folder is named)."""
    path = Path(path)
    try:
        path.mkdir(mode=created_mode, parents=True)
        return path
    except FileExistsError:
        pass
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise ForeignFolder(f"{path} is a symbolic link; allowed: a folder of your own "
                            "(remove the link)")
    if not stat.S_ISDIR(st.st_mode):
        raise ForeignFolder(f"{path} is not a folder; allowed: a folder of your own")
    if st.st_uid != os.getuid() and not (st.st_uid == 0 and st.st_mode & stat.S_ISVTX):
        raise ForeignFolder(f"{path} belongs to uid {st.st_uid}, not to you (its owner could "
                            "replace what is written there); allowed: a folder of your own")
    return path


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """``data`` to ``path`` through a temporary in the same folder and a rename: readers never
    see half a file, and no link at the temporary's name or at ``path`` is followed. ``mode``:
    the file's permissions (default 0666 less the umask, as ``open`` makes files)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    except OSError as exc:
        raise _named(exc, path) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)   # mkstemp's 0600 hides
        with os.fdopen(fd, "wb") as f:                              # reports from a group
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _named(exc, path) from None
        raise


def _named(exc: OSError, path: Path) -> OSError:
    """``exc`` naming ``path`` (a full disk fails in write or fsync, which name no file)."""
    if exc.filename is None or str(exc.filename).endswith(".tmp"):
        exc.filename = str(path)
    return exc


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def copy_tree(source: Path, dest: Path) -> list[Path]:
    """The files below ``source`` copied to ``dest`` (folders through ``owned_folder``, files
    through ``atomic_write_bytes``, keeping no timestamp): a link planted anywhere in ``dest``
    is replaced or refused, never written through. The files written."""
    written = []
    for src in sorted(Path(source).rglob("*")):
        target = Path(dest) / src.relative_to(source)
        if src.is_dir():
            owned_folder(target)
        elif src.is_file():
            owned_folder(target.parent)
            atomic_write_bytes(target, src.read_bytes())
            written.append(target)
    return written


def probe_writable(folder: Path) -> None:
    """OSError unless a new file can be made in ``folder`` (a fresh name, never following a
    link someone planted)."""
    fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-probe-")
    os.close(fd)
    os.unlink(probe)


_UMASK: list[int] = []


def _umask() -> int:
    """The process's umask, read once (reading it means setting it, which is not thread safe)."""
    if not _UMASK:
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


def read_entry(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; ValueError for a link,
    a folder, a FIFO, a device or a larger file (what someone may plant in a shared folder to
    hang or exhaust a run), OSError when it cannot be read."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > limit:
            raise ValueError(f"{st.st_size} bytes, more than the {limit} an entry may have")
        return f.read(limit + 1)


def remove_entry(path: Path) -> None:
    """Remove whatever is at ``path`` (a file, a link, an empty folder; a folder with content is
    left, and the next write warns)."""
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
