"""GPU runs at dimensions a CPU test cannot afford: the direct d-dimensional SGD simulators on
CUDA at d = D = 10^5 against their Gram-matrix counterparts (exact in law at every finite d, cost
independent of d), in law: means and standard deviations of every order parameter at several
records, two-sample z with Bonferroni over all comparisons at α = 10⁻³. Marked ``gpu``."""

import numpy as np
import pytest
import torch

from numerics import SimulationConfig, simulate
from numerics.multihead import HeadState
from theory.models.marion2025 import MODEL
from theory.models.sagitova2026 import flipping_spike
from theory.multihead import MultiHeadModel

from tests.helpers import same_law, sd_var

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

BIG = 10**5
ALPHA = 1e-3


def _token_sum_same_law(a, b, records):
    from scipy.stats import norm
    rows = []
    for k in records:
        qa, qb = a.stacked()[k], b.stacked()[k]
        S = qa.shape[0]
        sd = np.sqrt(qa.var(0) / S + qb.var(0) / S)
        keep = sd > 1e-12
        rows.append(np.abs(qa.mean(0) - qb.mean(0))[keep] / sd[keep])
        sds = np.sqrt(sd_var(qa) + sd_var(qb))
        rows.append(np.abs(qa.std(0) - qb.std(0))[keep] / sds[keep])
    zs = np.concatenate(rows)
    return float(zs.max()), float(norm.isf(ALPHA / (2 * len(zs))))


def test_token_sum_direct_sgd_at_d_1e5_on_cuda_equals_gram_in_law():
    params = dict(d=BIG, L=4, lam=0.7, gamma=0.8, eps=0.3)
    init = dict(kappa=0.3, nu=0.2, theta=0.1, eta=0.05, rho=0.1)
    cfg = dict(lr=0.5 / BIG, steps=2000, seeds=512, batch=1, record_every=500, init=init)
    direct = simulate(MODEL, params, SimulationConfig(**cfg, device="cuda", seed=1))
    gram = simulate(MODEL, params, SimulationConfig(**cfg, device="cuda", seed=2), "gram")
    worst, z = _token_sum_same_law(direct, gram, [1, 2, 4])
    assert worst < z, (worst, z)


def test_multihead_direct_sgd_at_D_1e5_on_cuda_equals_gram_in_law():
    md = MultiHeadModel(2, 3, 2, "softmax-1")
    prior = flipping_spike(1.0, 2.0)
    st = HeadState.make(np.array([[0.4, 0.1], [-0.2, 0.3]]), 0.2 * np.eye(2), [0.1, -0.1],
                        [0.2, 0.0])
    base = dict(lr=0.4 / BIG, steps=2000, batch=1, seeds=512, record_every=500, init=st,
                device="cuda")
    params = {"D": BIG, "prior": prior}
    a = simulate(md, params, SimulationConfig(**base, seed=1))
    b = simulate(md, params, SimulationConfig(**base, seed=2), "gram")
    worst, z = same_law(a, b, [1, 2, 4])
    assert worst < z, (worst, z)
