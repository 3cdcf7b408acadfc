"""What Sec. IV's Bayes claims simulate: B-softmax with Prop. IV.2's parameters against the
Bayes posterior (``iv2_risks``), Prop. IV.1's calibration gap and a panel of estimators' excess
risks (``iv1_losses``), and the wrong parameters and posteriors of their declared mutations.
Every seed comes in the item (derived by the claim from the run seed and the setting)."""

from __future__ import annotations

import numpy as np

from numerics.multihead import (HeadState, bayes_loss, bayes_posterior, draw, reduced_loss,
                                token_weights)
from theory.models.sagitova2026 import GaussianPrior, bsoftmax_bayes_parameters, flipping_spike
from theory.multihead import MultiHeadModel
from ..base import simulation
from .common import random_discrete_prior


# --- Prop. IV.2 ------------------------------------------------------------------------------
@simulation(seeded=False)
def iv2_risks(sim, item):
    """For one random discrete prior (H support points θ_h ~ N(0, signal²·I_F), Dirichlet(1)
    weights, from ``item["prior_seed"]``): the largest pointwise |w_ℓ − P(ε = ℓ | X)| of
    B-softmax with the parameters ``item["parameters"](prior)``, and both risks by Monte Carlo
    with common random numbers (``item["n"]`` draws from ``item["draw_seed"]``): one row."""
    H, F, L, signal, n = (item[k] for k in ("H", "F", "L", "signal", "n"))
    prior = random_discrete_prior(np.random.default_rng(item["prior_seed"]), H, F, scale=signal)
    att = item["parameters"](prior)
    md = MultiHeadModel(att.H, L, F, "b-softmax")
    draws = draw(prior, L, n, seed=item["draw_seed"], H_max=att.H)
    _, chi, g = draws
    gap = float(np.max(np.abs(token_weights(md, att, chi) - bayes_posterior(prior, chi))))
    rb, rb_se, eb = bayes_loss(prior, L, n, 0, draws=draws)
    ra, ra_se, ea = reduced_loss(md, att, prior, n, 0, draws=draws)
    diff = ea - eb
    return {"support_points": H, "F": F, "L": L, "signal": signal, "probs": prior.probs.tolist(),
            "points": prior.points.tolist(), "max_pointwise_difference": gap, "bayes_risk": rb,
            "bayes_risk_se": rb_se, "bsoftmax_risk": ra, "bsoftmax_risk_se": ra_se,
            "paired_difference": float(diff.mean()),
            "paired_difference_se": float(diff.std(ddof=1) / np.sqrt(n))}


def bias_without_log_prior(prior):
    """Mutation (dropped term): b_h = −‖θ_h‖²/2, the log P_θ(θ_h) term dropped."""
    st = bsoftmax_bayes_parameters(prior)
    return HeadState.make(st.m, st.r, st.b - np.log(prior.probs))


def bias_norm_factor(prior, factor=1.1):
    """Mutation (wrong factor): b_h = −1.1·‖θ_h‖²/2 + log P_θ(θ_h)."""
    st = bsoftmax_bayes_parameters(prior)
    return HeadState.make(st.m, st.r, st.b - (factor - 1) * 0.5 * (prior.points**2).sum(1))


def bias_norm_sign(prior):
    """Mutation (sign flip): b_h = +‖θ_h‖²/2 + log P_θ(θ_h)."""
    st = bsoftmax_bayes_parameters(prior)
    return HeadState.make(st.m, st.r, st.b + (prior.points**2).sum(1))


# --- Prop. IV.1 ------------------------------------------------------------------------------
def alternatives(prior, L, rng):
    """Estimators to put against the Bayes one, as (model, state): uniform attention,
    B-softmax and softmax/softmax-1 with random and with prior-informed parameters."""
    F = prior.F
    mean = prior.mean()
    alts = {"uniform": (MultiHeadModel(1, L, F), HeadState.make(np.zeros((1, F))))}
    for H in (1, 2, 4):
        m = rng.standard_normal((H, F)) * 1.5
        for act in ("softmax", "softmax-1", "b-softmax"):
            alts[f"{act}, H={H}, random keys"] = (MultiHeadModel(H, L, F, act), HeadState.make(
                m, 0.1 * np.eye(H), rng.normal(size=H)))
    alts["softmax along Eθ"] = (MultiHeadModel(1, L, F), HeadState.make(mean[None, :] * 1.0))
    alts["softmax-1 along Eθ"] = (MultiHeadModel(1, L, F, "softmax-1"), HeadState.make(mean[None, :]))
    return alts


def tempered_posterior(prior, chi, power=1.3):
    """Mutation: the posterior with its log-evidence multiplied by ``power`` (a wrong factor)."""
    a = power * prior.log_evidence(chi)
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def plugin_posterior(prior, chi):
    """Mutation: the average over θ dropped, the posterior evaluated at the prior mean θ̄
    (P_ℓ ∝ exp(θ̄ᵀχ_ℓ), a plug-in softmax instead of the Bayes mixture)."""
    a = chi @ np.asarray(prior.mean(), float)
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def uniform_posterior(prior, chi):
    """Mutation: P(ε = ℓ | X) = 1/L whatever X (the evidence dropped). It is calibrated exactly
    (both sides equal 1 − 1/L on every draw), so only the optimality leg can see it."""
    return np.full(chi.shape[:2], 1.0 / chi.shape[1])


def iv1_prior(name, signal, rng):
    """The Prop. IV.1 priors with θ scaled by ``signal`` (1: N(0.5·1, diag(2, 0.5)), the
    flipping spike (2, 1), a random 3-point prior with scale 1.5)."""
    if name == "gaussian":
        return GaussianPrior([0.5 * signal, 0.5 * signal], signal**2 * np.diag([2.0, 0.5]))
    if name == "flipping-spike":
        return flipping_spike(2.0 * signal**2, signal**2)
    return random_discrete_prior(rng, 3, 2, scale=1.5 * signal)


@simulation(seeded=False)
def iv1_losses(sim, item):
    """For the prior of this setting (``iv1_prior``; a random one and the panel's random keys
    from ``item["rng_seed"]``, ``item["n"]`` draws from ``item["draw_seed"]``): the calibration
    gap of ``item["posterior"]`` (per-sample Σ_ℓ(1[ε=ℓ] − P_ℓ)² − Σ_ℓ P_ℓ(1 − P_ℓ)) and, for each
    alternative estimator, the paired risk difference with the Bayes estimator on common draws:
    ([calibration row], [optimality rows])."""
    prior_name, L, n = item["prior"], item["L"], item["n"]
    rng = np.random.default_rng(item["rng_seed"])
    prior = iv1_prior(prior_name, item["signal"], rng)
    draws = draw(prior, L, n, seed=item["draw_seed"], H_max=4)
    _, chi, _ = draws
    P = item["posterior"](prior, chi)
    target = np.zeros(L)
    target[0] = 1
    # summed over tokens (the draws put the signal at ℓ = 0; the sum is exchangeable)
    x = ((target - P) ** 2).sum(-1) - (P * (1 - P)).sum(-1)
    eb = ((target - P) ** 2).sum(-1)
    calib = {"prior": prior_name, "mean": float(x.mean()), "se": float(x.std(ddof=1) / np.sqrt(n)),
             "bayes_risk": float(eb.mean())}
    optimality = []
    for alt, (md, att) in alternatives(prior, L, rng).items():
        _, _, ea = reduced_loss(md, att, prior, n, 0, draws=draws)
        diff = ea - eb
        optimality.append({"prior": prior_name, "estimator": alt, "risk": float(ea.mean()),
                           "bayes_risk": float(eb.mean()), "difference": float(diff.mean()),
                           "se": float(diff.std(ddof=1) / np.sqrt(n))})
    return [calib], optimality
