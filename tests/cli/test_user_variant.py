"""Acceptance (issue 11): a multi-head model with a NEW activation, written in a file outside
the package, gets the reduced flow, the symbolic saddle Hessian and both SGD simulators with
no engine change. The variant is a tempered softmax A_h = softmax(2 s_h), so every result has
an independent check through softmax at doubled logits."""

import importlib.util

import numpy as np
import sympy as sp

from numerics.multihead import HeadState, ReducedFlow, mean_and_se
from theory.models.sagitova2026 import at_prior
from theory.multihead import MultiHeadModel, saddle_hessian

VARIANT = '''
"""A user's variant: softmax at temperature 1/2."""
import sympy as sp

from theory.models.sagitova2026 import GaussianPrior
from theory.multihead import Activation, MultiHeadModel


def tempered(s, v):
    return [[sp.exp(2 * x) / sum(sp.exp(2 * y) for y in row) for x in row] for row in s]


SOFTMAX_T2 = Activation("softmax-T2", tempered, shift_invariance="head")
MODEL = MultiHeadModel(2, 3, 2, SOFTMAX_T2)
PRIOR = GaussianPrior([0.3, 0.0], [[2.0, 0.0], [0.0, 0.7]])
'''


def _load_variant(tmp_path):
    path = tmp_path / "my_variant.py"
    path.write_text(VARIANT)
    spec = importlib.util.spec_from_file_location("my_variant", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_new_activation_from_a_file_outside_the_package(tmp_path):
    var = _load_variant(tmp_path)
    md, prior = var.MODEL, var.PRIOR
    assert md.activation.name == "softmax-T2"
    softmax = MultiHeadModel(md.H, md.L, md.F, "softmax")
    rng = np.random.default_rng(0)

    # reduced flow: tempered at (m, r, b) is softmax at (2m, 4r, 2b), so dm_T = 2·dm_S
    A = rng.normal(0, 0.2, (2, 2))
    st = HeadState.make(rng.normal(0, 0.3, (2, 2)), A @ A.T, rng.normal(0, 0.2, 2))
    d = ReducedFlow(md, prior, n=512, seed=3).derivative(st)
    assert all(np.all(np.isfinite(getattr(d, k))) for k in ("m", "r", "b", "v"))
    doubled = HeadState.make(2 * st.m, 4 * st.r, 2 * st.b)
    d_s = ReducedFlow(softmax, prior, n=512, seed=3).derivative(doubled)
    assert np.allclose(d.m, 2 * d_s.m, rtol=1e-9, atol=1e-12)

    # symbolic saddle Hessian: symmetric, 4× softmax's (second derivative of softmax(2s)),
    # and minus the m-Jacobian of the Monte Carlo flow at m = 0 (central differences)
    Hm, ms, mu, S = saddle_hessian(md)
    assert Hm == Hm.T and len(ms) == md.H * md.F
    assert sp.simplify(Hm - 4 * saddle_hessian(softmax)[0]) == sp.zeros(4, 4)
    Hn = at_prior(Hm, prior, mu, S)
    fl = ReducedFlow(md, prior, n=2**13, seed=1, kind="random")
    eps = 1e-4
    for j in range(md.H * md.F):
        e = np.zeros((md.H, md.F))
        e.flat[j] = eps
        up, down = (fl.derivative_draws(HeadState.make(x))[:, :md.H * md.F] for x in (e, -e))
        col, se = mean_and_se((up - down) / (2 * eps))
        assert np.all(np.abs(col + Hn[:, j]) <= 5 * se + 1e-6), (j, col, -Hn[:, j], se)

    # both SGD simulators (direct in R^D and Gram matrix)
    from numerics.sgd import SimulationConfig, simulate
    cfg = SimulationConfig(lr=0.01, steps=20, seeds=2, record_every=10, device="cpu")
    for method in ("direct", "gram"):
        res = simulate(md, {"D": 50, "prior": prior}, cfg, method)
        assert len(res.t) == 3 and np.all(np.isfinite(res["m"])) and np.all(np.isfinite(res["r"]))
