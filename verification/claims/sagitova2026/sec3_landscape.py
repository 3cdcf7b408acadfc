"""Sec. III of Sagitova, Duranthon, Zdeborová (2026), the loss landscape: the reduced loss
(Prop. III.1) and the saddle Hessian in head-difference directions (Lemma III.1)."""

from __future__ import annotations

import ast

import numpy as np
import sympy as sp

from numerics.multihead import reduced_loss
from theory.models.sagitova2026 import GaussianPrior, at_prior
from theory.multihead import saddle_symbols
from theory.printing import latex
from ... import checks
from ...checks import estimate_vs_theory
from ...declare import claim
from ...domain import Choice, Integers, Interval
from ...stats import finite
from ...simulations.sagitova2026.sec3_landscape import (STEPS, iii1_losses, numeric_hessian,
                                                        reduced_5pc_high, reduced_with_identity_residual,
                                                        reduced_without_residual, richardson_hessian,
                                                        saddle_block)
from ._common import PAPER

__all__ = ["STEPS", "richardson_hessian", "derived_block"]


III1_ACTIVATIONS = ("softmax", "softmax-1", "b-softmax")
III1_DIMS = {"quick": [50, 100, 200, 400], "full": [50, 100, 200, 400, 800, 1600]}
III1_SCALES = {"quick": [0.3, 1.0, 2.0, 3.0], "full": [0.3, 1.0, 2.0, 3.0, 0.5, 1.5]}   # one per D


@claim(f"{PAPER}:prop-iii1-reduced-loss", "Prop. III.1",
       "The population loss depends on the keys only through (m, r) (with b, v); the reduced "
       "expectation equals the finite-D loss up to vanishing corrections.",
       reading="at each setting (activation, H, F, L, D, noise): random keys k_h = Σ_f a_hf k*_f "
               "+ c·(C g)_h/√D (g standard Gaussian, C the Cholesky factor of the H × H "
               "correlation matrix with 0.6 off the diagonal, a_hf the pattern [[1.5, 0.3], "
               "[−0.4, 1.2]] tiled over H × F, c = 'noise', so that r spans small to large "
               "noise with correlated heads) in R^D, biases b = 0.2 … −0.3 over the heads "
               "(softmax-v: sink logits v = 0.3 … −0.2), "
               "orthonormal spikes k*_f (QR of a Gaussian matrix: Prop. III.1's m = K K*ᵀ and "
               "r = KKᵀ − mmᵀ; with spikes ~ N(0, I/D) their Gram matrix misses I by O(1/√D), "
               "which turns r indefinite at small D, e.g. λ_min = −0.84 at D = 50, a property "
               "of the spikes, not of the reduction) and a unit value direction orthogonal to "
               "spikes and keys (z then independent of the logits, integrated out exactly). "
               "Given θ the logits are Gaussian with mean mθ and covariance mmᵀ + r, so the "
               "finite-D loss equals the reduced loss at (m, r) at EVERY D: the finite-D Monte "
               "Carlo loss against the reduced loss at the keys' (m, r) (fresh keys per setting; "
               "independent draws on each side), |Δ| ≤ z·se; prior N(0.5·1, diag(2 … 0.5)) "
               "(F = 2: diag(2, 0.5)). Profiles: softmax, softmax-1 and B-softmax, H = 2, F = 2, "
               "L = 4, at D = 50…400 with c = 0.3, 1, 2, 3 (quick; D = 50…1600 with c = 0.3, 1, "
               "2, 3, 0.5, 1.5, full), 12 (18) settings at α/12 (α/18) each.",
       domain={"activation": Choice("softmax", "softmax-1", "softmax-v", "b-softmax"),
               "H": Integers(1, 4), "F": Integers(1, 3), "L": Integers(2, 8),
               "D": Integers(50, 1600, log=True), "noise": Interval(0.3, 3.0, log=True)},
       reference={"H": 2, "F": 2, "L": 4},
       points={p: [{"activation": a, "H": 2, "F": 2, "L": 4, "D": D, "noise": c}
                   for a in III1_ACTIVATIONS
                   for D, c in zip(III1_DIMS[p], III1_SCALES[p], strict=True)]
               for p in ("quick", "full")},
       mutations={"residual-covariance-dropped": lambda: {"reduced": reduced_without_residual},
                  "residual covariance r → I": lambda: {"reduced": reduced_with_identity_residual},
                  "reduced-loss-5%-high": lambda: {"reduced": reduced_5pc_high}})
def prop_iii1(ctx, activation, H, F, L, D, noise, reduced=reduced_loss):
    n = ctx.pick(50_000, 200_000)
    row, = ctx.map(iii1_losses, [{
        "reduced": reduced, "activation": activation, "H": H, "F": F, "L": L, "D": D,
        "noise": noise, "n": n, "keys_seed": ctx.claim_seed(f"iii1:{activation}:{D}"),
        "fd_seed": ctx.claim_seed(f"fd:{activation}:{D}"),
        "rd_seed": ctx.claim_seed(f"rd:{activation}:{D}")}])
    finite(row["finite_d"], row["reduced"])
    check = estimate_vs_theory(ctx, [row["finite_d"]], [row["difference_se"]], [row["reduced"]],
                               name="finite-D loss vs reduced loss at (m, r)")
    row["score"] = float(check.score[0])
    evidence = {"rows": [row], "z": check.z, "n": n, "check": check.evidence()}
    txt = (f"{activation}, H = {H}, F = {F}, L = {L}, D = {D}: finite-D loss "
           f"{row['finite_d']:.5f} vs reduced {row['reduced']:.5f} (Δ = "
           f"{row['difference']:.2g} ± {row['difference_se']:.2g}")
    return checks.conclude(
        {"finite-D vs reduced loss": check}, evidence=evidence,
        says={"refuted": f"{txt}, z = {check.z:.2f})",
              "confirmed": f"finite-D loss = reduced loss at (m, r): {txt}, |Δ|/se "
                           f"{abs(row['score']):.2f} < z = {check.z:.2f})"})


# -------------------------------------------------------------------------------------------
_SREPR_NAMES = ("ImmutableDenseMatrix", "MutableDenseMatrix", "Add", "Mul", "Pow", "Integer",
                "Rational", "Float", "Symbol")


def _block_of(text):
    """The SymPy object whose ``srepr`` is ``text``, built from literal arguments by a few SymPy
    constructors only (a stored result is data: it is never evaluated as code)."""
    def build(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [build(e) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -build(node.operand)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _SREPR_NAMES):
            return getattr(sp, node.func.id)(*map(build, node.args),
                                             **{k.arg: build(k.value) for k in node.keywords})
        raise ValueError(f"not a stored SymPy block: {ast.dump(node):.80}")
    return build(ast.parse(text, mode="eval").body)


def derived_block(ctx, L, H, F, activation="softmax"):
    """The symbolic head-difference block of the saddle Hessian (a stored simulation,
    ``saddle_block``: its derivation takes seconds), with its symbols: (block, mean symbols,
    second-moment Matrix)."""
    text, = ctx.map(saddle_block, [{"L": int(L), "H": int(H), "F": int(F), "activation": activation}])
    _, mu, S = saddle_symbols(H, F)
    return _block_of(text), mu, S


def _scaled_block(factor):
    """Mutation: the symbolic head-difference Hessian times ``factor``, at whatever setting
    (a function of the derived (block, mean symbols, second-moment symbols))."""
    def block(B, mu, S):
        return (factor * B, mu, S)
    return block


EIGENVECTOR_ATOL = 1e-9
"""The eigenvector order is exact: |cos| between the k-th most negative eigenvector of the
symbolic block (evaluated in double precision, ``numpy.linalg.eigh``) and Cov θ's k-th by
decreasing variance is 1 up to the eigensolver's rounding."""
EIGENVALUE_ATOL = 1e-12
"""An eigenvalue of the evaluated block within ±this share of the largest |eigenvalue| is 0 at
double precision (its sign is not resolved); the profiles' are all of the same order."""


def _lemma_prior(nu1, nu2, angle):
    """N(0, R diag(ν₁, ν₂) Rᵀ), R the rotation by ``angle``: Eθ = 0, Cov θ's eigenvectors at
    ``angle`` (variance ν₁) and ``angle`` + π/2 (ν₂)."""
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return GaussianPrior([0.0, 0.0], rot @ np.diag([nu1, nu2]) @ rot.T)


@claim(f"{PAPER}:lemma-iii1-saddle-hessian", "Lemma III.1",
       "At the unspecialized saddle (mᵀEθ = 0, small initialisation, softmax), the loss "
       "restricted to head-difference directions is a quadratic form whose most negative "
       "directions are the eigenvectors of Cov θ, in order of decreasing eigenvalue.",
       reading="saddle read as m = 0, r = 0, b = 0 (all logits zero) with Eθ = 0, so that "
               "mᵀEθ = 0; F = 2; head-difference directions m₁ − m₂; at each setting (L, H, "
               "ν₁, ν₂, angle) the prior N(0, R diag(ν₁, ν₂)Rᵀ), R the rotation by 'angle'. The "
               "symbolic Hessian (SymPy: second derivative of the integrand, Gaussian moments) "
               "is compared with central second differences of the Monte Carlo loss (common "
               "random numbers) at δ = 0.3, 0.15, 0.075, Richardson-extrapolated from the two "
               "smaller steps; |Δ| ≤ z·se + bias per entry (one family per setting, Bonferroni "
               "z), se of the per-sample combination, bias the remaining O(δ⁴) step error "
               "estimated from the two Richardson values (their difference / 15). The "
               "eigenvector order is exact. Domain: L ≥ 3, where the derived block is "
               "−(2/H)(L−1)(L−2)/L³·Cov θ; at L = 2 it vanishes identically (no negative "
               "direction to order); ν₁ > ν₂ (distinct eigenvalues, so there is an order; "
               "the angle covers every orientation). Profiles: L = 4, H = 2, ν = (2, 0.5) at "
               "angles 0 and 0.6.",
       domain={"L": Integers(3, 8), "H": Integers(2, 4), "nu1": Interval(0.25, 8.0, log=True),
               "nu2": Interval(0.25, 8.0, log=True), "angle": Interval(0.0, float(np.pi))},
       where={"ν₁ > ν₂": lambda nu1, nu2: nu1 > nu2},
       reference={"L": 4, "H": 2, "nu1": 2.0, "nu2": 0.5, "angle": 0.0},
       points=[{"L": 4, "H": 2, "nu1": 2.0, "nu2": 0.5, "angle": a} for a in (0.0, 0.6)],
       mutations={"hessian-5%-too-large": lambda: {"block": _scaled_block(1.05)},
                  "hessian-5%-too-small": lambda: {"block": _scaled_block(0.95)}})
def lemma_iii1(ctx, L, H, nu1, nu2, angle, block=None):
    """``block(B, mu, S)``: the symbolic head-difference block with its symbols judged instead
    of the derived ones (B, mu, S) (mutations)."""
    F = 2
    B_sym, mu, S = derived_block(ctx, L, H, F)
    if block is not None:
        B_sym, mu, S = block(B_sym, mu, S)
    prior = _lemma_prior(nu1, nu2, angle)
    n = ctx.pick(400_000, 2_000_000)
    B = at_prior(B_sym, prior, mu, S)
    evals, evecs = np.linalg.eigh(B)                        # ascending: most negative first
    cvals, cvecs = np.linalg.eigh(prior.cov())
    cvecs = cvecs[:, ::-1]                                  # decreasing variance first
    alignment = [float(abs(evecs[:, k] @ cvecs[:, k])) for k in range(F)]
    (est, se, bias, by_step), = ctx.map(numeric_hessian, [
        {"prior": prior, "L": int(L), "H": int(H), "F": F, "n": n, "seed": ctx.claim_seed("hess")}])
    row = {"prior": f"N(0, R({angle:g}) diag({nu1:g}, {nu2:g}) R({angle:g})ᵀ)",
           "cov_theta": prior.cov().tolist(), "hessian": B.tolist(),
           "eigenvalues": evals.tolist(), "eigenvectors": evecs.T.tolist(),
           "cov_eigenvectors_by_decreasing_variance": cvecs.T.tolist(),
           "alignment": alignment, "numeric_hessian": est.tolist(),
           "numeric_se": se.tolist(), "step_bias": bias.tolist(),
           "steps": list(STEPS), "numeric_hessian_by_step": by_step.tolist()}
    iu = np.triu_indices(F)                                 # symmetric: distinct entries
    # resolution relative to the Hessian's scale (off-diagonal entries may vanish)
    check = estimate_vs_theory(ctx, est[iu], se[iu], B[iu], bias=bias[iu],
                               name="symbolic vs Monte Carlo head-difference Hessian",
                               scale=np.full(len(iu[0]), np.abs(B).max()))
    # the order, exactly: the k-th most negative direction is Cov θ's k-th eigenvector by
    # decreasing variance, and every head-difference direction is negative
    order = checks.exact(ctx, alignment, np.ones(F), atol=EIGENVECTOR_ATOL,
                         name="|cos| of the k-th most negative direction with Cov θ's k-th",
                         labels=[f"direction {k + 1}" for k in range(F)])
    negative = checks.signs(ctx, evals / (np.abs(evals).max() or 1.0), -1, atol=EIGENVALUE_ATOL,
                            name="signs of the head-difference eigenvalues (÷ the largest |·|)",
                            labels=[f"eigenvalue {k + 1}" for k in range(F)])
    row["numeric_agrees"] = bool(check.ok.all())
    row["order_ok"] = order.decision == "confirmed" and negative.decision == "confirmed"
    evidence = {"L": L, "H": H, "F": F, "symbolic_hessian": str(B_sym),
                "symbolic_hessian_latex": latex(B_sym), "second_moment_symbols": str(S),
                "rows": [row], "z": check.z, "n": n, "check": check.evidence()}

    def says(verdict):
        if check.decision == "refuted":
            return (f"{row['prior']}: the symbolic Hessian disagrees with the Monte Carlo one "
                    f"(worst entry Δ = {check.details['worst_delta']:.3g}, se "
                    f"{check.details['worst_stderr']:.2g}, step bias "
                    f"{check.details['worst_bias']:.2g}, z = {check.z:.2f})")
        if verdict != "confirmed":
            return (f"{row['prior']}: eigenvector alignment {min(alignment):.4f} / "
                    f"eigenvalues {row['eigenvalues']}")
        return (f"head-difference Hessian = {sp.sstr(B_sym)}; its most negative directions are "
                f"Cov θ's eigenvectors by decreasing variance ({row['prior']}, L = {L}, "
                f"H = {H}); Monte Carlo second differences agree (max (|Δ| − bias)/se = "
                f"{np.max(check.score):.2f} ≤ z = {check.z:.2f})")
    return checks.conclude({"Monte Carlo Hessian": check, "eigenvector order": order,
                            "negative directions": negative}, says=says, evidence=evidence)
