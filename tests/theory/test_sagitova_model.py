"""Sagitova et al.'s model declarations (``theory.models.sagitova2026``): B-softmax with
``bsoftmax_bayes_parameters`` is the Bayes posterior for any discrete prior, and a Gaussian
prior's evidence is its Monte Carlo estimate, a singular covariance included. (The claims:
tests/claims/test_sagitova2026_sec3.py and _sec4.py.)"""

import numpy as np
from hypothesis import given, settings, strategies as st

from numerics.multihead import bayes_posterior, draw, token_weights
from theory.models.sagitova2026 import DiscretePrior, GaussianPrior, bsoftmax_bayes_parameters
from theory.multihead import MultiHeadModel


@settings(max_examples=20, deadline=None)
@given(S=st.integers(1, 5), F=st.integers(1, 3), L=st.integers(2, 6), seed=st.integers(0, 2**31))
def test_bsoftmax_equals_posterior_for_random_discrete_priors(S, F, L, seed):
    rng = np.random.default_rng(seed)
    prior = DiscretePrior(rng.standard_normal((S, F)) * 2, rng.dirichlet(np.ones(S)))
    att = bsoftmax_bayes_parameters(prior)
    _, chi, _ = draw(prior, L, 200, seed)
    w = token_weights(MultiHeadModel(S, L, F, "b-softmax"), att, chi)
    assert np.allclose(w, bayes_posterior(prior, chi), atol=1e-12)


def test_gaussian_evidence_matches_monte_carlo_including_a_singular_covariance():
    rng = np.random.default_rng(0)
    for prior in (GaussianPrior([0.5, -0.2], [[1.5, 0.3], [0.3, 0.4]]),
                  GaussianPrior([0.0, 0.0], np.diag([2.0, 0.0]))):
        chi = rng.standard_normal((4, 2))
        th = prior.sample(400_000, rng)
        mc = np.log(np.exp(chi @ th.T - 0.5 * (th**2).sum(1)).mean(1))
        assert np.allclose(prior.log_evidence(chi), mc, atol=0.02)
