"""Reduced loss and gradient flow of multi-head attention on (m, r, b, v), by quasi-Monte Carlo
with common random numbers, from the expressions SymPy derives in ``theory.multihead``.

With the signal at token 0, χ_ℓ = θ·[ℓ = 0] + ζ_ℓ (ζ standard, L × F), residual logits
ω_ℓ = R g_ℓ (g standard, L × H, RRᵀ = r) and s_hℓ = m_h·χ_ℓ + ω_hℓ + b_h, the loss is
Δ² + E φ(s, v) (spec, Prop. III.1). Gradient flow of the keys, dk_h/dτ = −∇_{k_h} E(y − ŷ)²,
closes on the order parameters (chain rule on the Gram matrix of keys and spikes):

    dm_hf/dτ = −E Σ_ℓ ∂φ/∂s_hℓ · χ_ℓf                       (pathwise: = −∂E φ/∂m_hf at fixed r)
    dr/dτ    = −(M r + r M) + κ·E N,   M_hk = E Σ_ℓ ∂²φ/∂s_hℓ∂s_kℓ
    db_h/dτ  = −E Σ_ℓ ∂φ/∂s_hℓ,        dv_h/dτ = −E ∂φ/∂v_h   (trained sinks only)

The r-equation is dQ − dm mᵀ − m dmᵀ with the Stein identity E[∂φ/∂s_hℓ ω_kℓ] = (r E[∂²φ])_hk;
κ = γD/N_b is the optional finite-step SGD-noise correction with N the noise integrand of
``theory.multihead`` (spec, "SGD"). Draws are scrambled Sobol' points with antithetic mirrors
(θ − Eθ, ζ) → ±(θ − Eθ, ζ) and g → ±g independently (θ mirrored only for priors symmetric about
their mean): at m = 0 the logits do not depend on χ, so the estimated drift E[∂φ/∂s·χ] is
exactly ∂φ/∂s·Eθ and the saddle's unstable directions are not swamped by Monte Carlo bias. The same draws serve every evaluation: the right-hand side is deterministic, and
dm is exactly minus the m-gradient of the estimated loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc

from theory.multihead import MultiHeadModel

__all__ = ["HeadState", "FlowDraws", "ReducedFlow", "draws_for", "mean_and_se", "first_passage"]


@dataclass(frozen=True)
class HeadState:
    """Order parameters of H heads: m (H × F), r (H × H, symmetric PSD), b (H), v (H)."""

    m: np.ndarray
    r: np.ndarray
    b: np.ndarray
    v: np.ndarray

    @classmethod
    def make(cls, m, r=None, b=None, v=None):
        m = np.atleast_2d(np.asarray(m, float))
        H = m.shape[0]
        r = np.zeros((H, H)) if r is None else np.asarray(r, float)
        b = np.zeros(H) if b is None else np.asarray(b, float).ravel()
        v = np.zeros(H) if v is None else np.asarray(v, float).ravel()
        if r.shape != (H, H) or b.shape != (H,) or v.shape != (H,):
            raise ValueError(f"HeadState: r must be {H}×{H}, b and v must have {H} entries")
        if not all(np.all(np.isfinite(x)) for x in (m, r, b, v)):
            raise ValueError("HeadState: m, r, b and v must be finite")
        r = (r + r.T) / 2
        if np.linalg.eigvalsh(r).min() < -1e-9 * max(1.0, np.abs(r).max()):
            raise ValueError("HeadState: r must be positive semi-definite")
        return cls(m, r, b, v)

    @property
    def H(self):
        return self.m.shape[0]

    def pack(self) -> np.ndarray:
        iu = np.triu_indices(self.H)
        return np.concatenate([self.m.ravel(), self.r[iu], self.b, self.v])

    @classmethod
    def unpack(cls, y, H, F):
        y = np.asarray(y, float)
        iu = np.triu_indices(H)
        k = H * F
        nr = len(iu[0])
        r = np.zeros((H, H))
        r[iu] = y[k:k + nr]
        r = r + np.triu(r, 1).T
        return cls(y[:k].reshape(H, F), r, y[k + nr:k + nr + H], y[k + nr + H:k + nr + 2 * H])

    def permuted(self, perm):
        p = np.asarray(perm)
        return HeadState(self.m[p], self.r[np.ix_(p, p)], self.b[p], self.v[p])

    def to_dict(self):
        return {k: getattr(self, k).tolist() for k in ("m", "r", "b", "v")}


@dataclass(frozen=True)
class FlowDraws:
    """Common random numbers: θ (n, F), ζ (n, L, F), g (n, L, H); second half mirrors the first."""

    theta: np.ndarray
    zeta: np.ndarray
    g: np.ndarray

    @property
    def n(self):
        return self.theta.shape[0]


def draws_for(prior, L, H, n, seed, kind="sobol") -> FlowDraws:
    """n (a multiple of 4) draws: n/4 scrambled-Sobol' (``kind='sobol'``) or pseudo-random base
    points, each in four antithetic copies (θ − Eθ, ζ) → ±(θ − Eθ, ζ) times g → ±g (θ mirrored only
    for priors symmetric about their mean), see module docstring."""
    if not (isinstance(n, (int, np.integer)) and n >= 8 and n % 4 == 0):
        raise ValueError(f"n={n!r} must be a multiple of 4, ≥ 8")
    if kind not in ("sobol", "random"):
        raise ValueError(f"kind={kind!r}; allowed: 'sobol', 'random'")
    F, k = prior.F, prior.n_uniform
    dim = k + L * F + L * H
    q = n // 4
    if kind == "sobol":
        u = qmc.Sobol(dim, scramble=True, seed=np.random.default_rng(seed)).random(q)
    else:
        u = np.random.default_rng(seed).random((q, dim))
    theta = prior.quantile(u[:, :k])
    z = ndtri(np.clip(u[:, k:], 1e-16, 1 - 1e-16))
    zeta = z[:, :L * F].reshape(q, L, F)
    g = z[:, L * F:].reshape(q, L, H)
    mirrored = prior.reflect(theta)
    theta2 = theta if mirrored is None else mirrored
    return FlowDraws(np.concatenate([theta, theta2, theta, theta2]),
                     np.concatenate([zeta, -zeta, zeta, -zeta]),
                     np.concatenate([g, g, -g, -g]))


class ReducedFlow:
    """Loss and gradient flow on (m, r, b, v) for a :class:`MultiHeadModel` and a prior.

    ``sgd_noise`` is κ = γD/N_b (0: the pure gradient flow). ``backend`` 'numpy' or 'torch'
    (generated code of either; torch runs on ``device``)."""

    def __init__(self, model: MultiHeadModel, prior, n=2**14, seed=0, sgd_noise=0.0,
                 backend="numpy", device="cpu", kind="sobol"):
        if prior.F != model.F:
            raise ValueError(f"prior has F={prior.F} features, the model F={model.F}")
        if not (np.isfinite(sgd_noise) and sgd_noise >= 0):
            raise ValueError(f"sgd_noise={sgd_noise!r} must be ≥ 0 (it is γD/N_b)")
        if backend not in ("numpy", "torch"):
            raise ValueError(f"backend={backend!r}; allowed: 'numpy', 'torch'")
        self.model, self.prior, self.kappa = model, prior, float(sgd_noise)
        self.backend, self.device = backend, device
        self.draws = draws_for(prior, model.L, model.H, n, seed, kind)
        if backend == "torch":
            import torch
            self.xp = torch
            to = lambda a: torch.as_tensor(a, dtype=torch.float64, device=device)
            self._theta, self._zeta, self._g = (to(a) for a in (self.draws.theta,
                                                                self.draws.zeta, self.draws.g))
        else:
            self.xp = np
            self._theta, self._zeta, self._g = self.draws.theta, self.draws.zeta, self.draws.g
        self.nfev = 0

    # --- generated code ----------------------------------------------------------------------
    @cached_property
    def _loss_code(self):
        from numerics.codegen import generate
        return generate(self.model.arguments, [self.model.conditional_loss], backend=self.backend)

    @cached_property
    def _flow_code(self):
        from numerics.codegen import generate
        md = self.model
        H, L = md.H, md.L
        outs = [g for row in md.loss_gradient for g in row]
        outs += [md.loss_hessian_blocks[l][h][k] for l in range(L) for h in range(H)
                 for k in range(h, H)]
        if md.trains_sinks:
            outs += md.loss_sink_gradient
        if self.kappa > 0:
            outs += [md.noise_integrand[h][k] for h in range(H) for k in range(h, H)]
        return generate(md.arguments, outs, backend=self.backend)

    @cached_property
    def _grad_code(self):
        """φ, ∂φ/∂s and ∂φ/∂v only (for optimisers: no Hessian blocks)."""
        from numerics.codegen import generate
        md = self.model
        outs = [md.conditional_loss] + [g for row in md.loss_gradient for g in row]
        if md.trains_sinks:
            outs += md.loss_sink_gradient
        return generate(md.arguments, outs, backend=self.backend)

    # --- evaluation --------------------------------------------------------------------------
    def _chi(self):
        xp = self.xp
        chi = self._zeta.clone() if xp is not np else self._zeta.copy()
        chi[:, 0, :] = chi[:, 0, :] + self._theta
        return chi

    def _arrays(self, state: HeadState, root=None):
        """χ and the generated functions' arguments; ω = g Rᵀ with R = ``root`` (any RRᵀ = r)
        or the symmetric square root of r."""
        xp = self.xp
        as_x = (lambda a: xp.as_tensor(a, dtype=xp.float64, device=self.device)) if xp is not np \
            else (lambda a: np.asarray(a, float))
        if root is None:
            lam, U = np.linalg.eigh(state.r)
            R = U * np.sqrt(np.clip(lam, 0, None))
        else:
            R = root
        chi = self._chi()
        s = (xp.einsum("nlf,hf->nhl", chi, as_x(state.m)) + xp.einsum("nlk,hk->nhl", self._g, as_x(R))
             + as_x(state.b)[None, :, None])
        args = [s[:, h, l] for h in range(self.model.H) for l in range(self.model.L)]
        args += [as_x(state.v[h]) for h in range(self.model.H)]
        return chi, args

    def _np(self, x):
        return x.cpu().numpy() if self.xp is not np else x

    def loss_samples(self, state: HeadState) -> np.ndarray:
        """Per-draw Δ² + φ (antithetic pairs not yet averaged)."""
        _, args = self._arrays(state)
        phi = self._np(self._loss_code(*args)[0])
        return self.model.delta ** 2 + phi

    def loss(self, state: HeadState):
        """(estimate, standard error from the antithetic pair means) of the reduced loss."""
        e = self.loss_samples(state)
        if not np.all(np.isfinite(e)):
            raise FloatingPointError("reduced loss: non-finite value (logits too large?)")
        return _mean_se(e)

    def _integrands(self, state: HeadState):
        """Per-draw pieces of the flow: −Σ_ℓ φ_hℓ χ_ℓf, Σ_ℓ ∂²φ (upper H×H), −Σ_ℓ φ_hℓ, −∂φ/∂v, N."""
        md, xp = self.model, self.xp
        H, L, F = md.H, md.L, md.F
        chi, args = self._arrays(state)
        out = self._flow_code(*args)
        self.nfev += 1
        G = xp.stack(out[:H * L], -1).reshape(-1, H, L)
        pos = H * L
        nb = H * (H + 1) // 2
        per = {"m": -xp.einsum("nhl,nlf->nhf", G, chi).reshape(-1, H * F),
               "K": xp.stack(out[pos:pos + L * nb], -1).reshape(-1, L, nb).sum(1),
               "b": -G.sum(-1)}
        pos += L * nb
        if md.trains_sinks:
            per["v"] = -xp.stack(out[pos:pos + H], -1)
            pos += H
        if self.kappa > 0:
            per["N"] = xp.stack(out[pos:pos + nb], -1)
        per = {k: self._np(v) for k, v in per.items()}
        if not all(np.all(np.isfinite(v)) for v in per.values()):
            raise FloatingPointError("reduced flow: non-finite integrand (logits too large?)")
        return per

    def _dr(self, K, N, r):
        """dr = −(M r + r M) + κN for (batches of) upper-triangle vectors K, N."""
        H = self.model.H
        iu = np.triu_indices(H)
        M = np.zeros(K.shape[:-1] + (H, H))
        M[..., iu[0], iu[1]] = K
        M = M + np.swapaxes(np.triu(M, 1), -1, -2)
        dr = -(M @ r + r @ M)
        if N is not None:
            Nm = np.zeros_like(M)
            Nm[..., iu[0], iu[1]] = N
            dr = dr + self.kappa * (Nm + np.swapaxes(np.triu(Nm, 1), -1, -2))
        return dr[..., iu[0], iu[1]]

    def derivative_draws(self, state: HeadState) -> np.ndarray:
        """Per-draw packed derivatives (n × P, ``HeadState.pack`` order); their group means
        (``_mean_se``) give the estimate and its standard error, also for any linear contrast."""
        H = self.model.H
        per = self._integrands(state)
        n = per["m"].shape[0]
        v = per.get("v", np.zeros((n, H)))
        return np.concatenate([per["m"], self._dr(per["K"], per.get("N"), state.r), per["b"], v], 1)

    def derivative(self, state: HeadState, with_se=False):
        """d(m, r, b, v)/dτ as a HeadState (and its standard errors when ``with_se``)."""
        md = self.model
        if with_se:
            mean, se = _mean_se(self.derivative_draws(state))
            return HeadState.unpack(mean, md.H, md.F), HeadState.unpack(se, md.H, md.F)
        per = self._integrands(state)
        est = {k: v.mean(0) for k, v in per.items()}
        dr = self._dr(est["K"], est.get("N"), state.r)
        y = np.concatenate([est["m"], dr, est["b"], est.get("v", np.zeros(md.H))])
        return HeadState.unpack(y, md.H, md.F)

    def loss_and_gradient(self, m, A, b, v):
        """The common-random-number loss at (m, r = AAᵀ, b, v) with ω = g Aᵀ, and its exact
        gradient in (m, A, b, v) (pathwise: ∂/∂A_hk = E Σ_ℓ ∂φ/∂s_hℓ g_kℓ); for optimisers."""
        md, xp = self.model, self.xp
        st = HeadState(np.asarray(m, float), A @ A.T, np.asarray(b, float), np.asarray(v, float))
        chi, args = self._arrays(st, root=A)
        out = self._grad_code(*args)
        loss = md.delta ** 2 + float(self._np(out[0]).mean())
        H, L = md.H, md.L
        G = xp.stack(out[1:1 + H * L], -1).reshape(-1, H, L)
        gm = self._np(xp.einsum("nhl,nlf->hf", G, chi)) / G.shape[0]
        gA = self._np(xp.einsum("nhl,nlk->hk", G, self._g)) / G.shape[0]
        gb = self._np(G.sum(-1).mean(0))
        gv = (self._np(xp.stack(out[1 + H * L:1 + H * L + H], -1).mean(0))
              if md.trains_sinks else np.zeros(H))
        if not (np.isfinite(loss) and all(np.all(np.isfinite(x)) for x in (gm, gA, gb, gv))):
            raise FloatingPointError("reduced loss: non-finite value (logits too large?)")
        return loss, gm, gA, gb, gv

    def minimise(self, starts, max_iter=500, residual=True, bound=(15.0, 5.0, 150.0)):
        """Lowest loss found by L-BFGS-B from each start (HeadStates) on the exact gradient of
        the common-random-number loss; r = AAᵀ with A lower triangular (``residual=False``
        keeps r = 0). ``bound`` = (|m|, |A|, |b|, |v|) box limits keeping the logits far from
        float64 overflow. Returns (best state, its loss on these draws, all (state, loss));
        the loss on the draws it was optimised on is biased low: re-evaluate on fresh draws."""
        from scipy.optimize import minimize
        md = self.model
        H, F = md.H, md.F
        il = np.tril_indices(H)
        nA = len(il[0]) if residual else 0

        def unpack(x):
            m = x[:H * F].reshape(H, F)
            A = np.zeros((H, H))
            if residual:
                A[il] = x[H * F:H * F + nA]
            b = x[H * F + nA:H * F + nA + H]
            v = x[H * F + nA + H:] if md.trains_sinks else np.zeros(H)
            return m, A, b, v

        def fun(x):
            m, A, b, v = unpack(x)
            try:
                loss, gm, gA, gb, gv = self.loss_and_gradient(m, A, b, v)
            except FloatingPointError:      # overflowing logits: make the line search back off
                return 1e6, np.zeros_like(x)
            parts = [gm.ravel()] + ([gA[il]] if residual else []) + [gb]
            if md.trains_sinks:
                parts.append(gv)
            return loss, np.concatenate(parts)
        found = []
        for st in starts:
            A0 = np.linalg.cholesky(st.r + 1e-12 * np.eye(H)) if residual else np.zeros((H, H))
            x0 = np.concatenate([st.m.ravel()] + ([A0[il]] if residual else []) + [st.b] +
                                ([st.v] if md.trains_sinks else []))
            bm, bA, bb = bound
            box = ([(-bm, bm)] * (H * F) + [(-bA, bA)] * nA + [(-bb, bb)] * H
                   + ([(-bb, bb)] * H if md.trains_sinks else []))
            x0 = np.clip(x0, [lo for lo, _ in box], [hi for _, hi in box])
            res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=box,
                           options={"maxiter": max_iter})
            if res.fun >= 1e6:
                continue
            m, A, b, v = unpack(res.x)
            found.append((HeadState(m, A @ A.T, b, v), float(res.fun)))
        if not found:
            raise FloatingPointError("minimise: every start overflowed")
        best = min(found, key=lambda t: t[1])
        return best[0], best[1], found

    def rhs(self, y):
        """The packed right-hand side (for ODE solvers)."""
        md = self.model
        return self.derivative(HeadState.unpack(y, md.H, md.F)).pack()

    def integrate(self, state0: HeadState, t_eval, method="RK45", rtol=1e-6, atol=1e-9):
        """Integrate the (deterministic, common-random-number) flow; returns a Trajectory of
        packed states (``unpack`` with H, F)."""
        from numerics.ode.adaptive import integrate_adaptive
        return integrate_adaptive(self.rhs, state0.pack(), t_eval, method=method, rtol=rtol, atol=atol)

    def with_noise(self, sgd_noise):
        new = object.__new__(ReducedFlow)
        new.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_flow_code"})
        new.kappa = float(sgd_noise)
        return new


def mean_and_se(x):
    """Estimate and standard error from per-draw values (see ``_mean_se``)."""
    return _mean_se(x)


def _mean_se(x):
    """Mean and standard error with each group of four antithetic copies averaged first (the
    group means are independent for pseudo-random draws; for Sobol' points the error is an
    upper estimate)."""
    x = np.asarray(x, float)
    q = x.shape[0] // 4
    groups = x[:4 * q].reshape(4, q, *x.shape[1:]).mean(0)
    return groups.mean(0), groups.std(0, ddof=1) / np.sqrt(q)


def first_passage(t, values, threshold):
    """First time a sampled path crosses ``threshold`` upwards, linearly interpolated between
    samples; nan when it never does."""
    values = np.asarray(values, float)
    above = np.flatnonzero(values >= threshold)
    if len(above) == 0:
        return float("nan")
    i = above[0]
    if i == 0:
        return float(t[0])
    v0, v1 = values[i - 1], values[i]
    return float(t[i - 1] + (threshold - v0) / (v1 - v0) * (t[i] - t[i - 1]))
