"""Sagitova et al. 2026: priors, activations, reduced loss, Bayes side; each encoded claim
refutes a perturbed model."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from numerics.sagitova import bayes_posterior, draw, reduced_loss
from theory.models.sagitova2026 import (Attention, DiscretePrior, GaussianPrior,
                                        bsoftmax_bayes_parameters, flipping_spike)
from verification import Context, get_claim, run_claim

CTX = Context(profile="quick", seed=0)


def verdict(cid, **kw):
    return run_claim(get_claim(cid), CTX, **kw)[0]


@settings(max_examples=20, deadline=None)
@given(S=st.integers(1, 5), F=st.integers(1, 3), L=st.integers(2, 6), seed=st.integers(0, 2**31))
def test_bsoftmax_equals_posterior_for_random_discrete_priors(S, F, L, seed):
    rng = np.random.default_rng(seed)
    prior = DiscretePrior(rng.standard_normal((S, F)) * 2, rng.dirichlet(np.ones(S)))
    att = bsoftmax_bayes_parameters(prior)
    _, chi, _ = draw(prior, L, 200, seed)
    w = att.weights(np.einsum("nlf,hf->nhl", chi, att.m)).mean(-2)
    assert np.allclose(w, bayes_posterior(prior, chi), atol=1e-12)


def test_gaussian_evidence_matches_monte_carlo_including_a_singular_covariance():
    rng = np.random.default_rng(0)
    for prior in (GaussianPrior([0.5, -0.2], [[1.5, 0.3], [0.3, 0.4]]),
                  GaussianPrior([0.0, 0.0], np.diag([2.0, 0.0]))):
        chi = rng.standard_normal((4, 2))
        th = prior.sample(400_000, rng)
        mc = np.log(np.exp(chi @ th.T - 0.5 * (th**2).sum(1)).mean(1))
        assert np.allclose(prior.log_evidence(chi), mc, atol=0.02)


def test_head_permutation_symmetry_of_the_reduced_loss():
    prior = flipping_spike(2.0, 1.0)
    m = np.array([[1.0, 0.5], [-0.3, 1.2], [0.2, -0.8]])
    b = np.array([0.1, -0.2, 0.3])
    draws = draw(prior, 4, 5000, 1, H_max=3)
    for act in ("softmax", "softmax-1", "b-softmax"):
        a = reduced_loss(Attention(m, np.zeros((3, 3)), b=b, activation=act), prior, 4, 5000, 0, draws=draws)[0]
        p = [2, 0, 1]
        c = reduced_loss(Attention(m[p], np.zeros((3, 3)), b=b[p], activation=act), prior, 4, 5000, 0, draws=draws)[0]
        assert abs(a - c) < 1e-12


def test_softmax1_is_softmax_v_at_zero_sink_and_bsoftmax_sums_to_h():
    rng = np.random.default_rng(2)
    s = rng.standard_normal((5, 3, 4))
    a1 = Attention(np.zeros((3, 1)), np.zeros((3, 3)), activation="softmax-1").weights(s)
    av = Attention(np.zeros((3, 1)), np.zeros((3, 3)), v=np.zeros(3), activation="softmax-v").weights(s)
    assert np.allclose(a1, av)
    ab = Attention(np.zeros((3, 1)), np.zeros((3, 3)), activation="b-softmax").weights(s)
    assert np.allclose(ab.sum((-2, -1)), 3)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="probs"):
        DiscretePrior([[1.0], [2.0]], [0.5, 0.6])
    with pytest.raises(ValueError, match="activation"):
        Attention(np.zeros((1, 1)), np.zeros((1, 1)), activation="relu")
    with pytest.raises(ValueError, match="r must"):
        Attention(np.zeros((2, 1)), -np.eye(2))
    with pytest.raises(ValueError, match="L="):
        reduced_loss(Attention(np.zeros((1, 1)), np.zeros((1, 1))), flipping_spike(1, 1), 1, 10, 0)


def test_prop_iv2_refutes_biases_without_the_prior_log_weights():
    assert verdict("sagitova2026:prop-iv2-bsoftmax-bayes")["verdict"] == "confirmed"

    def wrong(prior):
        att = bsoftmax_bayes_parameters(prior)
        return Attention(att.m, att.r, b=-0.5 * (prior.points**2).sum(1), activation="b-softmax")
    assert verdict("sagitova2026:prop-iv2-bsoftmax-bayes", parameters=wrong)["verdict"] == "refuted"


def test_prop_iv1_refutes_a_tempered_posterior():
    assert verdict("sagitova2026:prop-iv1-bayes")["verdict"] == "confirmed"

    def tempered(prior, chi):
        a = 1.3 * prior.log_evidence(chi)
        return np.exp(a - a.max(-1, keepdims=True)) / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)
    entry = verdict("sagitova2026:prop-iv1-bayes", posterior=tempered)
    assert entry["verdict"] == "refuted" and "calibrated" in entry["summary"]


def test_prop_iii1_refutes_a_reduced_loss_that_forgets_the_residual_covariance():
    assert verdict("sagitova2026:prop-iii1-reduced-loss")["verdict"] == "confirmed"

    def wrong(att, *a, **k):
        return reduced_loss(Attention(att.m, 0 * att.r, b=att.b, activation=att.activation), *a, **k)
    assert verdict("sagitova2026:prop-iii1-reduced-loss", reduced=wrong)["verdict"] == "refuted"


def test_saddle_hessian_head_difference_block_is_minus_c_times_the_second_moment():
    import sympy as sp
    from theory.models.sagitova2026 import head_difference_block, saddle_hessian
    Hm, ms, mu, S = saddle_hessian(3, 2, 2)
    assert sp.simplify(head_difference_block(Hm, 2, 2) + sp.Rational(2, 27) * S) == sp.zeros(2, 2)


def test_lemma_iii1_refutes_a_wrong_symbolic_hessian():
    from verification.claims.sagitova2026 import _saddle_block
    B, mu, S = _saddle_block(4, 2, 2)
    assert verdict("sagitova2026:lemma-iii1-saddle-hessian")["verdict"] == "confirmed"
    entry = verdict("sagitova2026:lemma-iii1-saddle-hessian", block=(1.5 * B, mu, S))
    assert entry["verdict"] == "refuted" and "disagrees" in entry["summary"]
