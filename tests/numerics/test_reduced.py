"""The reduced-model interface (numerics.reduced): every kind against the object it wraps."""

import numpy as np
import pytest
import sympy as sp

from numerics import compiled
from numerics.multihead import HeadState, ReducedFlow
from numerics.reduced import HeadReduced, OverlapReduced, ReducedModel, reduced
from theory.multihead import saddle_hessian
from theory import Geometry, Vector
from theory.models import dohmatob2025 as dm
from theory.models import marion2025 as mm
from theory.models.sagitova2026 import at_prior, flipping_spike
from theory.multihead import Activation, MultiHeadModel

N_HEAD = 2**11


@pytest.fixture(scope="module")
def marion():
    return reduced("marion2025")


@pytest.fixture(scope="module")
def dohmatob():
    return reduced("dohmatob2025")


@pytest.fixture(scope="module")
def heads():
    return reduced(MultiHeadModel(2, 3, 2, "softmax"), prior=flipping_spike(4.0, 1.5), n=N_HEAD)


def _central(f, y, h=1e-6):
    y = np.asarray(y, float)
    cols = []
    for j in range(y.size):
        e = np.zeros_like(y)
        e[j] = h
        cols.append((np.asarray(f(y + e)) - np.asarray(f(y - e))) / (2 * h))
    return np.stack(cols, -1)


MARION_Y = np.array([0.3, -0.2, 0.1, 0.15, -0.05])
DOHMATOB_Y = np.array([0.4, 0.3, 0.1, -0.1, 0.05])


# --- all kinds --------------------------------------------------------------------------------
def test_every_kind_implements_the_interface(marion, dohmatob, heads):
    for rm in (marion, dohmatob, heads):
        assert isinstance(rm, ReducedModel)
        y = rm.default_state()
        assert np.array_equal(rm.pack(rm.unpack(y) if isinstance(rm, HeadReduced) else rm.as_dict(y)), y)
        assert np.array_equal(rm.pack(dict(zip(rm.state_names, y))), y)
        assert rm.rhs(y).shape == y.shape and rm.jacobian(y).shape == (y.size, y.size)
        tex = rm._repr_latex_()
        assert tex.startswith("$") and tex.endswith("$") and len(rm.latex()) >= 2


def test_pack_rejects_unknown_and_missing_names(marion):
    with pytest.raises(ValueError, match=r"unknown state coordinate\(s\) \['kapa'\]"):
        marion.pack({"kapa": 0.1})
    with pytest.raises(ValueError, match="missing state coordinate"):
        marion.pack({"kappa": 0.1})
    assert marion.pack({"kappa": 0.1}, base=marion.default_state())[0] == 0.1


# --- the token-sum model ------------------------------------------------------------------------
def test_marion_loss_rhs_and_hessian_are_the_compiled_model(marion):
    cm = compiled(mm.MODEL)
    p = mm.DEFAULT_PARAMS
    assert marion.loss(MARION_Y) == (float(cm.risk(p, MARION_Y)), 0.0)
    assert np.array_equal(marion.rhs(MARION_Y), cm.rhs(p, MARION_Y))
    assert np.array_equal(marion.hessian(MARION_Y), cm.hessian(p, MARION_Y))
    assert marion.params == {k: float(v) for k, v in p.items()}


def test_marion_jacobian_and_hessian_match_central_differences(marion):
    assert np.allclose(marion.jacobian(MARION_Y), _central(marion.rhs, MARION_Y), atol=1e-6)
    grad = lambda y: marion.gradient(y)
    assert np.allclose(marion.hessian(MARION_Y), _central(grad, MARION_Y), atol=1e-6)


def test_marion_saddle_on_M_is_found_and_classified(marion):
    """Sec. 5: (κ, ν) = (0, 0) on M = {θ = η = ρ = 0} is a saddle of the 2-D flow."""
    on_M = marion.restrict(mm.MANIFOLD)
    assert on_M.state_names == ("kappa", "nu") and on_M.fixed == {"theta": 0.0, "eta": 0.0, "rho": 0.0}
    points = on_M.stationary_points(n_starts=16)
    origin = [p for p in points if max(abs(x) for x in p.x) < 1e-8]
    assert len(origin) == 1 and origin[0].kind == "saddle"
    assert on_M.classify([0.0, 0.0]).kind == "saddle"
    H = on_M.hessian(np.zeros(2))
    eig = np.linalg.eigvalsh(H)
    assert eig[0] < 0 < eig[-1]                     # the risk's Hessian is indefinite there


def test_marion_bad_parameters_and_states_name_the_coordinate(marion):
    with pytest.raises(ValueError, match=r"parameter gamma=0 is out of range; allowed: real in \(0"):
        reduced("marion2025", {"gamma": 0})
    with pytest.raises(ValueError, match=r"kappa=1.5 is out of range; allowed: real in \[-1, 1\]"):
        marion.check_state([1.5, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="kappa=0.9.*theta=0.9.*not realisable.*'k', 'v', 'k_star'"):
        marion.check_state([0.9, 0.9, 0.9, 0.9, -0.9])
    with pytest.raises(ValueError, match="state coordinate kappa='x' is not a number"):
        marion.pack({"kappa": "x"}, base=marion.default_state())


def test_unbound_parameters_give_equations_but_no_numbers():
    rm = OverlapReduced.from_model(mm.MODEL)
    assert rm.latex()["R"]
    with pytest.raises(ValueError, match=r"not bound; give params= with d \(integer"):
        rm.loss(MARION_Y)


def test_integrate_names_the_coordinates(marion):
    traj = marion.restrict(mm.MANIFOLD).integrate({"kappa": 0.2, "nu": 0.1}, np.linspace(0, 0.5, 3))
    assert traj.ok and traj.names == ("kappa", "nu") and traj.y.shape == (3, 2)


# --- Dohmatob's R̄ on a Geometry -----------------------------------------------------------------
def test_dohmatob_is_the_papers_risk_on_its_geometry(dohmatob):
    assert isinstance(dm.OVERLAP_STRUCTURE, Geometry)
    assert dohmatob.state_names == ("mu", "nu", "zeta", "eta", "rho")
    vals = {dm.d: 50, dm.alpha: sp.Rational(1, 10), dm.beta: 1, dm.gamma: sp.Rational(3, 5)}
    q = dict(zip((dm.mu, dm.nu, dm.zeta, dm.eta, dm.rho), DOHMATOB_Y))
    exact = float(dm.paper_risk("linear").subs({**vals, **q}).evalf(30))
    value, se = dohmatob.loss(DOHMATOB_Y)
    assert se == 0.0 and value == pytest.approx(exact, rel=1e-12)
    flow = dm.paper_flow("linear")
    rhs = [float(r.subs({**vals, **q}).evalf(30)) for r in flow.rhs]
    assert np.allclose(dohmatob.rhs(DOHMATOB_Y), rhs, rtol=1e-10, atol=1e-12)
    assert np.allclose(dohmatob.jacobian(DOHMATOB_Y), _central(dohmatob.rhs, DOHMATOB_Y), atol=1e-5)


def test_dohmatob_parameters_are_checked_at_construction():
    with pytest.raises(ValueError, match=r"parameter gamma=1.5 is out of range; allowed: real in \(0"):
        reduced("dohmatob2025", {"gamma": 1.5})
    with pytest.raises(ValueError, match=r"parameter link='cubic' is not allowed; allowed: one of"):
        reduced("dohmatob2025", {"link": "cubic"})
    assert reduced("dohmatob2025", {"link": "quadratic"}).name == "dohmatob2025 (quadratic link)"


def test_dohmatob_reduced_is_the_one_construction_of_the_papers_flow():
    """``dohmatob_reduced``: the CLI's model and the claims' one; unbound by default, a risk
    override (the claims' deliberately wrong formulas) replaces R̄, extra symbols need a Param."""
    from theory.model import Param
    from numerics.reduced.registry import dohmatob_reduced
    rm = dohmatob_reduced("quadratic")
    assert rm.params == {} and rm.name == "dohmatob2025 (quadratic link)"
    with pytest.raises(ValueError, match="parameters are not bound"):
        rm.rhs(rm.default_state())
    assert rm.derivation.flow.rhs == dm.paper_flow("quadratic").rhs
    assert rm.restrict(dm.MANIFOLD).derivation.flow.rhs == \
        dm.paper_flow("quadratic").restrict(dm.MANIFOLD).rhs
    bound = dohmatob_reduced(params=dm.DEFAULT_PARAMS)
    cli = reduced("dohmatob2025")
    assert np.array_equal(bound.rhs(DOHMATOB_Y), cli.rhs(DOHMATOB_Y)) and bound.name == cli.name
    wrong = dm.paper_risk("linear") + dm.zeta * dm.mu
    assert dohmatob_reduced("linear", wrong).derivation.flow.rhs == dm.paper_flow("linear", wrong).rhs
    r = sp.Symbol("r", nonnegative=True)
    with pytest.raises(ValueError, match=r"risk has symbols \['r'\]"):
        dohmatob_reduced("linear", dm.paper_risk("linear", r=r))
    with_r = dohmatob_reduced("linear", dm.paper_risk("linear", r=r), extra_params=(Param(r, 0, 1),))
    assert r in with_r.derivation.risk.free_symbols
    with pytest.raises(ValueError, match=r"parameter link='cubic' is not allowed"):
        dohmatob_reduced("cubic")


def test_a_geometry_with_a_risk_of_its_own():
    a = sp.Symbol("a", real=True)
    geo = Geometry(hidden=("h",), trainable=(Vector("w"),), overlaps={("w", "h"): a})
    rm = reduced(geo, risk=(1 - a) ** 2)
    assert rm.loss([0.5]) == (0.25, 0.0)
    assert rm.rhs([0.5]) == pytest.approx([(1 - 0.25) * 2 * 0.5])     # −(1 − a²)·∂R/∂a
    with pytest.raises(ValueError, match=r"symbols \['b'\] that are neither"):
        reduced(geo, risk=sp.Symbol("b") * a)
    with pytest.raises(ValueError, match=r"overlap a names the pair \(w, x\)"):
        Geometry(hidden=("h",), trainable=(Vector("w"),), overlaps={("w", "x"): a})


# --- the multi-head model -----------------------------------------------------------------------
def test_head_names_pack_and_round_trip(heads):
    assert heads.state_names == ("m[0,0]", "m[0,1]", "m[1,0]", "m[1,1]", "r[0,0]", "r[0,1]", "r[1,1]",
                                 "b[0]", "b[1]", "v[0]", "v[1]")
    st = HeadState.make([[0.3, -0.1], [0.2, 0.4]], [[0.2, 0.05], [0.05, 0.1]], [0.1, -0.2])
    y = heads.pack(st)
    assert np.array_equal(y, st.pack())
    back = heads.unpack(y)
    assert all(np.array_equal(getattr(back, k), getattr(st, k)) for k in "mrbv")
    assert heads.free == tuple(range(9))            # softmax: the sinks v are not trained


def test_head_loss_and_rhs_are_the_reduced_flow(heads):
    st = HeadState.make([[0.3, -0.1], [0.2, 0.4]], [[0.2, 0.05], [0.05, 0.1]], [0.1, -0.2])
    flow = ReducedFlow(MultiHeadModel(2, 3, 2, "softmax"), flipping_spike(4.0, 1.5), n=N_HEAD)
    mean, se = flow.loss(st)
    assert heads.loss(st.pack()) == (float(mean), float(se)) and se > 0
    assert np.array_equal(heads.rhs(st.pack()), flow.rhs(st.pack()))


def test_head_derivatives_agree_with_each_other(heads):
    """dm/dτ = −∂L/∂m on the common random numbers (numerics.multihead): the m-block of the
    Jacobian is minus that of the loss Hessian, and dm/dτ is minus the loss's m-gradient."""
    st = HeadState.make([[0.3, -0.1], [0.2, 0.4]], [[0.2, 0.05], [0.05, 0.1]], [0.1, -0.2])
    y = st.pack()
    J, H = heads.jacobian(y), heads.hessian(y)
    assert np.allclose(J[:4, :4], -H[:4, :4], atol=1e-5)
    grad_m = _central(lambda z: heads._crn_loss(z), y, h=1e-5)[:4]
    assert np.allclose(heads.rhs(y)[:4], -grad_m, atol=1e-7)
    assert np.allclose(J, _central(heads.rhs, y, h=1e-4), atol=1e-6)


def test_head_hessian_at_the_saddle_is_lemma_III1():
    """At m = r = b = 0 the loss Hessian in m equals the symbolic saddle Hessian at the prior's
    moments (Lemma III.1) up to the quasi-Monte Carlo error; r-entries there are NaN (kink)."""
    prior = flipping_spike(4.0, 1.5)
    rm = HeadReduced(MultiHeadModel(2, 3, 2, "softmax"), prior, n=2**12)
    H = rm.hessian(np.zeros(11))
    Hm, _, mu, S = saddle_hessian(rm.model)
    assert np.allclose(H[:4, :4], at_prior(Hm, prior, mu, S), atol=5e-3)
    assert np.isnan(H[4, 4])


def test_head_check_state_names_the_coordinate(heads):
    y = heads.default_state()
    bad = y.copy()
    bad[4] = -0.1                                       # r[0,0]
    with pytest.raises(ValueError, match=r"r\[0,0\]=-0.1 is out of range; allowed: ≥ 0"):
        heads.check_state(bad)
    bad = y.copy()
    bad[4], bad[5], bad[6] = 0.1, 0.5, 0.1              # |r[0,1]| > √(r00 r11)
    with pytest.raises(ValueError, match=r"r\[0,1\]=0.5 is out of range"):
        heads.check_state(bad)
    bad = y.copy()
    bad[0] = np.inf
    with pytest.raises(ValueError, match=r"m\[0,0\]=inf is not finite"):
        heads.check_state(bad)


def test_head_saddle_equations_cover_sinks_user_activations_and_outputs():
    """softmax-v at v = 0 has softmax-1's Hessian; a user's tempered softmax and ŷ = Σ_h get
    theirs from their own loss (exp(2s): 4× softmax's; ŷ = Σ_h: another quadratic form)."""
    sv = HeadReduced(MultiHeadModel(1, 2, 1, "softmax-v")).saddle_equations()[0].rhs
    s1 = HeadReduced(MultiHeadModel(1, 2, 1, "softmax-1")).saddle_equations()[0].rhs
    assert sv == s1
    tempered = Activation("softmax-T2", lambda s, v: [[sp.exp(2 * x) / sum(sp.exp(2 * y) for y in row)
                                                        for x in row] for row in s])
    t2 = HeadReduced(MultiHeadModel(2, 3, 1, tempered)).saddle_equations()[0].rhs
    soft = HeadReduced(MultiHeadModel(2, 3, 1, "softmax")).saddle_equations()[0].rhs
    assert sp.simplify(t2 - 4 * soft) == sp.zeros(2, 2)
    summed = HeadReduced(MultiHeadModel(2, 3, 1, "softmax", output="sum")).saddle_equations()[0].rhs
    assert summed == summed.T and sp.simplify(summed - soft) != sp.zeros(2, 2)


def test_symbolic_head_model_without_a_prior():
    rm = reduced(MultiHeadModel(1, 2, 1, "softmax-v"))
    assert r"\phi" in rm.latex()
    with pytest.raises(ValueError, match="no prior"):
        rm.loss(rm.default_state())


def test_factory_rejects_what_it_cannot_reduce():
    with pytest.raises(TypeError, match="cannot reduce a int"):
        reduced(3)
    with pytest.raises(ValueError, match="not found"):
        reduced("nomodel")


def test_paper_model_does_not_hide_a_missing_import_inside_a_model(monkeypatch):
    import importlib

    import pytest as _pytest

    from numerics.reduced import registry

    def broken(name):
        raise ModuleNotFoundError("No module named 'missing_dep'", name="missing_dep")
    monkeypatch.setattr(importlib, "import_module", broken)
    with _pytest.raises(ModuleNotFoundError, match="missing_dep"):
        registry.paper_model("my_variant")

    def absent(name):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    monkeypatch.setattr(importlib, "import_module", absent)
    with _pytest.raises(ValueError, match="not found"):
        registry.paper_model("my_variant")


def test_restrict_by_name_or_by_any_symbol_of_that_name_and_raise_on_unknown(marion):
    """Issue 14: the model's symbols are real=True, so Symbol('theta') used to be ignored."""
    import sympy as sp

    from theory import derive
    from theory.models import marion2025 as mm
    plain = {sp.Symbol(n): 0 for n in ("theta", "eta", "rho")}
    for fixed in (plain, {"theta": 0, "eta": 0, "rho": 0}, mm.MANIFOLD):
        assert marion.restrict(fixed).state_names == ("kappa", "nu")
        der = derive(mm.MODEL).restrict(fixed)
        assert [q.name for q in der.state] == ["kappa", "nu"]
        assert [q.name for q in der.flow.restrict({"nu": 0}).state] == ["kappa"]
    with pytest.raises(ValueError, match=r"cannot fix 'zeta'"):
        marion.restrict({"zeta": 0})
    with pytest.raises(ValueError, match=r"unknown symbol\(s\) \['zeta'\]; allowed"):
        derive(mm.MODEL).restrict({sp.Symbol("zeta"): 0})
    with pytest.raises(ValueError, match=r"\['kapa'\] \(did you mean 'kappa' \(κ\)\?\)"):
        derive(mm.MODEL).flow.restrict({"kapa": 0})


def test_latex_prints_greek_letters_for_the_ascii_spellings(marion):
    tex = marion._repr_latex_()
    assert r"\lambda" in tex and r"\varepsilon" in tex and r"\gamma" in tex
    assert "lam " not in tex and "eps" not in tex.replace(r"\varepsilon", "")
    from theory import derive
    from theory.models import marion2025 as mm
    assert r"\lambda" in derive(mm.MODEL).latex()["risk"]
