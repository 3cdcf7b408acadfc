"""The registry of model kinds (``numerics.reduced.KINDS``): every kind goes declare → derive →
compile → ReducedModel → simulate through one calling convention, on each kind's small
example setting (``Kind.example``)."""

import copy

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
    from theory.quadrature import evaluate
    values = {**rm.params, **rm.as_dict(y)}
    risk = rm.derivation.risk
    subs = {s: values[s.name] for s in risk.free_symbols}
    assert rm.loss(y)[0] == pytest.approx(float(evaluate(risk, subs)), rel=1e-9, abs=1e-12)


# --- one derivation cache, one compile step, one simulator convention -------------------------
def test_derive_and_compile_are_one_step_each_kept_once_per_model(kind, path):
    """``theory.derive`` and ``numerics.compiled`` take a declaration of any kind and keep their
    result once per model: an equal declaration built again gets the same objects."""
    from numerics.compiled import CompiledDerivation, CompiledHeads, compiled
    from theory import derive
    declaration, _, _, _ = path
    twin = copy.deepcopy(declaration)             # built again: equal, not identical
    assert twin == declaration and twin is not declaration
    assert derive(twin) is derive(declaration)
    assert compiled(twin) is compiled(declaration)
    assert compiled(declaration, "torch") is not compiled(declaration)
    expected = CompiledHeads if kind.name == "multi-head" else CompiledDerivation
    assert isinstance(compiled(declaration), expected)


def test_two_user_functions_of_one_name_are_two_models():
    """The cache keys a function by identity: two activations whose weights functions share a
    name (one per user file) derive their own expressions."""
    import sympy as sp

    from theory import derive
    from theory.multihead import Activation, MultiHeadModel

    def make(k):
        def weights(s, v):
            return [[sp.exp(k * x) / sum(sp.exp(k * y) for y in row) for x in row] for row in s]
        return MultiHeadModel(1, 2, 1, Activation("mine", weights))

    one, two = make(1), make(2)
    assert derive(one) is not derive(two)
    assert derive(one).token_weights != derive(two).token_weights


@pytest.mark.parametrize("method", ["direct", "gram"])
def test_simulate_is_one_call_for_every_kind_with_simulators(kind, path, method):
    """``numerics.sgd.simulate(declaration, params, config, method)``: the same call runs the
    token-sum and the multi-head simulators, whose records name the reduced model's order
    parameters; a kind without simulators gets a TypeError naming those that have them."""
    from numerics.sgd import SIMULATORS, SimulationConfig, simulate
    declaration, params, kw, rm = path
    config = SimulationConfig(lr=0.01, steps=4, seeds=2, record_every=2, device="cpu")
    if not any(isinstance(declaration, t) for t in SIMULATORS):
        with pytest.raises(TypeError, match="no SGD simulator for a DohmatobModel; allowed: Model"):
            simulate(declaration, {}, config, method)
        return
    if kind.name == "multi-head":
        sim_params = {"D": 16, "prior": kw["prior"]}
        names = ("m", "r", "b", "v")
    else:
        sim_params = {**rm.params, "d": 16}
        names = tuple(rm.state_names)
    res = simulate(declaration, sim_params, config, method)
    assert res.names == names and res.t.tolist() == [0.0, 0.02, 0.04]
    assert all(np.all(np.isfinite(res[n])) for n in names)
    if kind.name == "multi-head":
        assert res.extras["sgd_noise"] == pytest.approx(0.01 * 16 / 1)
    with pytest.raises(ValueError, match="method='exact'; allowed: \\['direct', 'gram'\\]"):
        simulate(declaration, sim_params, config, "exact")
