"""The user's key, and the HMAC that authenticates what the suite reads back from disk.

Generated code (``cache``) and stored results (``verification.store``) live in folders that
someone else may be able to write: a team's store, a shared cache, a copied results folder. A
SHA-256 written beside an entry protects against damage only (anyone can recompute it); an
HMAC-SHA256 under a key that only the user can read also protects against a planted or forged
entry. The key is 32 random bytes in ``$ATTNV_KEY_FILE``, else
``$XDG_CONFIG_HOME/attention-verification/key`` (``~/.config/...``), created on first use with
mode 0600 in a 0700 folder. Like ssh with a private key, a key file that others can write, or
that every user can read, is refused with a one-line reason (a team that shares a store shares
a key file readable by its group only, named by ``$ATTNV_KEY_FILE``).

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

__all__ = ["KEY_ENV", "key_path", "user_key", "sign", "verify", "UnsafeKey"]

KEY_ENV = "ATTNV_KEY_FILE"
_KEY_BYTES = 32
_loaded: dict[tuple, bytes] = {}


class UnsafeKey(ValueError):
    """The key file cannot be used (others may write it, everyone may read it, it is not a key)."""


def key_path() -> Path:
    """$ATTNV_KEY_FILE, else $XDG_CONFIG_HOME/attention-verification/key, else
    ~/.config/attention-verification/key."""
    explicit = os.environ.get(KEY_ENV)
    if explicit:
        return Path(explicit).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "attention-verification" / "key"


def user_key() -> bytes:
    """The user's key (created on first use); UnsafeKey with a one-line reason otherwise."""
    path = key_path()
    try:
        st = path.stat()
    except FileNotFoundError:
        _create(path)
        st = path.stat()
    except OSError as exc:
        raise UnsafeKey(f"key file {path}: {exc.strerror or exc} (set ${KEY_ENV} to another "
                        "file)") from None
    _check_mode(path, st)
    ident = (str(path), st.st_ino, st.st_mtime_ns, st.st_size)
    if ident not in _loaded:
        try:
            text = path.read_text().strip()
            key = bytes.fromhex(text)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise UnsafeKey(f"key file {path} is not a key the suite wrote ({exc}); allowed: "
                            f"{2 * _KEY_BYTES} hex digits (delete it to make a new one)") from None
        if len(key) < 16:
            raise UnsafeKey(f"key file {path} holds {len(key)} bytes; allowed: at least 16")
        _loaded[ident] = key
    return _loaded[ident]


def _check_mode(path: Path, st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeKey(f"key file {path} is not a regular file")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeKey(f"key file {path} can be written by others (mode "
                        f"{stat.S_IMODE(st.st_mode):04o}); allowed: 0600 (chmod 600 {path})")
    if st.st_mode & stat.S_IROTH:
        raise UnsafeKey(f"key file {path} can be read by every user (mode "
                        f"{stat.S_IMODE(st.st_mode):04o}); allowed: 0600, or 0640 for a team's "
                        f"key (chmod 600 {path})")
    parent = path.parent.stat()
    if parent.st_mode & stat.S_IWOTH and not parent.st_mode & stat.S_ISVTX:
        raise UnsafeKey(f"key file {path} is in a folder that every user can write (anyone "
                        "could replace it); allowed: a folder of your own")


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
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _message(domain: str, name: str, payload: bytes) -> bytes:
    head = b"".join(len(p).to_bytes(8, "little") + p for p in (domain.encode(), name.encode()))
    return head + payload


def sign(domain: str, name: str, payload: bytes) -> str:
    """HMAC-SHA256 (hex) of ``payload`` stored as ``name`` in ``domain``, under the user's key."""
    return hmac.new(user_key(), _message(domain, name, payload), hashlib.sha256).hexdigest()


def verify(domain: str, name: str, payload: bytes, mac: str | bytes) -> bool:
    """Whether ``mac`` authenticates ``payload`` as ``name`` in ``domain`` (constant time)."""
    if isinstance(mac, bytes):
        try:
            mac = mac.decode("ascii")
        except UnicodeDecodeError:
            return False
    return hmac.compare_digest(sign(domain, name, payload), mac)
