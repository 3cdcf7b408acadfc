"""Projected gradient descent on frame coordinates (``numerics.pgd``) and the compiled frame
flow it descends (``numerics.frame.compile_frame_flow``): the compiled flow is SymPy's, PGD is
the descent-lemma claim's former loop bit for bit, stays on the spheres and checks its
arguments."""

import numpy as np
import pytest
import sympy as sp

from numerics.frame import compile_frame_flow
from numerics.pgd import PGDResult, project_gradient, projected_gradient_descent
from theory.frame import frame_flow
from theory.models import dohmatob2025 as dm
from tests.helpers import free_vector_geometry, random_frame_state


def test_compiled_frame_flow_matches_sympy():
    geometry, risk = free_vector_geometry()
    flow = frame_flow(geometry, risk)
    cf = compile_frame_flow(flow)
    rng = np.random.default_rng(1)
    Y = np.stack([random_frame_state(flow, rng) for _ in range(4)])
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
