"""The store as a cache of simulations (``verification.storeops`` and the ``store`` commands):
size by stage and claim, pruning what no current key reaches, export and import between stores
(only entries your key authenticates are taken; a tar file never writes outside the store)."""

from __future__ import annotations

import io
import tarfile

import pytest
from typer.testing import CliRunner

from verification.catalogue import load_all
from verification.codehash import code_hash
from verification.records import claim_code
from verification.storeops import export_store, import_store, prune, usage
from verification.store import ResultStore
from verification.tasks import key_versions

SIM_MODULE = "verification.simulations.base"


def _key(i: int) -> str:
    return f"{i:064x}"


@pytest.fixture
def filled(tmp_path):
    """A store with a simulation and a judgement that current keys reach, and entries that no
    current key reaches (changed code, other library versions), one of unknown code, one
    damaged."""
    claim = load_all()["marion2025:prop3-linear"]
    store = ResultStore(tmp_path / "store")
    sim = {"stage": "simulation", "fn": f"{SIM_MODULE}.f", "claim": claim.id, "module": SIM_MODULE,
           "code": code_hash(SIM_MODULE), "versions": key_versions()}
    judged = {"stage": "judgement", "claim": claim.id, "code": claim_code(claim),
              "versions": key_versions()}
    store.put(_key(1), [1.0, 2.0], sim)
    store.put(_key(2), {"entry": {}}, judged)
    store.put(_key(3), [3.0], {**sim, "code": "0" * 64})                       # code changed
    store.put(_key(4), [4.0], {**sim, "versions": {**key_versions(), "numpy": "0.0"}})
    store.put(_key(5), {"entry": {}}, {**judged, "code": {"simulation": "0", "judge": "0"}})
    store.put(_key(6), {"entry": {}}, {**judged, "claim": "someone:else"})      # not known here
    damaged = store.path(_key(7))
    damaged.parent.mkdir(parents=True, exist_ok=True)
    damaged.write_bytes(b"attnv-store-2 hmac-sha256 0\n{}")                     # older format
    return store


def test_usage_lists_entries_by_stage_and_claim(filled):
    got = usage(filled)
    assert got["entries"] == 7 and got["unreadable"] == 1
    rows = {(r["stage"], r["claim"], r["what"]): r["entries"] for r in got["rows"]}
    assert rows[("simulation", "marion2025:prop3-linear", f"{SIM_MODULE}.f")] == 3
    assert rows[("judgement", "marion2025:prop3-linear", "")] == 2
    assert rows[("judgement", "someone:else", "")] == 1


def test_prune_removes_what_no_current_key_reaches_and_keeps_the_unknown(filled):
    dry = prune(filled, dry_run=True)
    assert dry["removed"] == 4 and len(filled.keys()) == 7         # the damaged one too
    got = prune(filled)
    assert got == {"removed": 4, "bytes": got["bytes"], "kept": 3, "unknown": 1, "dry_run": False}
    assert filled.keys() == [_key(1), _key(2), _key(6)]
    assert filled.get(_key(1)) == [1.0, 2.0]


def test_export_and_import_move_authenticated_entries_only(filled, tmp_path):
    prune(filled)
    dest = tmp_path / "export.tar"
    got = export_store(filled, dest)
    assert got["entries"] == 3
    other = ResultStore(tmp_path / "other")
    assert import_store(dest, other) == {"imported": 3, "present": 0, "refused": 0}
    assert other.keys() == filled.keys() and other.get(_key(1)) == [1.0, 2.0]
    assert import_store(dest, other)["present"] == 3
    only = export_store(filled, tmp_path / "sims.tar", stages=("simulation",))
    assert only["entries"] == 1


def _tar_with(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buf.getvalue()


def test_a_hostile_export_writes_nothing_outside_and_nothing_unauthenticated(filled, tmp_path):
    genuine = filled.path(_key(1)).read_bytes()
    forged = genuine.replace(b"[1.0", b"[9.0") if b"[1.0" in genuine else genuine[:-1] + b"x"

    def member(name, data=b"", kind=tarfile.REGTYPE, target=""):
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.size = kind, target, len(data)
        return info, data

    key = _key(8)
    evil = tmp_path / "evil.tar"
    evil.write_bytes(_tar_with([
        member(f"{key[:2]}/{key}.entry", genuine),                 # authentic bytes, other key
        member(f"{_key(1)[:2]}/{_key(1)}.entry", forged),          # edited
        member(f"../{_key(9)}.entry", genuine),                    # outside the store
        member(f"{_key(9)[:2]}/{_key(9)}.entry", kind=tarfile.SYMTYPE, target="/etc/passwd"),
        member("notes.txt", b"hello")]))
    other = ResultStore(tmp_path / "other")
    assert import_store(evil, other) == {"imported": 0, "present": 0, "refused": 5}
    assert other.keys() == [] if other.root.exists() else True
    assert not (tmp_path / f"{_key(9)}.entry").exists()
    with pytest.raises(ValueError, match="not a store export"):
        (tmp_path / "junk.tar").write_bytes(b"not a tar file")
        import_store(tmp_path / "junk.tar", other)


def test_the_store_commands(filled, tmp_path):
    from verification.cli import app
    runner = CliRunner()
    root = str(filled.root)
    size = runner.invoke(app, ["store", "size", "--store", root])
    assert size.exit_code == 0 and "7 entries" in size.output and "judgement" in size.output
    dry = runner.invoke(app, ["store", "prune", "--store", root, "--dry-run"])
    assert dry.exit_code == 0 and "would remove 4 entries" in dry.output
    done = runner.invoke(app, ["store", "prune", "--store", root])
    assert "removed 4 entries" in done.output and len(filled.keys()) == 3
    tar = tmp_path / "x.tar"
    assert runner.invoke(app, ["store", "export", str(tar), "--store", root]).exit_code == 0
    moved = runner.invoke(app, ["store", "import", str(tar), "--store", str(tmp_path / "b")])
    assert moved.exit_code == 0 and "imported 3 entries" in moved.output
    missing = runner.invoke(app, ["store", "size", "--store", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "--store" in missing.output
