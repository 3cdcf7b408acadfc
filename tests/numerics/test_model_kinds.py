"""The registry of model kinds (``numerics.kinds``): every registered kind goes declare →
derive → compile → reduce → simulate (each of its methods, Dohmatob's samplers included) →
Monte Carlo risk through one calling convention, on its own small settings (``Kind.example``,
``Kind.trials``). A toy kind (linear regression on a free vector) is added by the one
registration below and runs the same path."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import pytest
import sympy as sp

import numerics
from numerics import KINDS, Kind, ReducedModel, kind_of, reduced, register, simulate, unregister
from numerics.compiled import compile_derivation
from numerics.sgd import SGDResult, SimulationConfig
from theory import OverlapDerivation, derive
from theory.model import Geometry, Param, Vector

BUILT_IN = ("token-sum", "dohmatob-student", "multi-head")


# --- the toy kind: ŷ = xᵀw, y = xᵀw* + sξ, x ~ N(0, I_d); R = q − 2m + 1 + s² ---------------
m, q, s, d = sp.symbols("m q s d", real=True)
TOY_GEOMETRY = Geometry(hidden=("w_star",), trainable=(Vector("w", "free"),),
                        overlaps={("w", "w_star"): m, ("w", "w"): q}, name="toy")
TOY_PARAMS = (Param(d, 1, math.inf, integer=True, doc="dimension"),
              Param(s, 0, math.inf, open_high=True, doc="label noise"))


@dataclass(frozen=True)
class ToyRegression:
    name: str = "toy regression"

    def derivation(self) -> OverlapDerivation:
        return OverlapDerivation(TOY_GEOMETRY, q - 2 * m + 1 + s**2, TOY_PARAMS)


def toy_reduce(declaration, params=None, **kw):
    rm = numerics.OverlapReduced(derive(declaration), params, name=declaration.name, **kw)
    rm.declaration = declaration
    return rm


@dataclass(frozen=True, kw_only=True)
class ToyConfig:
    lr: float
    steps: int
    seed: int = 0

    def __post_init__(self):
        if not (self.lr > 0 and self.steps >= 1 and self.seed >= 0):
            raise ValueError(f"ToyConfig: lr={self.lr}, steps={self.steps}, seed={self.seed}; "
                             "allowed: lr > 0, steps ≥ 1, seed ≥ 0")


class ToySGD:
    """Online SGD w ← w − lr·2(xᵀw − y)x, one sample a step, from w = 0."""

    config_class = ToyConfig

    def __init__(self, declaration, params, config):
        self.p = numerics.compiled(declaration).check_params(params)
        self.cfg = config

    def run(self, progress=None, until=None) -> SGDResult:
        rng, dim = np.random.default_rng(self.cfg.seed), int(self.p["d"])
        w, w_star = np.zeros(dim), np.eye(dim)[0]
        rec = {"m": [], "q": []}
        for _ in range(self.cfg.steps + 1):
            rec["m"].append([w @ w_star])
            rec["q"].append([w @ w])
            x = rng.standard_normal(dim)
            w = w - self.cfg.lr * 2 * (x @ w - x @ w_star - self.p["s"] * rng.standard_normal()) * x
        return SGDResult(t=np.arange(self.cfg.steps + 1) * self.cfg.lr, loss=None, names=("m", "q"),
                         state={k: np.array(v) for k, v in rec.items()})


def toy_risk(declaration, params, state, n, seed):
    """E(ŷ − y)² at vectors realising (m, q) in the plane, by Monte Carlo."""
    rng = np.random.default_rng(seed)
    w = np.array([state["m"], math.sqrt(state["q"] - state["m"] ** 2)])
    z, xi = rng.standard_normal((n, 2)), rng.standard_normal(n)
    e = (z @ (w - [1.0, 0.0]) - params["s"] * xi) ** 2
    return float(e.mean()), float(e.std(ddof=1) / math.sqrt(n))


TOY = Kind(
    "toy", ToyRegression, compile=compile_derivation, reduce=toy_reduce,
    example=lambda: (ToyRegression(), {"d": 8, "s": 0.1}, {"default_state": {"m": 0.2, "q": 0.5}}),
    simulators={"sgd": ToySGD}, risk=toy_risk,
    trials=lambda: {"sgd": ({"d": 8, "s": 0.1}, ToyConfig(lr=0.01, steps=20)),
                    "risk": ({"d": 8, "s": 0.1}, {"m": 0.2, "q": 0.5})},
    doc="linear regression on a free vector (a test's toy kind)")


@pytest.fixture(scope="module", autouse=True)
def toy_registered():
    register(TOY)                 # the one registration of the toy kind
    yield TOY
    unregister("toy")


KIND_NAMES = BUILT_IN + ("toy",)


def test_the_tests_run_every_registered_kind():
    assert tuple(KINDS) == KIND_NAMES


# --- the registry -----------------------------------------------------------------------------
def test_each_declaration_finds_its_kind_along_its_mro():
    for kind in KINDS.values():
        declaration, _, _ = kind.example()
        assert isinstance(declaration, kind.declaration) and kind_of(declaration) is kind

    class Variant(ToyRegression):             # a subclass belongs to its base's kind
        pass
    assert kind_of(Variant()) is TOY
    with pytest.raises(TypeError, match=r"a str is not a declaration of a registered model kind; "
                                        r"allowed: Model \(token-sum\), DohmatobModel"):
        kind_of("marion2025")


def _kind(**changes) -> Kind:
    fields = dict(name="other", declaration=type("Other", (ToyRegression,), {}),
                  compile=compile_derivation, reduce=toy_reduce, example=TOY.example)
    return Kind(**{**fields, **changes})


@pytest.mark.parametrize("changes, error, message", [
    ({"name": "toy"}, ValueError, "name='toy' is taken; registered: "),
    ({"name": ""}, ValueError, "name=''; allowed: a non-empty string"),
    ({"declaration": ToyRegression()}, TypeError, "declaration=ToyRegression.*allowed: a class"),
    ({"declaration": ToyRegression}, ValueError, "ToyRegression is already the declaration of 'toy'"),
    ({"declaration": int}, TypeError, "int has no derivation\\(\\) method"),
    ({"reduce": None}, TypeError, "reduce is not callable"),
    ({"risk": 3}, TypeError, "risk is neither None nor callable"),
    ({"simulators": {"sgd": object}}, TypeError, "object\\) names no config_class"),
    ({"simulators": {"sgd": 3}}, TypeError, "is a int; allowed: a class"),
])
def test_register_refuses_a_bad_kind_and_registers_nothing(changes, error, message):
    before = dict(KINDS)
    with pytest.raises(error, match=message):
        register(_kind(**changes))
    assert dict(KINDS) == before


def test_unregister_names_the_kinds_for_an_unknown_one():
    with pytest.raises(KeyError, match="no kind 'nope'; registered: "):
        unregister("nope")


def test_the_simulators_view_and_the_config_check():
    assert numerics.SIMULATORS[ToyRegression] == {"sgd": ToySGD}
    assert set(numerics.SIMULATORS[numerics.models.dohmatob.dm.DohmatobModel]) == {
        "rem", "rem-torch", "brute-force", "direct", "pgd"}
    params, config = TOY.trials()["sgd"]
    with pytest.raises(TypeError, match="config: a SimulationConfig; allowed: a ToyConfig "
                                        "\\(method 'sgd' of the toy kind\\)"):
        simulate(ToyRegression(), params, SimulationConfig(lr=0.1, steps=1), "sgd")
    with pytest.raises(ValueError, match="method='gram'; allowed: \\['sgd'\\]"):
        simulate(ToyRegression(), params, config, "gram")


# --- every kind's whole path --------------------------------------------------------------------
@pytest.fixture(scope="module", params=KIND_NAMES)
def kind(request, toy_registered):
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
    assert kind.derive(declaration) is derive(declaration)
    with pytest.raises(TypeError, match=f"{kind.name}: a str is not a"):
        kind.derive("x")


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


def test_compile_evaluate_and_integrate(kind, path):
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
    (Gaussian expectations integrated by ``theory.quadrature.evaluate``) at the same parameters
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


def test_derive_and_compile_are_one_step_each_kept_once_per_model(kind, path):
    """``theory.derive`` and ``numerics.compiled`` take a declaration of any kind and keep their
    result once per model: an equal declaration built again gets the same objects."""
    from numerics.compiled import CompiledDerivation, CompiledHeads, compiled
    declaration, _, _, _ = path
    twin = copy.deepcopy(declaration)             # built again: equal, not identical
    assert twin == declaration and twin is not declaration
    assert derive(twin) is derive(declaration)
    assert compiled(twin) is compiled(declaration)
    assert compiled(declaration, "torch") is not compiled(declaration)
    expected = CompiledHeads if kind.name == "multi-head" else CompiledDerivation
    assert isinstance(compiled(declaration), expected)


def test_every_simulator_of_the_kind_runs_through_simulate(kind, path):
    """``numerics.simulate(declaration, params, config, method)`` for each of the kind's
    methods (Dohmatob's samplers included) on the kind's trial settings: a trajectory whose
    records are finite, or a finite estimate with a positive standard error."""
    declaration, _, _, rm = path
    trials = kind.trials()
    assert set(kind.simulators) <= set(trials), "a simulator without a trial"
    for method in kind.simulators:
        params, config = trials[method]
        res = simulate(declaration, params, config, method)
        if isinstance(res, SGDResult):
            assert len(res.t) >= 2 and res.t[0] == 0.0, method
            assert all(np.all(np.isfinite(res[n])) for n in res.names), method
            if kind.name != "multi-head":
                assert set(res.names) == set(rm.state_names), method
        else:
            value, stderr = res
            assert np.isfinite(value) and 0 < stderr < np.inf, (method, value, stderr)


def test_the_monte_carlo_risk(kind, path):
    """The kind's Monte Carlo risk at a state: finite, with a standard error; where the reduced
    model states the same risk (token-sum at finite d, the toy, multi-head) it agrees with it
    within five standard errors. Dohmatob's R̄ is the d → ∞ limit: only finiteness here (its
    claims test the limit)."""
    declaration, _, kw, _ = path
    params, state = kind.trials()["risk"]
    mean, se = kind.risk(declaration, params, state, 4000, 3)
    assert np.isfinite(mean) and 0 < se < np.inf
    if kind.name == "dohmatob-student":
        return
    bound = params if kind.name != "multi-head" else {"n": 2**12, "seed": 0}
    rm = reduced(declaration, bound, **{k: v for k, v in kw.items() if k != "default_state"})
    exact, exact_se = rm.loss(rm.pack(state, base=np.zeros(len(rm.state_names))))
    assert abs(mean - exact) <= 5 * math.hypot(se, exact_se), (mean, se, exact, exact_se)


def test_two_user_functions_of_one_name_are_two_models():
    """The cache keys a function by identity: two activations whose weights functions share a
    name (one per user file) derive their own expressions."""
    from theory.multihead import Activation, MultiHeadModel

    def make(k):
        def weights(s, v):
            return [[sp.exp(k * x) / sum(sp.exp(k * y) for y in row) for x in row] for row in s]
        return MultiHeadModel(1, 2, 1, Activation("mine", weights))

    one, two = make(1), make(2)
    assert derive(one) is not derive(two)
    assert derive(one).token_weights != derive(two).token_weights


@pytest.mark.parametrize("method", ["direct", "gram"])
def test_the_sgd_simulators_record_the_reduced_models_order_parameters(method):
    """The token-sum and the multi-head simulators through ``numerics.sgd.simulate`` (the same
    function as ``numerics.simulate``): records named as the reduced model's order parameters,
    on the flow's time axis; an unknown method names the kind's methods."""
    from numerics.sgd import simulate as sgd_simulate
    assert sgd_simulate is simulate
    for name in ("token-sum", "multi-head"):
        kind = KINDS[name]
        declaration, _, _ = kind.example()
        params, config = kind.trials()[method]
        res = simulate(declaration, params, config, method)
        names = ("m", "r", "b", "v") if name == "multi-head" else tuple(
            reduced(declaration, kind.example()[1]).state_names)
        assert res.names == names and res.t.tolist() == [0.0, 0.02, 0.04]
        if name == "multi-head":
            assert res.extras["sgd_noise"] == pytest.approx(0.01 * 16 / 1)
        with pytest.raises(ValueError, match="method='exact'; allowed: \\['direct', 'gram'\\]"):
            simulate(declaration, params, config, "exact")


def test_dohmatobs_samplers_check_their_config_and_params_before_work():
    from numerics.models.dohmatob import PGDConfig, RiskSampling
    declaration = KINDS["dohmatob-student"].example()[0]
    with pytest.raises(ValueError, match="RiskSampling: state=\\['mu'\\]; allowed: a mapping of "
                                         "exactly \\['mu', 'nu', 'zeta', 'eta', 'rho'\\]"):
        RiskSampling(state={"mu": 0.1}, n_samples=10)
    with pytest.raises(ValueError, match="RiskSampling: n_samples=1; allowed: an integer ≥ 2"):
        RiskSampling(state=dict.fromkeys(("mu", "nu", "zeta", "eta", "rho"), 0.0), n_samples=1)
    with pytest.raises(ValueError, match="PGDConfig: lr=0; allowed: a finite number > 0"):
        PGDConfig(lr=0, steps=1, n_train=1, n_test=1)
    params, config = KINDS["dohmatob-student"].trials()["rem"]
    with pytest.raises(ValueError, match="parameter gamma=1.5 is out of range"):
        simulate(declaration, {**params, "gamma": 1.5}, config, "rem")
    with pytest.raises(ValueError, match="params=\\['d'\\]; allowed for 'pgd': exactly"):
        simulate(declaration, {"d": 8}, KINDS["dohmatob-student"].trials()["pgd"][1], "pgd")
    with pytest.raises(ValueError, match="until: not allowed for a risk sampler"):
        simulate(declaration, params, config, "rem", until=lambda state: True)
