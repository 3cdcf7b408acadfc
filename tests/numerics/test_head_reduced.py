"""The multi-head reduced model (numerics.reduced.HeadReduced): the methods the Sagitova claims
use, each against the ReducedFlow it wraps (same draws, so equal to the last bit)."""

import numpy as np
import pytest

from numerics.multihead import HeadState, ReducedFlow, head_state_names, mean_and_se
from numerics.reduced import HeadReduced
from theory.models.sagitova2026 import GaussianPrior, flipping_spike
from theory.multihead import MultiHeadModel

MODEL = MultiHeadModel(2, 3, 2, "softmax-v")
PRIOR = flipping_spike(1.0, 2.0)
STATE = HeadState.make([[0.3, -0.1], [0.2, 0.4]], [[0.2, 0.05], [0.05, 0.1]], [0.1, -0.2], [0.3, 0.0])


def test_state_names_are_the_bracket_names_of_the_packed_state():
    rm = HeadReduced(MODEL)
    assert rm.state_names == head_state_names(2, 2)
    assert rm.state_names[:5] == ("m[0,0]", "m[0,1]", "m[1,0]", "m[1,1]", "r[0,0]")
    assert rm.as_dict(STATE)["r[0,1]"] == 0.05 and rm.as_dict(STATE)["v[0]"] == 0.3


@pytest.mark.parametrize("kind", ["sobol", "random"])
def test_loss_rhs_and_per_draw_rhs_are_the_flows_for_a_headstate_or_a_packed_state(kind):
    rm = HeadReduced(MODEL, PRIOR, n=256, seed=3, sgd_noise=0.2, kind=kind)
    flow = ReducedFlow(MODEL, PRIOR, n=256, seed=3, sgd_noise=0.2, kind=kind)
    assert rm.params["kind"] == kind
    mean, se = flow.loss(STATE)
    assert rm.loss(STATE) == rm.loss(STATE.pack()) == (float(mean), float(se))
    assert np.array_equal(rm.rhs(STATE), flow.derivative(STATE).pack())
    draws = rm.rhs_draws(STATE)
    assert np.array_equal(draws, flow.derivative_draws(STATE)) and draws.shape == (256, 11)
    est, err = mean_and_se(draws)
    assert np.allclose(est, rm.rhs(STATE), atol=1e-12) and np.all(err > 0)
    with pytest.raises(ValueError, match="shape"):
        rm.loss(HeadState.make(np.zeros((3, 2))))


def test_with_noise_keeps_the_draws_and_changes_only_the_r_equation():
    rm = HeadReduced(MODEL, PRIOR, n=256, seed=1)
    noisy = rm.with_noise(0.5)
    assert noisy.params["sgd_noise"] == 0.5 and rm.params["sgd_noise"] == 0.0
    assert noisy.flow.draws is rm.flow.draws
    assert np.array_equal(noisy.rhs(STATE), ReducedFlow(MODEL, PRIOR, n=256, seed=1,
                                                        sgd_noise=0.5).rhs(STATE.pack()))
    a, b = rm.rhs(STATE), noisy.rhs(STATE)
    r = slice(4, 7)
    assert np.array_equal(np.delete(a, np.r_[r]), np.delete(b, np.r_[r])) and not np.allclose(a[r], b[r])
    with pytest.raises(ValueError, match="sgd_noise"):
        rm.with_noise(-1.0)


def test_integrate_and_states_follow_the_flows_integrate():
    prior = GaussianPrior([0.0, 0.0], np.diag([4.0, 1.5]))
    model = MultiHeadModel(2, 3, 2)
    rm = HeadReduced(model, prior, n=256, seed=1)
    s0 = HeadState.make([[0.02, -0.01], [0.01, 0.015]], 1e-4 * np.eye(2))
    t = np.linspace(0, 60.0, 121)

    def escaped(state):
        return bool(np.linalg.norm(state.m) >= 0.3)
    tr = rm.integrate(s0, t, rtol=1e-6, atol=1e-12, chunk=10,
                      reached=lambda t, y: escaped(rm.unpack(y)))
    old = ReducedFlow(model, prior, n=256, seed=1).integrate(s0, t, rtol=1e-6, atol=1e-12, chunk=10,
                                                            reached=lambda t, s: escaped(s))
    assert tr.status == "event" and np.array_equal(tr.t, old.t) and np.array_equal(tr.y, old.y)
    assert tr.names == rm.state_names
    states = rm.states(tr)
    assert len(states) == len(tr.t) and escaped(states[-1]) and not escaped(states[-2])
    assert np.array_equal(states[3].pack(), tr.y[3])


def test_one_prior_check_for_every_multihead_consumer():
    from numerics.multihead import reduced_loss
    from numerics.sgd import SimulationConfig, simulate
    wrong = GaussianPrior([0.0], [[1.0]])
    assert MODEL.check_prior(PRIOR) is PRIOR
    for build in (lambda: HeadReduced(MODEL, wrong), lambda: ReducedFlow(MODEL, wrong, n=64),
                  lambda: reduced_loss(MODEL, STATE, wrong, 64, 0),
                  lambda: simulate(MODEL, {"D": 8, "prior": wrong},
                                   SimulationConfig(lr=0.1, steps=1, seeds=1))):
        with pytest.raises(ValueError, match=r"prior has F=1 features, the model F=2"):
            build()
