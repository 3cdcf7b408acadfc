"""Engine helpers taken out of the claims: the frame-coordinate flow, PGD on coordinates,
``numerics.ode.integrate``'s fallback and budget, exact root finding and root refinement."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from numerics.frame import compile_frame_flow
from numerics.ode import integrate
from numerics.pgd import PGDResult, project_gradient, projected_gradient_descent
from theory.dynamics import overlap_flow
from theory.frame import frame_flow
from theory.model import Model, Vector
from theory.models import dohmatob2025 as dm
from theory.stationary import factor_roots, factors, refine_root, roots_1d

DOHMATOB_VALUES = {dm.alpha: sp.Rational(1, 10), dm.beta: 1, dm.gamma: sp.Rational(3, 5), dm.d: 10}


def _free_geometry():
    """Two hidden vectors, one free and one sphere vector (a free vector's norm is an overlap)."""
    a, b, n, c, f, e = sp.symbols("a b n c f e", real=True)
    model = Model(name="test-free", hidden=("h1", "h2"),
                  trainable=(Vector("w", "free"), Vector("u", "sphere")),
                  overlaps={("w", "h1"): a, ("w", "h2"): b, ("w", "w"): n, ("u", "h1"): c,
                            ("u", "h2"): f, ("u", "w"): e},
                  params=(), data=None, student=sp.S.Zero, label=sp.S.Zero)
    risk = (a - 1) ** 2 + b**2 * c + sp.exp(e) * n / 4 + (n - 1) ** 2 + c * a**3 + f * e
    return model, risk


def _random_state(flow, rng):
    y = rng.standard_normal(len(flow.state))
    for _, lo, hi, constraint in flow.blocks:
        if constraint == "sphere":
            y[lo:hi] /= np.linalg.norm(y[lo:hi])
    return y


CASES = {
    "dohmatob-linear": lambda: (dm.OVERLAP_STRUCTURE, dm.paper_risk("linear"), DOHMATOB_VALUES),
    "dohmatob-quadratic": lambda: (dm.OVERLAP_STRUCTURE, dm.paper_risk("quadratic"), DOHMATOB_VALUES),
    "free-vector": lambda: (*_free_geometry(), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_frame_flow_maps_to_the_symbolic_overlap_flow(case):
    """Chain rule: d/dt q(y) = Σ ∂q/∂y·ẏ along the frame flow equals the Gram-matrix overlap
    flow at q(y), at random realisable points."""
    geometry, risk, values = CASES[case]()
    flow = frame_flow(geometry, risk, values)
    R = sp.sympify(risk).subs(values) if values else risk
    reference = overlap_flow(geometry, R)
    rates = flow.overlap_rates()
    rng = np.random.default_rng(3)
    for _ in range(3):
        y = _random_state(flow, rng)
        at_y = dict(zip(flow.state, y))
        q = {s: float(e.subs(at_y)) for s, e in flow.overlap_expressions.items()}
        for s, rhs in zip(reference.state, reference.rhs):
            got, want = float(rates[s].subs(at_y)), float(rhs.subs(q))
            assert abs(got - want) <= 1e-10 * max(1.0, abs(want)), (case, s, got, want)


def test_frame_flow_coordinates_follow_the_frame():
    flow = frame_flow(dm.OVERLAP_STRUCTURE, dm.paper_risk("linear"), DOHMATOB_VALUES)
    u = sp.symbols("u1:5", real=True)
    v = sp.symbols("v1:5", real=True)
    assert flow.state == u + v
    ex = flow.overlap_expressions
    assert (ex[dm.mu], ex[dm.eta], ex[dm.zeta], ex[dm.nu]) == (u[0], u[1], v[0], v[1])
    assert sp.expand(ex[dm.rho] - sum(a * b for a, b in zip(u, v))) == 0
    assert flow.blocks == (("u", 0, 4, "sphere"), ("v", 4, 8, "sphere"))
    with pytest.raises(ValueError, match="free symbols"):
        compile_frame_flow(frame_flow(dm.OVERLAP_STRUCTURE, dm.paper_risk("linear")))


def test_compiled_frame_flow_matches_sympy():
    geometry, risk = _free_geometry()
    flow = frame_flow(geometry, risk)
    cf = compile_frame_flow(flow)
    rng = np.random.default_rng(1)
    Y = np.stack([_random_state(flow, rng) for _ in range(4)])
    ref = {k: sp.lambdify(flow.state, e, "numpy") for k, e in
           {"rhs": list(flow.rhs), "jac": flow.jacobian(), "risk": flow.risk,
            "grad": list(flow.gradient()), "hess": flow.hessian()}.items()}
    for y in Y:
        np.testing.assert_allclose(cf.rhs(y), ref["rhs"](*y), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(cf.jacobian(y), ref["jac"](*y), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(cf.risk(Y), [ref["risk"](*y) for y in Y], rtol=1e-12)
    np.testing.assert_allclose(cf.gradient(Y), [ref["grad"](*y) for y in Y], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(cf.hessian(Y), [ref["hess"](*y) for y in Y], rtol=1e-12, atol=1e-13)
    ov = cf.overlaps(Y[0])
    w, u = Y[0][:4], Y[0][4:]
    assert ov == pytest.approx({"a": w[0], "b": w[1], "n": w @ w, "c": u[0], "f": u[1], "e": u @ w},
                               rel=1e-14)


# --- PGD ------------------------------------------------------------------------------------
def _pgd_case():
    risk = (dm.mu - 0.7) ** 2 + dm.nu * dm.rho + 2 * dm.zeta**2 + sp.exp(dm.eta) * dm.mu
    return compile_frame_flow(frame_flow(dm.OVERLAP_STRUCTURE, risk))


def _start(rng, runs=5):
    mu0, nu0 = rng.uniform(-0.95, 0.95, runs), rng.uniform(-0.95, 0.95, runs)
    Y = np.zeros((runs, 8))
    Y[:, 0], Y[:, 2], Y[:, 5], Y[:, 7] = mu0, np.sqrt(1 - mu0**2), nu0, np.sqrt(1 - nu0**2)
    Y[:, 1], Y[:, 4] = 0.1, -0.2          # off M
    Y[:, :4] /= np.linalg.norm(Y[:, :4], axis=1, keepdims=True)
    Y[:, 4:] /= np.linalg.norm(Y[:, 4:], axis=1, keepdims=True)
    return Y


def _reference_loop(fR, fg, Y, s, n_steps, L_delta):
    """The hand-written loop the descent-lemma claim used before PGD became an engine function."""
    def projected(Y):
        g = fg(Y)
        u, v = Y[:, :4], Y[:, 4:]
        a = g[:, :4] - (g[:, :4] * u).sum(1, keepdims=True) * u
        b = g[:, 4:] - (g[:, 4:] * v).sum(1, keepdims=True) * v
        return np.concatenate([a, b], 1)

    r_prev = fR(Y)
    worst = np.zeros(len(Y))
    bound_ok = np.ones(len(Y), bool)
    g = projected(Y)
    for _ in range(n_steps):
        Z = Y - s * g
        Z[:, :4] /= np.linalg.norm(Z[:, :4], axis=1, keepdims=True)
        Z[:, 4:] /= np.linalg.norm(Z[:, 4:], axis=1, keepdims=True)
        r_new = fR(Z)
        worst = np.maximum(worst, (r_new - r_prev) / np.maximum(np.abs(r_prev), 1e-300))
        bound_ok &= r_new <= r_prev - s * L_delta / 4 * (g**2).sum(1) + 1e-15 * np.abs(r_prev)
        Y, r_prev = Z, r_new
        g = projected(Y)
    return Y, r_prev, g, worst, bound_ok


@pytest.mark.parametrize("step", [0.02, 3.0])
def test_pgd_matches_the_claims_former_loop_bit_for_bit(step):
    cf = _pgd_case()
    Y0 = _start(np.random.default_rng(0))
    L_delta = 5.0
    run = projected_gradient_descent(cf.risk, cf.gradient, Y0, step, 300, cf.blocks)
    Y, r, g, worst, bound_ok = _reference_loop(cf.risk, cf.gradient, Y0.copy(), step, 300, L_delta)
    np.testing.assert_array_equal(run.y, Y)
    np.testing.assert_array_equal(run.risk[-1], r)
    np.testing.assert_array_equal(run.gradient, g)
    np.testing.assert_array_equal(run.largest_relative_increase(), worst)
    held = np.all(run.risk[1:] <= run.risk[:-1] - step * L_delta / 4 * run.gradient_sq[:-1]
                  + 1e-15 * np.abs(run.risk[:-1]), axis=0)
    np.testing.assert_array_equal(held, bound_ok)


def test_pgd_decreases_the_risk_at_a_small_step_and_stays_on_the_spheres():
    cf = _pgd_case()
    run = projected_gradient_descent(cf.risk, cf.gradient, _start(np.random.default_rng(2)), 0.01,
                                     500, cf.blocks)
    assert isinstance(run, PGDResult) and run.risk.shape == (501, 5) and run.increases.shape == (500, 5)
    assert np.all(run.increases <= 1e-15 * np.abs(run.risk[:-1]))
    assert np.all(run.risk[-1] < run.risk[0])
    np.testing.assert_allclose(np.linalg.norm(run.y[:, :4], axis=1), 1, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(run.y[:, 4:], axis=1), 1, atol=1e-14)
    # a free block is not projected
    g = np.ones((1, 3))
    np.testing.assert_array_equal(project_gradient(g, np.array([[1.0, 0, 0]]), [(0, 3, "free")]), g)


def test_pgd_rejects_bad_arguments():
    cf = _pgd_case()
    Y0 = _start(np.random.default_rng(0))
    with pytest.raises(ValueError, match="step"):
        projected_gradient_descent(cf.risk, cf.gradient, Y0, 0.0, 10, cf.blocks)
    with pytest.raises(ValueError, match="n_steps"):
        projected_gradient_descent(cf.risk, cf.gradient, Y0, 0.1, -1, cf.blocks)
    with pytest.raises(ValueError, match="unit norm"):
        projected_gradient_descent(cf.risk, cf.gradient, 2 * Y0, 0.1, 10, cf.blocks)
    with pytest.raises(ValueError, match="constraint"):
        projected_gradient_descent(cf.risk, cf.gradient, Y0, 0.1, 10, [(0, 8, "ball")])


# --- integrate ------------------------------------------------------------------------------
def test_integrate_falls_back_when_a_method_exceeds_its_budget():
    """y' = −10⁵·y is stiff: RK45 exceeds 10⁴ evaluations, Radau (with the Jacobian) finishes."""
    rhs = lambda y: -1e5 * y
    jac = lambda y: np.array([[-1e5]])
    tr = integrate(rhs, [1.0], [0, 1e-3, 1.0], jac=jac, method="RK45", fallback=("Radau",),
                   max_nfev=10_000)
    assert tr.ok and tr.status == "completed" and tr.method == "Radau"
    assert tr.tried == ("RK45", "Radau") and tr.nfev <= 10_000
    assert abs(tr.final[0]) < 1e-8


def test_integrate_reports_budget_and_nonfinite_instead_of_raising():
    tr = integrate(lambda y: -1e5 * y, [1.0], [0, 1.0], method="RK45", fallback=("RK23",),
                   max_nfev=500)
    assert tr.status == "max_steps" and not tr.ok and tr.tried == ("RK45", "RK23")
    assert "500" in tr.message
    with np.errstate(over="ignore", invalid="ignore"):   # y' = y² blows up at t = 1
        blow_up = integrate(lambda y: y**2, [1.0], np.linspace(0, 2, 21), method="rk4", dt=0.01)
    assert blow_up.status == "nonfinite" and not blow_up.ok
    assert np.all(np.isfinite(blow_up.y)) and blow_up.t[-1] < 1.5
    with pytest.raises(ValueError, match="max_nfev"):
        integrate(lambda y: -y, [1.0], [0, 1], max_nfev=0)


def test_integrate_falls_back_after_a_nonfinite_state():
    """RK4 at too large a step diverges on a stiff decay (state → inf); the fallback Radau
    integrates it. Before, integrate returned the non-finite attempt without trying it."""
    with np.errstate(over="ignore", invalid="ignore"):
        tr = integrate(lambda y: -1e4 * y, [1.0], np.linspace(0, 1, 11), method="rk4", dt=0.01,
                       fallback=("Radau",), jac=lambda y: np.array([[-1e4]]))
    assert tr.ok and tr.tried == ("rk4", "Radau") and abs(tr.final[0]) < 1e-8


def test_rk4_restarted_per_chunk_is_the_same_loop():
    """RK4 lands exactly on each output time, so restarting it per chunk changes no number."""
    A = np.array([[0.0, 1.0], [-1.0, 0.0]])
    t = np.linspace(0, 3, 7)
    a = integrate(lambda y: A @ y, [1.0, 0.0], t, method="rk4", dt=0.01)
    b = integrate(lambda y: A @ y, [1.0, 0.0], t, method="rk4", dt=0.01, chunk=2)
    np.testing.assert_array_equal(a.y, b.y)


# --- exact root finding and refinement ------------------------------------------------------
def test_roots_1d_finds_simple_and_double_roots():
    x = sp.Symbol("x", real=True)
    f = x**2 * (x - sp.Rational(1, 3)) * (x + sp.Rational(5, 7))
    roots = roots_1d(f, x, -1, 1, dps=50, grid=2000)
    assert len(roots) == 3
    with mpmath.workdps(50):
        expected = [mpmath.mpf(-5) / 7, 0, mpmath.mpf(1) / 3]
        assert all(abs(r - e) < mpmath.mpf(10) ** -40 for r, e in zip(roots, expected))
    with pytest.raises(ValueError, match="lo < hi"):
        roots_1d(f, x, 1, -1)


def test_factor_roots_solves_each_factor():
    x = sp.Symbol("x", real=True)
    expr = (sp.exp(x) - 2) * (x - sp.Rational(1, 2)) / (x + 2)
    fs, den = factors(expr)
    assert len(fs) == 2 and sp.simplify(den / (x + 2)).is_number
    roots = sorted(float(r) for r in factor_roots(expr, x, -1, 1))
    assert roots == pytest.approx([0.5, np.log(2)], abs=1e-15)


def test_refine_root_reaches_1e_30_and_reports_failure():
    x, y = sp.symbols("x y", real=True)
    root = refine_root([x**2 + y**2 - 2, x - y**3], [x, y], [1.1, 0.9], dps=40, tol=1e-30)
    assert root.converged and root.residual < 1e-30
    with mpmath.workdps(40):
        assert abs(root.x[0] - 1) < mpmath.mpf(10) ** -30 and abs(root.x[1] - 1) < mpmath.mpf(10) ** -30
    bad = refine_root([x**2 + 1], [x], [0.5])          # no real root: Newton cannot converge
    assert not bad.converged and np.isnan(bad.residual) and bad.message
    with pytest.raises(ValueError, match="agree"):
        refine_root([x], [x, y], [0.0, 0.0])


def test_frame_flow_keeps_vectors_on_the_sphere():
    """On the unit spheres the norm-restoring flow equals −(I − wwᵀ)g; off them it pulls the
    norm back, d‖w‖²/dt = −2‖w‖²(‖w‖² − 1), where the plain flow has 2(wᵀg)(‖w‖² − 1)."""
    kept = compile_frame_flow(frame_flow(dm.OVERLAP_STRUCTURE, dm.paper_risk("linear"), DOHMATOB_VALUES))
    plain = compile_frame_flow(frame_flow(dm.OVERLAP_STRUCTURE, dm.paper_risk("linear"), DOHMATOB_VALUES,
                                          keep_on_sphere=False))
    rng = np.random.default_rng(5)
    for _ in range(3):
        y = rng.standard_normal(8)
        y[:4] /= np.linalg.norm(y[:4])
        y[4:] /= np.linalg.norm(y[4:])
        np.testing.assert_allclose(kept.rhs(y), plain.rhs(y), rtol=1e-10, atol=1e-12)
        off = y * np.repeat([1.01, 0.98], 4)
        f = kept.rhs(off)
        for a, b in ((0, 4), (4, 8)):
            n2 = off[a:b] @ off[a:b]
            assert 2 * off[a:b] @ f[a:b] == pytest.approx(-2 * n2 * (n2 - 1), rel=1e-9, abs=1e-12)


def test_project_gradient_is_independent_of_block_order_and_rejects_overlaps():
    from numerics.pgd import project_gradient, projected_gradient_descent
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((3, 8))
    g = rng.standard_normal((3, 8))
    a = project_gradient(g, Y, [(0, 4, "sphere"), (4, 8, "free")])
    b = project_gradient(g, Y, [(4, 8, "free"), (0, 4, "sphere")])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[:, 4:], g[:, 4:])
    with pytest.raises(ValueError, match="overlaps"):
        projected_gradient_descent(lambda Y: (Y**2).sum(1), lambda Y: 2 * Y, Y[:1], 0.1, 2,
                                   [(0, 4, "sphere"), (2, 6, "sphere")])
