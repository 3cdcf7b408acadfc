"""The generated-code cache (``numerics.codegen.cache``) and the user's key that signs it
(``numerics.codegen.signing``): entries are written atomically, with the umask's permissions,
and reused; a damaged, planted or forged entry is reported and regenerated, never run; the
cache folder is checked before any work and an unwritable one costs only the regeneration; the
key is made on first use, readable by the user only, and refused when others can write or read
it, when it is a link, another user's, in a folder others write, or not a key."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest
import sympy as sp

from numerics import generate
from numerics.codegen import signing
from numerics.codegen.cache import CacheDamaged, cached_text, check_cache

MARKER_NAME = "payload-ran"
x = sp.Symbol("x", real=True)


# -- the cache --------------------------------------------------------------------------------
def test_cache_is_written_atomically_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path))
    generate([x], [sp.erf(x) * 3 + x**7])
    files = list(tmp_path.rglob("*.py"))
    assert len(files) == 1 and not list(tmp_path.rglob("*.tmp"))
    mtime = files[0].stat().st_mtime_ns
    generate([x], [sp.erf(x) * 3 + x**7])
    assert files[0].stat().st_mtime_ns == mtime


def test_atomic_writes_keep_the_umask_permissions(tmp_path):
    from numerics.codegen.cache import atomic_write_text
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "report.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "report.json").stat().st_mode & 0o777 == 0o644


def test_damaged_generated_code_is_regenerated_not_executed(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path))
    calls = []

    def make():
        calls.append(1)
        return 'x = """a\nb"""\n'
    assert cached_text("kind", "key", make) == 'x = """a\nb"""\n'
    assert cached_text("kind", "key", make) == 'x = """a\nb"""\n' and len(calls) == 1
    path = tmp_path / "v2" / "kind" / "key.py"
    path.write_text(path.read_text()[:-8])      # as a full disk leaves it: unterminated string
    with pytest.warns(CacheDamaged, match="regenerating"):
        assert cached_text("kind", "key", make) == 'x = """a\nb"""\n'
    assert len(calls) == 2 and cached_text("kind", "key", make) and len(calls) == 2


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


def test_a_planted_non_entry_in_the_cache_is_regenerated(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNV_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "cache" / "v2" / "k" / "x.py"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with pytest.warns(CacheDamaged, match="unauthenticated"):
        assert cached_text("k", "x", lambda: "x = 1\n") == "x = 1\n"
    assert path.is_file()


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


# -- the key ----------------------------------------------------------------------------------
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


def test_a_key_file_that_is_not_a_key_is_refused(key_file):
    key_file.parent.mkdir(mode=0o700)
    key_file.write_text("not hex")
    key_file.chmod(0o600)
    with pytest.raises(signing.UnsafeKey, match="not a key"):
        signing.user_key()
