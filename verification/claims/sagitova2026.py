"""Claims of Sagitova, Duranthon, Zdeborová (2026), multi-head softmax attention in the
single-location model. Spec: shared/spec/sagitova2026.md (the suite's reading of the paper).
This module: the reduced loss (Prop. III.1), the saddle Hessian (Lemma III.1) and the Bayes
side (Props. IV.1, IV.2). The dynamics claims (Props. III.2–III.4, Result III.1, Conj. III.1)
are in ``sagitova2026_dynamics``, the Sec. IV comparisons in ``sagitova2026_sec4``."""

from __future__ import annotations

import numpy as np

import functools

import sympy as sp

from numerics.multihead import (HeadState, bayes_loss, bayes_posterior, draw, finite_d_loss,
                                reduced_loss, token_weights)
from theory.models.sagitova2026 import (DiscretePrior, GaussianPrior, at_prior,
                                        bsoftmax_bayes_parameters, flipping_spike)
from theory.multihead import MultiHeadModel, head_difference_block, saddle_hessian
from ..registry import Outcome, claim
from ..stats import finite

PAPER = "sagitova2026"


def _random_discrete_prior(rng, S, F, scale=1.5):
    p = rng.dirichlet(np.ones(S))
    return DiscretePrior(rng.standard_normal((S, F)) * scale, p)


@claim(f"{PAPER}:prop-iv2-bsoftmax-bayes", "Prop. IV.2",
       "For a discrete prior with H support points, B-softmax with k_h = Σ_f θ_hf k*_f and "
       "b_h = −‖θ_h‖²/2 + log P_θ(θ_h) equals the Bayes estimator and attains the Bayes risk.",
       reading="reduced description (D → ∞: m_h = θ_h, r = 0); Bayes estimator of Prop. IV.1; "
               "random discrete priors (H = 2…4 points, F = 2, 3), L = 4; pointwise comparison "
               "of the attention weights w_ℓ with P(ε = ℓ | X) on random inputs, risks by Monte "
               "Carlo with common random numbers.")
def prop_iv2(ctx, parameters=bsoftmax_bayes_parameters):
    rng = ctx.rng("iv2")
    n = ctx.pick(20_000, 200_000)
    rows = []
    for i, (S, F) in enumerate([(2, 2), (3, 2), (4, 3), (3, 3)]):
        prior = _random_discrete_prior(rng, S, F)
        att = parameters(prior)
        md = MultiHeadModel(att.H, 4, F, "b-softmax")
        draws = draw(prior, 4, n, seed=ctx.claim_seed(f"iv2:{i}"), H_max=att.H)
        _, chi, g = draws
        w = token_weights(md, att, chi)
        post = bayes_posterior(prior, chi)
        gap = float(np.max(np.abs(w - post)))
        rb, rb_se, eb = bayes_loss(prior, 4, n, 0, draws=draws)
        ra, ra_se, ea = reduced_loss(md, att, prior, n, 0, draws=draws)
        diff = ea - eb
        finite(rb, ra, diff)
        rows.append({"support_points": S, "F": F, "probs": prior.probs.tolist(),
                     "max_pointwise_difference": gap, "bayes_risk": rb, "bayes_risk_se": rb_se,
                     "bsoftmax_risk": ra, "bsoftmax_risk_se": ra_se,
                     "paired_difference": float(diff.mean()),
                     "paired_difference_se": float(diff.std(ddof=1) / np.sqrt(n))})
        ctx.tick((i + 1) / 4)
    worst = max(rows, key=lambda r: r["max_pointwise_difference"])
    evidence = {"rows": rows, "L": 4, "n": n, "tolerance": 1e-10}
    if worst["max_pointwise_difference"] > 1e-10:
        return Outcome("refuted", f"B-softmax differs from the Bayes posterior by "
                       f"{worst['max_pointwise_difference']:.3g} (prior with {worst['support_points']} "
                       f"points, F={worst['F']}); risks {worst['bsoftmax_risk']:.4f} vs Bayes "
                       f"{worst['bayes_risk']:.4f}", evidence)
    return Outcome("confirmed", f"B-softmax = posterior mean pointwise (max |Δ| "
                   f"{worst['max_pointwise_difference']:.1e}) for {len(rows)} random discrete priors; "
                   "equal risks", evidence)


def _alternatives(prior, L, rng):
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


@claim(f"{PAPER}:prop-iv1-bayes", "Prop. IV.1",
       "The Bayes estimator is ŷ = Σ_ℓ P(ε = ℓ | X)·z_ℓ with P(ε = ℓ | X) ∝ E_θ exp(θᵀχ*_ℓ − "
       "‖θ‖²/2); no estimator has lower risk.",
       reading="(i) the posterior formula: for the true posterior, E Σ_ℓ(1[ε = ℓ] − P_ℓ)² = "
               "E Σ_ℓ P_ℓ(1 − P_ℓ) (calibration; fails for a wrong posterior); "
               "(ii) optimality: a panel of attention estimators (uniform, softmax, softmax-1, "
               "B-softmax; random and prior-informed parameters) never has lower risk, by "
               "paired Monte Carlo differences with common random numbers and Bonferroni z. "
               "Priors: Gaussian N(0.5·1, diag(2, 0.5)), flipping spike (2, 1), a random "
               "3-point prior; L = 4, Δ = 0.")
def prop_iv1(ctx, posterior=bayes_posterior):
    rng = ctx.rng("iv1")
    n = ctx.pick(40_000, 400_000)
    priors = {"gaussian": GaussianPrior([0.5, 0.5], np.diag([2.0, 0.5])),
              "flipping-spike": flipping_spike(2.0, 1.0),
              "discrete-3": _random_discrete_prior(rng, 3, 2)}
    L = 4
    calib, optimality = [], []
    for i, (name, prior) in enumerate(priors.items()):
        draws = draw(prior, L, n, seed=ctx.claim_seed(f"iv1:{name}"), H_max=4)
        _, chi, _ = draws
        P = posterior(prior, chi)
        target = np.zeros(L)
        target[0] = 1
        # summed over tokens (the draws put the signal at ℓ = 0; the sum is exchangeable)
        x = ((target - P) ** 2).sum(-1) - (P * (1 - P)).sum(-1)
        calib.append({"prior": name, "mean": float(x.mean()), "se": float(x.std(ddof=1) / np.sqrt(n))})
        eb = ((target - P) ** 2).sum(-1)
        for alt, (md, att) in _alternatives(prior, L, rng).items():
            _, _, ea = reduced_loss(md, att, prior, n, 0, draws=draws)
            diff = ea - eb
            finite(diff)
            optimality.append({"prior": name, "estimator": alt, "risk": float(ea.mean()),
                               "bayes_risk": float(eb.mean()), "difference": float(diff.mean()),
                               "se": float(diff.std(ddof=1) / np.sqrt(n))})
        ctx.tick((i + 1) / len(priors))
    z = ctx.z(len(calib) + len(optimality))
    bad_cal = [c for c in calib if abs(c["mean"]) > z * c["se"] + 1e-12]
    bad_opt = [o for o in optimality if o["difference"] < -z * o["se"] - 1e-12]
    evidence = {"calibration": calib, "optimality": optimality, "z": z, "n": n, "L": L}
    if bad_cal:
        w = max(bad_cal, key=lambda c: abs(c["mean"]) / c["se"])
        return Outcome("refuted", f"posterior not calibrated ({w['prior']}): E Σ_ℓ(1[ε=ℓ] − P_ℓ)² − "
                       f"E Σ_ℓ P_ℓ(1 − P_ℓ) = {w['mean']:.4g} ± {w['se']:.2g}", evidence)
    if bad_opt:
        w = min(bad_opt, key=lambda o: o["difference"] / o["se"])
        return Outcome("refuted", f"{w['estimator']} beats the Bayes estimator ({w['prior']}): "
                       f"risk {w['risk']:.4f} vs {w['bayes_risk']:.4f} "
                       f"(Δ = {w['difference']:.3g} ± {w['se']:.2g})", evidence)
    closest = min(optimality, key=lambda o: o["difference"] / max(o["se"], 1e-300))
    return Outcome("confirmed", f"posterior calibrated for {len(calib)} priors; none of "
                   f"{len(optimality)} estimators beats it (closest: {closest['estimator']}, "
                   f"Δ = {closest['difference']:.3g} ± {closest['se']:.2g})", evidence)


@claim(f"{PAPER}:prop-iii1-reduced-loss", "Prop. III.1",
       "The population loss depends on the keys only through (m, r) (with b, v); the reduced "
       "expectation equals the finite-D loss up to vanishing corrections.",
       reading="random keys k_h = Σ_f a_hf k*_f + noise in R^D with spikes k*_f ~ N(0, I/D) "
               "and a unit value direction orthogonal to spikes and keys (z then independent of "
               "the logits, integrated out exactly); the finite-D Monte Carlo loss "
               "minus the reduced loss at the keys' (m, r), per D, fitted as a + b/√D "
               "(the spikes' Gram matrix deviates from I by O(1/√D)) and a → 0 judged with "
               "Bonferroni z; softmax, softmax-1 and B-softmax, H = 2, F = 2, L = 4, Gaussian "
               "prior N(0.5·1, diag(2, 0.5)).")
def prop_iii1(ctx, reduced=reduced_loss):
    dims = ctx.pick([50, 100, 200, 400], [50, 100, 200, 400, 800, 1600])
    n = ctx.pick(50_000, 200_000)
    prior = GaussianPrior([0.5, 0.5], np.diag([2.0, 0.5]))
    L, H, F = 4, 2, 2
    rows, checks = [], []
    acts = ("softmax", "softmax-1", "b-softmax")
    for j, act in enumerate(acts):
        md = MultiHeadModel(H, L, F, act)
        diffs, ses = [], []
        for dv in dims:
            rng = np.random.default_rng(ctx.claim_seed(f"iii1:{act}:{dv}"))
            spikes = rng.standard_normal((F, dv)) / np.sqrt(dv)
            value = rng.standard_normal(dv)
            value -= spikes.T @ np.linalg.lstsq(spikes.T, value, rcond=None)[0]
            value /= np.linalg.norm(value)
            keys = np.array([[1.5, 0.3], [-0.4, 1.2]]) @ spikes + rng.standard_normal((H, dv)) / np.sqrt(dv)
            keys -= np.outer(keys @ value, value)      # keys ⊥ v*: z independent of the logits
            b = np.array([0.2, -0.3])
            fd, fd_se = finite_d_loss(md, keys, b, spikes, value, prior, n,
                                      seed=ctx.claim_seed(f"fd:{act}:{dv}"), conditional=True)
            m = keys @ spikes.T
            r = keys @ keys.T - m @ m.T        # PSD up to the spikes' O(1/√D) non-orthonormality
            lam, U = np.linalg.eigh((r + r.T) / 2)
            r = (U * np.clip(lam, 0, None)) @ U.T
            rd, rd_se, _ = reduced(md, HeadState.make(m, r, b), prior, n,
                                   seed=ctx.claim_seed(f"rd:{act}:{dv}"))
            finite(fd, rd)
            diffs.append(fd - rd)
            ses.append(float(np.hypot(fd_se, rd_se)))
            rows.append({"activation": act, "D": dv, "finite_d": fd, "finite_d_se": fd_se,
                         "reduced": rd, "reduced_se": rd_se})
        X = np.stack([np.ones(len(dims)), 1 / np.sqrt(np.array(dims, float))], 1)
        W = 1 / np.array(ses) ** 2
        cov = np.linalg.inv(X.T @ (X * W[:, None]))
        coef = cov @ (X.T @ (W * np.array(diffs)))
        chi2 = float(np.sum(W * (np.array(diffs) - X @ coef) ** 2)) / max(len(dims) - 2, 1)
        se = float(np.sqrt(cov[0, 0] * max(chi2, 1.0)))
        checks.append({"activation": act, "D": dims, "difference": diffs, "difference_se": ses,
                       "limit": float(coef[0]), "limit_se": se})
        ctx.tick((j + 1) / len(acts))
    z = ctx.z(len(checks))
    bad = [c for c in checks if abs(c["limit"]) > z * c["limit_se"]]
    evidence = {"rows": rows, "checks": checks, "z": z, "n": n}
    if bad:
        w = max(bad, key=lambda c: abs(c["limit"]) / c["limit_se"])
        return Outcome("refuted", f"{w['activation']}: finite-D − reduced loss → {w['limit']:.4g} ± "
                       f"{w['limit_se']:.2g} as D → ∞", evidence)
    return Outcome("confirmed", f"finite-D − reduced loss → 0 as D → ∞ for {', '.join(acts)} "
                   f"(D = {dims[0]}…{dims[-1]}, z = {z:.2f})", evidence)


# -------------------------------------------------------------------------------------------
@functools.cache
def _saddle_block(L, H, F, activation="softmax"):
    Hm, ms, mu, S = saddle_hessian(MultiHeadModel(H, L, F, activation))
    return head_difference_block(Hm, H, F), mu, S


def _numeric_block(prior, L, H, F, n, seed, delta):
    """Head-difference Hessian of the Monte Carlo reduced loss at m = 0 by central second
    differences with common random numbers (one set of draws for every evaluation)."""
    draws = draw(prior, L, n, seed, H_max=H)
    md = MultiHeadModel(H, L, F)
    dirs = []
    for f in range(F):
        dvec = np.zeros((H, F))
        dvec[0, f], dvec[1, f] = 1 / np.sqrt(2), -1 / np.sqrt(2)
        dirs.append(dvec)

    def loss(mm):
        return reduced_loss(md, HeadState.make(mm), prior, n, 0, draws=draws)[2]
    B, B_se = np.zeros((F, F)), np.zeros((F, F))
    for i in range(F):
        for j in range(F):
            e = (loss(delta * (dirs[i] + dirs[j])) - loss(delta * (dirs[i] - dirs[j]))
                 - loss(delta * (dirs[j] - dirs[i])) + loss(-delta * (dirs[i] + dirs[j]))) / (4 * delta**2)
            B[i, j], B_se[i, j] = e.mean(), e.std(ddof=1) / np.sqrt(n)
    return B, B_se


@claim(f"{PAPER}:lemma-iii1-saddle-hessian", "Lemma III.1",
       "At the unspecialized saddle (mᵀEθ = 0, small initialisation, softmax), the loss "
       "restricted to head-difference directions is a quadratic form whose most negative "
       "directions are the eigenvectors of Cov θ, in order of decreasing eigenvalue.",
       reading="saddle read as m = 0, r = 0, b = 0 (all logits zero) with Eθ = 0, so that "
               "mᵀEθ = 0; L = 4, H = 2, F = 2; head-difference directions m₁ − m₂; priors "
               "N(0, diag(2, 0.5)) and a rotated N(0, R diag(2, 0.5)Rᵀ). The symbolic Hessian "
               "(SymPy: second derivative of the integrand, Gaussian moments) is compared with "
               "central second differences of the Monte Carlo loss (common random numbers), "
               "Richardson-extrapolated from δ = 0.3 and 0.15; allowance z·se + |B(0.3) − "
               "B(0.15)|/3 (the size of the O(δ²) term removed).")
def lemma_iii1(ctx, block=None):
    L, H, F = 4, 2, 2
    B_sym, mu, S = _saddle_block(L, H, F) if block is None else block
    rot = np.array([[np.cos(0.6), -np.sin(0.6)], [np.sin(0.6), np.cos(0.6)]])
    priors = {"diag(2, 0.5)": GaussianPrior([0, 0], np.diag([2.0, 0.5])),
              "rotated": GaussianPrior([0, 0], rot @ np.diag([2.0, 0.5]) @ rot.T)}
    n = ctx.pick(100_000, 1_000_000)
    rows, bad = [], []
    for i, (name, prior) in enumerate(priors.items()):
        B = at_prior(B_sym, prior, mu, S)
        evals, evecs = np.linalg.eigh(B)                        # ascending: most negative first
        cvals, cvecs = np.linalg.eigh(prior.cov())
        cvecs = cvecs[:, ::-1]                                  # decreasing variance first
        alignment = [float(abs(evecs[:, k] @ cvecs[:, k])) for k in range(F)]
        B1, se1 = _numeric_block(prior, L, H, F, n, ctx.claim_seed(f"hess:{name}"), 0.3)
        B2, se2 = _numeric_block(prior, L, H, F, n, ctx.claim_seed(f"hess:{name}"), 0.15)
        BR = (4 * B2 - B1) / 3                      # Richardson: the O(δ²) error removed
        rows.append({"prior": name, "cov_theta": prior.cov().tolist(), "hessian": B.tolist(),
                     "eigenvalues": evals.tolist(), "eigenvectors": evecs.T.tolist(),
                     "cov_eigenvectors_by_decreasing_variance": cvecs.T.tolist(),
                     "alignment": alignment, "numeric_hessian": BR.tolist(),
                     "numeric_se": ((4 * se2 + se1) / 3).tolist(),
                     "numeric_hessian_delta_0.15": B2.tolist(), "numeric_hessian_delta_0.3": B1.tolist(),
                     "finite_delta_allowance": (np.abs(B1 - B2) / 3).tolist()})
        ctx.tick((i + 1) / len(priors))
    z = ctx.z(len(rows) * F * F)
    for r in rows:
        B, Bn = np.array(r["hessian"]), np.array(r["numeric_hessian"])
        tol = z * np.array(r["numeric_se"]) + np.array(r["finite_delta_allowance"])
        r["numeric_agrees"] = bool(np.all(np.abs(B - Bn) <= tol))
        r["order_ok"] = bool(min(r["alignment"]) > 1 - 1e-9 and max(r["eigenvalues"]) < 0)
        if not (r["numeric_agrees"] and r["order_ok"]):
            bad.append(r)
    evidence = {"L": L, "H": H, "F": F, "symbolic_hessian": str(B_sym),
                "symbolic_hessian_latex": sp.latex(B_sym), "second_moment_symbols": str(S),
                "rows": rows, "z": z, "n": n}
    if bad:
        w = bad[0]
        why = ("the symbolic Hessian disagrees with the Monte Carlo one" if not w["numeric_agrees"]
               else f"eigenvector alignment {min(w['alignment']):.4f} / eigenvalues {w['eigenvalues']}")
        return Outcome("refuted", f"{w['prior']}: {why}", evidence)
    return Outcome("confirmed", f"head-difference Hessian = {sp.sstr(B_sym)}; its most negative "
                   f"directions are Cov θ's eigenvectors by decreasing variance for both priors; "
                   "Monte Carlo second differences agree", evidence)
