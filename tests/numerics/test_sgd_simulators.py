"""The token-sum Monte Carlo SGD simulators through the one calling convention
``simulate(model, params, config, method)`` (``numerics.sgd``, direct and Gram-matrix):
reproducible, seeds independent, the configuration checked, the result named on the flow's time
axis, the test loss the risk in law, and the mean of batched SGD on its ODE."""

import numpy as np
import pytest
import torch

from numerics import SimulationConfig, compiled, simulate
from theory.models.marion2025 import MODEL
from tests.helpers import compiled_flow

P = dict(d=64, L=3, lam=0.7, gamma=0.8, eps=0.3)
INIT = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)


def test_sgd_is_reproducible_and_seeds_are_independent():
    cfg = SimulationConfig(lr=0.01, steps=20, seeds=4, record_every=10, init=INIT, device="cpu")
    a, b = simulate(MODEL, P, cfg), simulate(MODEL, P, cfg)
    np.testing.assert_array_equal(a.stacked(), b.stacked())
    assert np.unique(a.stacked()[-1, :, 0]).size == 4


def test_batched_seeds_equal_the_same_runs_one_by_one_in_law():
    """Seed axis is independent: a 1-seed run has the same law (checked by moments)."""
    cfg = SimulationConfig(lr=0.5 / 64, steps=64, seeds=64, batch=8, record_every=64,
                           init=INIT, device="cpu", seed=1)
    batched = simulate(MODEL, P, cfg).stacked()[-1]
    singles = np.array([simulate(MODEL, P, SimulationConfig(**{**cfg.__dict__, "seeds": 1,
                                                               "seed": 100 + s})).stacked()[-1, 0]
                        for s in range(32)])
    se = np.sqrt(batched.var(0) / 64 + singles.var(0) / 32)
    assert np.all(np.abs(batched.mean(0) - singles.mean(0)) <= 5 * se + 1e-12)


def test_ode_tracks_batched_sgd():
    d = 256
    p = {**P, "d": d}
    lr = 0.5 / d
    steps = int(1.0 / lr)
    cfg = SimulationConfig(lr=lr, steps=steps, seeds=16, batch=16, record_every=steps // 4,
                           init=INIT, device="cpu", seed=2)
    res = simulate(MODEL, p, cfg)
    cm = compiled(MODEL)
    ode = compiled_flow(cm, p, cm.q_vector(INIT), res.t).y
    # finite-d noise drift ∝ lr·d/batch ≈ 0.03 per unit time plus fluctuations
    assert np.max(np.abs(res.mean() - ode)) < 0.06


def test_sgd_config_rejects_bad_input():
    with pytest.raises(ValueError, match="lr"):
        SimulationConfig(lr=-1, steps=1)
    with pytest.raises(ValueError, match="dtype"):
        SimulationConfig(lr=0.1, steps=1, dtype="float16")
    with pytest.raises(ValueError, match="device"):
        simulate(MODEL, P, SimulationConfig(lr=0.1, steps=1, device="tpu"))


def test_sgd_config_is_keyword_only_and_names_the_allowed_range():
    with pytest.raises(TypeError):
        SimulationConfig(0.1, 1)                                      # keywords only
    for bad, match in ((dict(steps=0), r"steps=0; allowed: an integer ≥ 1"),
                       (dict(steps=2.5), r"steps=2.5; allowed"), (dict(batch=0), "batch=0"),
                       (dict(seeds=0), "seeds=0"), (dict(record_every=0), "record_every=0"),
                       (dict(n_test=-1), r"n_test=-1; allowed: an integer ≥ 0"),
                       (dict(seed=-3), "seed=-3"), (dict(lr=float("nan")), "lr=nan"),
                       (dict(device="tpu"), "device='tpu'; allowed")):
        with pytest.raises(ValueError, match=match):
            SimulationConfig(**{"lr": 0.1, "steps": 1, **bad})


@pytest.mark.parametrize("method", ["direct", "gram"])
def test_the_kinds_own_inputs_are_checked_before_the_first_step(method):
    """What only the token-sum kind knows (its parameters, what init may be) is checked by its
    simulator, in one line naming the input and what is allowed."""
    cfg = SimulationConfig(lr=0.1, steps=1, device="cpu")
    with pytest.raises(ValueError, match="init='zeros'; allowed: 'random' or a dict"):
        simulate(MODEL, P, SimulationConfig(lr=0.1, steps=1, init="zeros"), method)
    with pytest.raises(ValueError, match="init=0.3; allowed: 'random' or a dict"):
        simulate(MODEL, P, SimulationConfig(lr=0.1, steps=1, init=0.3), method)
    with pytest.raises(ValueError, match="params=.*allowed: a dict of the model's parameters"):
        simulate(MODEL, [64, 3], cfg, method)
    with pytest.raises(ValueError, match="gamma"):
        simulate(MODEL, {**P, "gamma": float("nan")}, cfg, method)
    with pytest.raises(TypeError, match="config: a dict; allowed: a SimulationConfig"):
        simulate(MODEL, P, {"lr": 0.1, "steps": 1}, method)


def test_result_has_named_order_parameters_on_the_flow_time_axis():
    cfg = SimulationConfig(lr=0.01, steps=25, seeds=3, record_every=10, init=INIT, device="cpu",
                           n_test=10)
    for method in ("direct", "gram"):
        res = simulate(MODEL, P, cfg, method)
        assert res.names == ("kappa", "nu", "theta", "eta", "rho")
        np.testing.assert_allclose(res.t, [0.0, 0.1, 0.2, 0.25])
        assert res["kappa"].shape == (4, 3) and res.loss.shape == (4, 3)
        np.testing.assert_array_equal(res.stacked()[..., 1], res["nu"])
        np.testing.assert_allclose(res.mean("theta"), res["theta"].mean(1))
        np.testing.assert_allclose(res.mean()[:, 2], res.mean("theta"))
        np.testing.assert_allclose(res.stderr("eta"), res["eta"].std(1, ddof=1) / np.sqrt(3))
        assert res["kappa"][0] == pytest.approx([INIT["kappa"]] * 3)
        with pytest.raises(KeyError, match="allowed: kappa"):
            res["m"]
        with pytest.raises(ValueError, match="m, r, b, v"):
            res.head_state(0, 0)


def test_until_stops_the_run_at_the_first_record_where_it_holds():
    cfg = SimulationConfig(lr=0.01, steps=100, seeds=2, record_every=10, init=INIT, device="cpu")
    calls = []

    def until(state):
        calls.append(sorted(state))
        return len(calls) == 3
    res = simulate(MODEL, P, cfg, "gram", until=until)
    assert calls[0] == sorted(res.names) and len(res.t) == 4 and res.t[-1] == pytest.approx(0.3)
    assert res.extras["stopped_early"] and res.extras["steps_done"] == 30


def test_fresh_sample_test_loss_is_the_risk_in_law_for_both_simulators():
    """One test loss (token coordinates in the frame of psd_factor(gram())): at a fixed state its
    mean is the derived risk, for the direct and the Gram simulator alike."""
    cfg = SimulationConfig(lr=1e-12, steps=1, seeds=16, init=INIT, device="cpu", n_test=4000,
                           seed=5)
    cm = compiled(MODEL)
    risk = float(cm.risk(P, cm.q_vector(INIT)))
    for method in ("direct", "gram"):
        est = simulate(MODEL, P, cfg, method).loss[0]
        se = est.std(ddof=1) / np.sqrt(est.size)
        assert abs(est.mean() - risk) < 5 * se, (method, est.mean(), risk, se)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_sgd_on_cuda_matches_cpu_in_law():
    cfg = dict(lr=0.5 / 64, steps=64, seeds=256, batch=8, record_every=64, init=INIT)
    cpu = simulate(MODEL, P, SimulationConfig(**cfg, device="cpu")).stacked()[-1]
    gpu = simulate(MODEL, P, SimulationConfig(**cfg, device="cuda")).stacked()[-1]
    se = np.sqrt(cpu.var(0) / 256 + gpu.var(0) / 256)
    assert np.all(np.abs(cpu.mean(0) - gpu.mean(0)) <= 5 * se + 1e-12)
