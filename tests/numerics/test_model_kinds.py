"""The registry of model kinds (``numerics.reduced.KINDS``): every kind goes declare → derive →
compile → ReducedModel → simulate through one calling convention, on each kind's small
example setting (``Kind.example``)."""

import numpy as np
import pytest
import sympy as sp

from numerics.reduced import KINDS, ReducedModel, kind_of, reduced


def test_the_registry_holds_the_three_kinds_and_each_declaration_finds_its_kind():
    assert set(KINDS) == {"token-sum", "dohmatob-student", "multi-head"}
    for kind in KINDS.values():
        declaration, _, _ = kind.example()
        assert isinstance(declaration, kind.declaration) and kind_of(declaration) is kind
    with pytest.raises(TypeError, match=r"cannot reduce a str; allowed: Model \(token-sum\)"):
        kind_of("marion2025")


@pytest.fixture(scope="module", params=sorted(KINDS))
def kind(request):
    return KINDS[request.param]


@pytest.fixture(scope="module")
def path(kind):
    """declare → reduce (bound) with the one calling convention ``reduced(declaration, params,
    **kw)``; derive (the equations) and compile happen on the reduced model."""
    declaration, params, kw = kind.example()
    rm = reduced(declaration, params, **kw)
    return declaration, params, kw, rm


def test_reduce_is_the_kinds_reduce_and_keeps_the_declaration(kind, path):
    declaration, params, kw, rm = path
    assert isinstance(rm, ReducedModel) and rm.declaration is declaration
    again = kind.reduce(declaration, params, **kw)
    assert type(again) is type(rm) and again.state_names == rm.state_names


def test_derive_gives_the_loss_and_one_flow_equation_per_coordinate(kind, path):
    _, _, _, rm = path
    eqs = rm.equations()
    lhs = [eq.lhs for eq in eqs]
    if kind.name == "multi-head":
        # one equation per block of the state (m_hf, r, b_h; v_h only when the activation
        # trains sinks), stated for a generic head h and feature f
        blocks = ["dm_hf", "dr", "db_h"] + (["dv_h"] if rm.model.trains_sinks else [])
        assert all(f"{b}/d{rm.time}" in lhs for b in blocks) and "phi" in lhs, lhs
        return
    for name in rm.state_names:
        assert f"d{name}/d{rm.time}" in lhs, (name, lhs)
    risk = eqs[0].rhs                          # symbolic: the risk is an expression of the state
    assert isinstance(risk, sp.Expr) and {s.name for s in risk.free_symbols} & set(rm.state_names)


def test_compile_evaluate_and_simulate(kind, path):
    """Generated code at one state: finite loss, right-hand side, Jacobian; a short trajectory
    stays finite and realisable, and the loss decreases along the (gradient) flow."""
    _, _, _, rm = path
    assert rm.compile() is not None
    y0 = rm.check_state(rm.default_state())
    loss0, se0 = rm.loss(y0)
    f0 = rm.rhs(y0)
    assert np.isfinite(loss0) and np.isfinite(se0) and np.all(np.isfinite(f0))
    assert np.any(np.abs(f0) > 1e-8), "the example state is stationary: it shows nothing"
    assert np.all(np.isfinite(rm.jacobian(y0)))
    T = 0.5
    traj = rm.integrate(y0, [0.0, T / 2, T])
    assert traj.y.shape == (3, len(rm.state_names)) and np.all(np.isfinite(traj.y))
    ys = [rm.check_state(y) for y in traj.y]
    losses = [rm.loss(y)[0] for y in ys]
    assert losses[0] > losses[1] > losses[2], losses


def test_the_loss_matches_a_direct_evaluation(kind, path):
    """Overlap kinds: the compiled loss against SymPy's own evaluation of the derived risk
    (Gaussian expectations integrated by ``theory.gaussian.evaluate``) at the same parameters
    and state. Multi-head: the quasi-Monte Carlo loss against an estimate on other draws."""
    declaration, params, kw, rm = path
    y = rm.default_state()
    if kind.name == "multi-head":
        (a, se_a), (b, se_b) = rm.loss(y), reduced(declaration, {**params, "seed": 7}, **kw).loss(y)
        assert abs(a - b) <= 5 * np.hypot(se_a, se_b) + 1e-12, (a, se_a, b, se_b)
        return
    from theory.gaussian import evaluate
    values = {**rm.params, **rm.as_dict(y)}
    risk = rm.derivation.risk
    subs = {s: values[s.name] for s in risk.free_symbols}
    assert rm.loss(y)[0] == pytest.approx(float(evaluate(risk, subs)), rel=1e-9, abs=1e-12)
