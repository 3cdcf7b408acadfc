"""The user's keys, and the HMAC that authenticates what the suite reads back from disk.

Generated code (``cache``) and stored results (``verification.store``) live in folders that
someone else may be able to write: a team's store, a shared cache, a copied results folder. A
SHA-256 written beside an entry protects against damage only (anyone can recompute it); an
HMAC-SHA256 under a key that only the user holds also protects against a planted or forged
entry.

Two keys, so that sharing results never lets anyone else run code as you:

- the private key, ``$ATTNV_KEY_FILE``, else ``$XDG_CONFIG_HOME/attention-verification/key``
  (``~/.config/...``), 32 random bytes made on first use: it signs generated code (which the
  suite runs) and, unless a store key is named, the store;
- a store key, ``$ATTNV_STORE_KEY_FILE``: the one a team that shares a store gives each of its
  members a copy of. It signs store entries only (data), never code.

Like ssh with a private key, a key file is refused with a one-line reason unless it is a
regular file (not a link) owned by the user, with no access for group or others (0600 or
0400), in folders that only the user or root can change (a world-writable folder counts only
with its sticky bit, as /tmp).

Each MAC covers a domain (``"store"``, ``"codegen"``), the entry's name (its key) and its bytes,
so a genuine entry copied under another name does not authenticate either."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from pathlib import Path
import secrets
import stat
import tempfile

__all__ = ["KEY_ENV", "STORE_KEY_ENV", "key_path", "user_key", "store_key", "sign", "verify",
           "UnsafeKey"]

KEY_ENV = "ATTNV_KEY_FILE"
STORE_KEY_ENV = "ATTNV_STORE_KEY_FILE"
_KEY_BYTES = 32
_loaded: dict[tuple, bytes] = {}


class UnsafeKey(ValueError):
    """A key file cannot be used (others may write or read it, it is a link, it is not a key)."""


def key_path() -> Path:
    """$ATTNV_KEY_FILE, else $XDG_CONFIG_HOME/attention-verification/key, else
    ~/.config/attention-verification/key."""
    explicit = os.environ.get(KEY_ENV)
    if explicit:
        return Path(explicit).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "attention-verification" / "key"


def user_key() -> bytes:
    """The private key (created on first use); UnsafeKey with a one-line reason otherwise."""
    return _key(key_path(), create=True)


def store_key() -> bytes:
    """The key that signs store entries: $ATTNV_STORE_KEY_FILE (never created), else the
    private key."""
    shared = os.environ.get(STORE_KEY_ENV)
    return _key(Path(shared).expanduser(), create=False) if shared else user_key()


def _key(path: Path, create: bool) -> bytes:
    try:
        st = path.lstat()
    except FileNotFoundError:
        if not create:
            raise UnsafeKey(f"key file {path} (${STORE_KEY_ENV}) does not exist; allowed: a "
                            "copy of your team's store key, mode 0600") from None
        _create(path)
        st = path.lstat()
    except OSError as exc:
        raise UnsafeKey(f"key file {path}: {exc.strerror or exc} (set ${KEY_ENV} to another "
                        "file)") from None
    _check_file(path, st)
    ident = (str(path), st.st_ino, st.st_mtime_ns, st.st_size, st.st_mode)
    if ident not in _loaded:
        key = _read_key(path)
        _loaded[ident] = key
    return _loaded[ident]


def _read_key(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ValueError("not a regular file")
            key = bytes.fromhex(f.read(4 * _KEY_BYTES).decode().strip())
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UnsafeKey(f"key file {path} is not a key the suite wrote ({exc}); allowed: "
                        f"{2 * _KEY_BYTES} hex digits (delete it to make a new one)") from None
    if len(key) < 16:
        raise UnsafeKey(f"key file {path} holds {len(key)} bytes; allowed: at least 16")
    return key


def _check_file(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise UnsafeKey(f"key file {path} is not a regular file (a link or something else); "
                        "allowed: a plain file of your own")
    if st.st_uid != os.getuid():
        raise UnsafeKey(f"key file {path} belongs to uid {st.st_uid}, not to you; allowed: a "
                        f"file of your own (copy it: cp {path} ~/.config/...; chmod 600)")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        who = "written" if mode & 0o022 else "read"
        raise UnsafeKey(f"key file {path} can be {who} by others (mode {mode:04o}); allowed: "
                        f"0600 or 0400 (chmod 600 {path})")
    for folder in path.absolute().parents:
        _check_folder(path, folder)


def _check_folder(path: Path, folder: Path) -> None:
    try:
        st = folder.stat()
    except OSError as exc:
        raise UnsafeKey(f"key file {path}: {folder}: {exc.strerror or exc}") from None
    if st.st_uid not in (0, os.getuid()):
        raise UnsafeKey(f"key file {path} is in {folder}, which belongs to uid {st.st_uid} "
                        "(its owner could replace the key); allowed: folders of your own or root's")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
        raise UnsafeKey(f"key file {path} is in {folder}, which others can write (anyone could "
                        f"replace the key); allowed: folders only you can write (chmod go-w {folder})")


def _create(path: Path) -> None:
    """A new random key at ``path``, atomically and never over an existing one (two processes
    starting at once agree on one key)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key.", suffix=".tmp")   # mode 0600
    except OSError as exc:
        raise UnsafeKey(f"cannot create the key file {path} ({exc.strerror or exc}); set "
                        f"${KEY_ENV} to a file in a folder of your own") from None
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(_KEY_BYTES) + "\n")
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileExistsError):     # another process made it first: use that
            os.link(tmp, path)
    except OSError as exc:
        raise UnsafeKey(f"cannot create the key file {path} ({exc.strerror or exc}); set "
                        f"${KEY_ENV} to a file in a folder of your own") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _message(domain: str, name: str, payload: bytes) -> bytes:
    head = b"".join(len(p).to_bytes(8, "little") + p for p in (domain.encode(), name.encode()))
    return head + payload


def sign(domain: str, name: str, payload: bytes) -> str:
    """HMAC-SHA256 (hex) of ``payload`` stored as ``name`` in ``domain``: under the store key
    for ``"store"``, under the private key for everything else (code above all)."""
    key = store_key() if domain == "store" else user_key()
    return hmac.new(key, _message(domain, name, payload), hashlib.sha256).hexdigest()


def verify(domain: str, name: str, payload: bytes, mac: str | bytes) -> bool:
    """Whether ``mac`` authenticates ``payload`` as ``name`` in ``domain`` (constant time)."""
    if isinstance(mac, bytes):
        try:
            mac = mac.decode("ascii")
        except UnicodeDecodeError:
            return False
    return hmac.compare_digest(sign(domain, name, payload), mac)
