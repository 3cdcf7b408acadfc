"""Simulations stored apart from judgements: a simulation is keyed by its own code (never the
judge's), a judge edit re-judges from stored simulations, a simulation edit re-simulates, a run
that may only re-judge says what it misses, and no simulation module reaches the judging code."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import sys
import textwrap

import numpy as np
import pytest
import sympy as sp

from verification.codehash import ROOT, code_hash, files_hash, import_closure, split_hash
from verification.context import Context, Tally
from verification.declare import REGISTRY
from verification.layers import simulated
from verification.simulations import SimContext, SimulationMissing, is_seeded, simulation
from verification.simulations.base import derive_seed
from verification.store import ResultStore
from verification.simtasks import SubTask, item_key, map_subtasks, stored_only

SIM_SOURCE = '''
from verification.simulations import simulation

CALLS = []


def draw(sim, item):
    """A seeded simulation: its stream derives from the run seed and the setting."""
    CALLS.append(item)
    return float(sim.rng(f"draw:{{item}}").standard_normal()) + item{edit}


@simulation(seeded=False)
def square(sim, item):
    CALLS.append(("square", item))
    return item * item
'''

JUDGE_SOURCE = '''
from verification.declare import Outcome, claim
from verification.checks import exact
import {sim} as sim_module


@claim("toy2101:{name}", "Toy", "Stored simulations re-judged.", statistical=False)
def toy(ctx):
    values = ctx.map(sim_module.draw, [1, 2, 3])
    squares = ctx.map(sim_module.square, [2, 3])
    total = sum(values) + sum(squares){edit}
    return Outcome("confirmed", f"total {{total:.6f}}", {{"values": values, "squares": squares}},
                   tracked={{"total": (total, 1e-6)}})
'''


def _clear_hash_caches() -> None:
    import verification.codehash as codehash
    code_hash.cache_clear()
    split_hash.cache_clear()
    codehash._imports.cache_clear()


@pytest.fixture
def toy_modules(tmp_path, monkeypatch):
    """A toy claim (judge) in one file and its simulations in another, both outside the suite,
    editable by the test: ``write(sim_edit=..., judge_edit=...)`` rewrites them and reloads."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names = {"sim": f"toysim_{tmp_path.name[-12:]}".replace("-", "_"),
             "judge": f"toyjudge_{tmp_path.name[-12:]}".replace("-", "_")}

    def write(sim_edit: str = "", judge_edit: str = ""):
        REGISTRY.pop("toy2101:claim", None)
        for n in names.values():
            sys.modules.pop(n, None)
        (tmp_path / f"{names['sim']}.py").write_text(SIM_SOURCE.format(edit=sim_edit))
        (tmp_path / f"{names['judge']}.py").write_text(
            textwrap.dedent(JUDGE_SOURCE.format(sim=names["sim"], name="claim", edit=judge_edit)))
        importlib.invalidate_caches()
        _clear_hash_caches()
        sim = importlib.import_module(names["sim"])
        importlib.import_module(names["judge"])
        return sim, REGISTRY["toy2101:claim"]

    yield write
    REGISTRY.pop("toy2101:claim", None)
    for n in names.values():
        sys.modules.pop(n, None)
    _clear_hash_caches()


def _run(claims, store, **opts):
    from verification.runner import run
    return run(claims, show=False, figures=False, workers=0, calibration=None, store=store,
               out=store.parent / f"out{len(list(store.parent.glob('out*')))}", **opts)


def test_a_judge_edit_rejudges_from_stored_simulations_and_a_simulation_edit_resimulates(
        tmp_path, toy_modules):
    store = tmp_path / "store"
    sim, claim = toy_modules()
    first = _run([claim], store)["claims"][0]
    assert first["verdict"] == "confirmed" and first["stage"] == "simulated"
    assert first["simulations"] == {"computed": 5, "reused": 0}
    assert len(sim.CALLS) == 5

    sim, claim = toy_modules()                       # nothing changed: the judgement is reused
    again = _run([claim], store)["claims"][0]
    assert again["stage"] == "reused" and sim.CALLS == []

    sim, claim = toy_modules(judge_edit="  # a cosmetic edit of the judge")
    judged = _run([claim], store)["claims"][0]
    assert judged["stage"] == "rejudged" and sim.CALLS == []
    assert judged["simulations"] == {"computed": 0, "reused": 5}
    assert judged["summary"] == first["summary"] and judged["evidence"] == first["evidence"]

    sim, claim = toy_modules(sim_edit=" + 0.0", judge_edit="  # a cosmetic edit of the judge")
    resimulated = _run([claim], store)["claims"][0]
    assert resimulated["stage"] == "simulated" and len(sim.CALLS) == 5
    assert resimulated["summary"] == first["summary"]


def test_a_simulation_is_shared_across_seeds_only_when_it_is_unseeded(tmp_path, toy_modules):
    store = tmp_path / "store"
    sim, claim = toy_modules()
    _run([claim], store, seed=0)
    sim, claim = toy_modules()
    other = _run([claim], store, seed=1)["claims"][0]
    assert other["simulations"] == {"computed": 3, "reused": 2}       # squares serve every seed
    assert sorted(map(str, sim.CALLS)) == ["1", "2", "3"]


def test_a_run_that_may_only_rejudge_says_which_simulation_it_misses(tmp_path, toy_modules):
    from verification.tasks import ClaimTask, claim_task

    sim, claim = toy_modules()
    store = ResultStore(tmp_path / "store")
    spec = ClaimTask.make(claim, "quick", 0, "cpu", figures=False, store=store, simulate=False)
    got = claim_task(spec)
    assert got["stage"] == "missing" and "draw" in got["missing"] and sim.CALLS == []
    assert store.keys() == []                        # nothing judged, nothing stored
    with pytest.raises(SimulationMissing):
        Context(store=store, mapper=stored_only).map(sim.square, [2])


def test_simulation_keys_ignore_the_judging_code_and_follow_their_own():
    sim = SimContext("quick", 0, "cpu", ())
    a = SubTask(_module_level_square, sim, 3)
    assert a.key == SubTask(_module_level_square, sim, 3, claim_id="another:claim").key
    assert a.key != SubTask(_module_level_square, dataclasses.replace(sim, seed=1), 3).key
    assert a.key != SubTask(_module_level_square, dataclasses.replace(sim, profile="full"), 3).key
    assert a.key != SubTask(_module_level_square, sim, 4).key


def _module_level_square(sim, item):
    return item * item


def test_unseeded_simulations_have_no_stream_and_seeded_ones_derive_the_claims():
    assert is_seeded(_module_level_square) and not is_seeded(simulation(seeded=False)(lambda s, i: i))
    with pytest.raises(ValueError, match="unseeded"):
        SimContext("quick", None, "cpu").rng("x")
    ctx = Context(seed=7, setting=(("a", 0.5),))
    sim = SimContext("quick", 7, "cpu", (("a", 0.5),))
    assert ctx.claim_seed("s") == sim.claim_seed("s") == derive_seed(7, "s", (("a", 0.5),))
    assert ctx.claim_seed("s") != Context(seed=7).claim_seed("s")


def test_items_are_keyed_by_value_code_and_expression():
    t = sp.Symbol("t")
    assert item_key({"b": 1, "a": [1.5, None]}) == item_key({"a": [1.5, None], "b": 1})
    assert item_key(sp.sin(t)) == {"sympy": "sin(Symbol('t'))"} != item_key(sp.cos(t))
    fn = item_key(_module_level_square)
    assert fn["code"].endswith(":_module_level_square") and fn["hash"] == code_hash(__name__)
    part = item_key(functools.partial(_module_level_square, item=2))
    assert part["partial"][0] == fn and part["partial"][2] == {"dict": [["item", 2]]}
    assert item_key(np.arange(3)) == {"ndarray": [0, 1, 2], "dtype": str(np.arange(3).dtype)}

    @dataclasses.dataclass(frozen=True)
    class Prior:            # a local class: no module-level name to key it by
        mean: float

    with pytest.raises(TypeError, match="item holds"):
        item_key(Prior(1.0))
    with pytest.raises(TypeError, match="item holds"):
        item_key(lambda x: x)
    with pytest.raises(TypeError, match="item holds"):
        item_key(object())


def test_a_file_in_an_item_is_keyed_by_its_content(tmp_path):
    model = tmp_path / "model.py"
    model.write_text("MODEL = 1\n")
    first = item_key({"model": model})
    model.write_text("MODEL = 2\n")
    assert item_key({"model": model}) != first and item_key(model)["file"] == str(model.resolve())
    assert item_key(tmp_path / "absent.py")["sha256"] is None


def test_in_a_run_without_store_the_simulations_run_in_order():
    calls = []

    def record(sim, item):
        calls.append((sim.seed, item))
        return item

    assert Context(seed=4).map(record, [1, 2]) == [1, 2] and calls == [(4, 1), (4, 2)]
    store = None
    tally = Tally()
    assert map_subtasks(SimContext(), _module_level_square, [2], store, lambda f: None, tally) == [4]
    assert tally.counts() == {"computed": 1, "reused": 0}


SIMULATIONS = sorted(p for p in (ROOT / "verification" / "simulations").rglob("*.py"))


@pytest.mark.parametrize("path", SIMULATIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_simulation_module_reaches_the_judging_code(path):
    """Every file a simulation's key hashes is simulation code (theory, numerics, this layer): a
    simulation module that imported the check library, the claim API or a claims module would
    re-simulate at every edit of a judge."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    judging = [str(f.relative_to(ROOT)) for f in import_closure(module)
               if not simulated(".".join(f.relative_to(ROOT).with_suffix("").parts)
                                .removesuffix(".__init__"))]
    assert judging == []


def test_the_two_hashes_of_a_claim_split_its_code():
    from verification.catalogue import load_all
    module = load_all()["marion2025:thm1-risk"].module
    both = split_hash((module, "verification.tasks"))
    files = set(import_closure(module)) | set(import_closure("verification.tasks"))
    sim = {f for f in files if "verification/claims" not in str(f) and simulated(
        ".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"))}
    assert both["simulation"] == files_hash(sim)
    assert both["judge"] == files_hash(files - sim)
    assert any("checks" in str(f) for f in files - sim)
    assert any(str(f.relative_to(ROOT)).startswith("numerics") for f in sim)


CAL_SIM = '''
from verification.simulations import simulation


def normal_draws(sim, item):
    return sim.rng("toy:draws").normal(item["mean"], 1.0, item["n"])
'''

CAL_JUDGE = '''
import numpy as np

from verification.checks import estimate_vs_theory
from verification.declare import Outcome, claim
import {sim} as sim_module


@claim("toy2101:cal", "Toy", "E x = 1", mutations={{
    "wrong model: mean 1.5": lambda: {{"mean": 1.5}},
    "wrong claim: 1.2": lambda: {{"claimed": 1.2}}}})
def toy(ctx, mean=1.0, claimed=1.0):
    (x,) = ctx.map(sim_module.normal_draws, [{{"mean": mean, "n": 400}}])
    check = estimate_vs_theory(ctx, x.mean(), x.std(ddof=1) / np.sqrt(x.size), claimed)
    return Outcome(check.decision, f"mean {{x.mean():.4f}}"){edit}
'''


@pytest.fixture
def calibrated_toy(tmp_path, monkeypatch):
    """A statistical toy claim whose simulation is in a file of its own; ``write(edit)`` rewrites
    the judge's file (an edit of the judge) and reloads it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    tag = tmp_path.name[-12:].replace("-", "_")
    names = {"sim": f"calsim_{tag}", "judge": f"caljudge_{tag}"}

    def write(edit: str = ""):
        REGISTRY.pop("toy2101:cal", None)
        for n in names.values():
            sys.modules.pop(n, None)
        (tmp_path / f"{names['sim']}.py").write_text(CAL_SIM)
        (tmp_path / f"{names['judge']}.py").write_text(CAL_JUDGE.format(sim=names["sim"], edit=edit))
        importlib.invalidate_caches()
        _clear_hash_caches()
        importlib.import_module(names["judge"])
        return REGISTRY["toy2101:cal"]

    yield write
    REGISTRY.pop("toy2101:cal", None)
    for n in names.values():
        sys.modules.pop(n, None)
    _clear_hash_caches()


def _without_run_details(data: dict) -> dict:
    """A calibration without what re-judging is allowed to change: the code hashes, how the runs
    were computed, wall times and the engine."""
    drop_top = {"seconds", "engine", "rejudged"}
    return {**{k: v for k, v in data.items() if k not in drop_top},
            "claims": [{k: v for k, v in r.items() if k not in ("code", "stages")}
                       for r in data["claims"]]}


def test_calibration_simulates_once_per_model_and_rejudges_a_judge_edit_from_the_store(
        tmp_path, calibrated_toy):
    import json

    from verification.calibrate import calibrate, rejudge

    claim = calibrated_toy()
    store = tmp_path / "store"
    calibrate([claim], seeds=3, out=tmp_path / "cal", store=store)
    path = tmp_path / "cal" / "calibration.json"
    before = json.loads(path.read_text())
    (rec,) = before["claims"]
    runs = rec["runs"] + sum(m["runs"] for m in rec["mutations"]) + sum(
        sum(f["power_runs"].values()) for f in rec["families"])
    # the true model and the wrong model simulate once per seed; every other run (the wrong
    # claim, the sign flip, the power runs) judges the true model's stored simulation
    assert rec["stages"] == {"simulated": 6, "rejudged": runs - 6, "reused": 0}

    claim = calibrated_toy(edit="  # an edit of the judge")
    stale = rejudge(path, store=store)
    assert stale["rejudged"] == ["toy2101:cal"] and stale["needs_simulating"] == []
    after = json.loads(path.read_text())
    assert after["claims"][0]["stages"] == {"simulated": 0, "rejudged": runs, "reused": 0}
    assert after["claims"][0]["code"]["judge"] != rec["code"]["judge"]
    assert after["claims"][0]["code"]["simulation"] == rec["code"]["simulation"]
    assert _without_run_details(after) == _without_run_details(before)
    assert "toy2101:cal" in (tmp_path / "cal" / "calibration.md").read_text()
    assert rejudge(path, store=store)["current"] == ["toy2101:cal"]     # nothing left to do

    calibrated_toy(edit="  # another edit")
    empty = rejudge(path, store=tmp_path / "empty")
    assert empty["rejudged"] == [] and [r["id"] for r in empty["needs_simulating"]] == [
        "toy2101:cal"]
    assert "normal_draws" in empty["needs_simulating"][0]["missing"]
    assert json.loads(path.read_text()) == after               # left as it was
    copy = rejudge(path, store=store, out=tmp_path / "elsewhere")      # the file left alone
    assert copy["rejudged"] == ["toy2101:cal"] and json.loads(path.read_text()) == after
    assert copy["file"] == str(tmp_path / "elsewhere" / "calibration.json")
    assert (tmp_path / "elsewhere" / "calibration.md").exists()


def test_an_edit_of_one_numerics_module_resimulates_exactly_the_claims_whose_simulations_use_it(
        tmp_path, monkeypatch):
    """``numerics/pgd.py`` is in the closure of Marion's Cor. 2 simulations and not of Dohmatob's
    Prop. 5 (linear link): an edit of it (its hash salted here) re-simulates Cor. 2 and reuses
    Prop. 5's judgement whole; afterwards both re-judge from the store without computing."""
    import hashlib

    import verification.codehash as codehash
    from verification.catalogue import load_all

    claims = [load_all()[i] for i in ("marion2025:cor2-bayes-limit",
                                      "dohmatob2025:prop5-invariance[link=linear]")]
    edited = ROOT / "numerics" / "pgd.py"

    def sim_files(claim):
        sims = [m for f in import_closure(claim.module)
                if (m := ".".join(f.relative_to(ROOT).with_suffix("").parts)).startswith(
                    "verification.simulations.") and not m.endswith("__init__")]
        return {f for m in sims for f in import_closure(m)}
    assert edited in sim_files(claims[0]) and edited not in sim_files(claims[1])
    assert edited not in import_closure(claims[1].module)

    store = tmp_path / "store"
    first = {c["id"]: c for c in _run(claims, store)["claims"]}
    original = codehash.files_hash

    def salted(paths):
        paths = list(paths)
        h = original(paths)
        return hashlib.sha256(f"{h}edited".encode()).hexdigest() if edited in paths else h
    monkeypatch.setattr(codehash, "files_hash", salted)
    _clear_hash_caches()
    after = {c["id"]: c for c in _run(claims, store)["claims"]}
    cor2, prop5 = (after[c.id] for c in claims)
    assert cor2["stage"] == "simulated" and cor2["simulations"]["reused"] == 0
    assert cor2["simulations"]["computed"] == first[claims[0].id]["simulations"]["computed"]
    assert prop5["stage"] == "reused"
    again = {c["id"]: c for c in _run(claims, store, rejudge=True)["claims"]}
    assert {c["stage"] for c in again.values()} == {"rejudged"}
    assert all(c["simulations"]["computed"] == 0 for c in again.values())
    assert all(after[i]["summary"] == first[i]["summary"] for i in first)


def test_the_guard_catches_a_number_a_simulation_edit_moves(tmp_path, toy_modules):
    """A simulation that computes something else re-simulates, and the regression guard, which
    compares verdicts and tracked values, sees the moved number."""
    from verification.guard import compare, load_report, save_baseline

    store = tmp_path / "store"
    _, claim = toy_modules()
    _run([claim], store)
    out = sorted(tmp_path.glob("out*"))[-1]
    save_baseline(out / "report.json", tmp_path / "baseline.json")
    _, claim = toy_modules(sim_edit=" + 0.5")          # each draw moved by 0.5
    moved = _run([claim], store)["claims"][0]
    assert moved["stage"] == "simulated"
    diffs = compare(load_report(tmp_path / "baseline.json"),
                    load_report(sorted(tmp_path.glob("out*"))[-1] / "report.json"))
    assert any("toy2101:claim" in d and "total" in d for d in diffs), diffs
