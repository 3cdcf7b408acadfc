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
exactly ∂φ/∂s·Eθ and the saddle's unstable directions are not swamped by Monte Carlo bias
(``draws``). The same draws serve every evaluation: the right-hand side is deterministic, and
dm is exactly minus the m-gradient of the estimated loss. The optimiser of that loss is
``optimise.minimise``. Models are built through ``numerics.reduced.HeadReduced``, the
multi-head kind's reduced model, which wraps a ReducedFlow as ``.flow``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from theory.multihead import MultiHeadModel
from .draws import draws_for, mean_and_se
from .state import HeadState, head_state_names

__all__ = ["ReducedFlow"]


def _unpack_rows(Y, H, F):
    """Packed states (K × P) as arrays m (K,H,F), r (K,H,H), b (K,H), v (K,H); a ValueError
    unless each row is one packed state of H heads and F features."""
    iu = np.triu_indices(H)
    k, nr = H * F, len(iu[0])
    if Y.ndim != 2 or Y.shape[1] != k + nr + 2 * H:
        raise ValueError(f"states have {Y.shape[-1]} coordinates; the {H}-head, {F}-feature "
                         f"state has {k + nr + 2 * H}")
    r = np.zeros((len(Y), H, H))
    r[:, iu[0], iu[1]] = Y[:, k:k + nr]
    r = r + np.swapaxes(np.triu(r, 1), -1, -2)
    return Y[:, :k].reshape(-1, H, F), r, Y[:, k + nr:k + nr + H], Y[:, k + nr + H:]


class ReducedFlow:
    """Loss and gradient flow on (m, r, b, v) for a :class:`MultiHeadModel` and a prior.

    ``sgd_noise`` is κ = γD/N_b (0: the pure gradient flow). ``backend`` 'numpy' or 'torch'
    (generated code of either; torch runs on ``device``)."""

    def __init__(self, model: MultiHeadModel, prior, n=2**14, seed=0, sgd_noise=0.0,
                 backend="numpy", device="cpu", kind="sobol"):
        model.check_prior(prior)
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

    # --- generated code (numerics.compiled) ---------------------------------------------------
    @cached_property
    def _code(self):
        from numerics.compiled import compiled
        return compiled(self.model, self.backend)

    @property
    def _loss_code(self):
        return self._code.loss

    @property
    def _flow_code(self):
        return self._code.flow(noise=self.kappa > 0)

    @property
    def _grad_code(self):
        return self._code.gradient

    # --- evaluation --------------------------------------------------------------------------
    def _chi(self):
        xp = self.xp
        chi = self._zeta.clone() if xp is not np else self._zeta.copy()
        chi[:, 0, :] = chi[:, 0, :] + self._theta
        return chi

    @cached_property
    def _chi_draws(self):
        """χ per draw (n × L × F), built once: the draws never change (read-only)."""
        return self._chi()

    def _arrays(self, state: HeadState, root=None):
        """χ and the generated functions' arguments; ω = g Rᵀ with R = ``root`` (any RRᵀ = r)
        or the symmetric square root of r."""
        xp = self.xp
        as_x = (lambda a: xp.as_tensor(a, dtype=xp.float64, device=self.device)) if xp is not np \
            else (lambda a: np.asarray(a, float))
        R = state.residual_root() if root is None else root
        chi = self._chi_draws
        s = (self._einsum("nlf,hf->nhl", chi, as_x(state.m))
             + self._einsum("nlk,hk->nhl", self._g, as_x(R))
             + as_x(state.b)[None, :, None])
        args = [s[:, h, l] for h in range(self.model.H) for l in range(self.model.L)]
        args += [as_x(state.v[h]) for h in range(self.model.H)]
        return chi, args

    def _einsum(self, spec, *operands):
        """The backend's einsum; numpy's through BLAS (``optimize``: 10× its default loops here)."""
        if self.xp is np:
            return np.einsum(spec, *operands, optimize=True)
        return self.xp.einsum(spec, *operands)

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
        return mean_and_se(e)

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
        per = {"m": -self._einsum("nhl,nlf->nhf", G, chi).reshape(-1, H * F),
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
        (``mean_and_se``) give the estimate and its standard error, also for any linear contrast."""
        H = self.model.H
        per = self._integrands(state)
        n = per["m"].shape[0]
        v = per.get("v", np.zeros((n, H)))
        return np.concatenate([per["m"], self._dr(per["K"], per.get("N"), state.r), per["b"], v], 1)

    def derivative(self, state: HeadState, with_se=False):
        """d(m, r, b, v)/dτ as a HeadState (and its standard errors when ``with_se``)."""
        md = self.model
        if with_se:
            mean, se = mean_and_se(self.derivative_draws(state))
            return HeadState.unpack(mean, md.H, md.F), HeadState.unpack(se, md.H, md.F)
        return HeadState.unpack(self.rhs(state.pack()), md.H, md.F)

    def rhs_batch(self, Y) -> np.ndarray:
        """d(m, r, b, v)/dτ at each row of ``Y`` (K × P packed states, ``HeadState.pack`` order)
        in one call of the generated code: the logits of all K states (K × n per argument), the
        draw means taken in the backend, only the K small results converted. ω = g Rᵀ with R the
        symmetric root of each state's r (``HeadState.residual_root``). Row k is the flow at
        Y[k]; the sums run over K × n draws at once, so rows can differ in the last bits with K."""
        md, xp = self.model, self.xp
        H, L, F = md.H, md.L, md.F
        Y = np.atleast_2d(np.asarray(Y, float))
        m, r, b, v = _unpack_rows(Y, H, F)
        lam, U = np.linalg.eigh(r)
        R = (U * np.sqrt(np.clip(lam, 0, None))[:, None, :]) @ np.swapaxes(U, -1, -2)
        as_x = ((lambda a: xp.as_tensor(a, dtype=xp.float64, device=self.device)) if xp is not np
                else (lambda a: np.asarray(a, float)))
        chi, g = self._chi_draws, self._g                               # n × L × F, n × L × H
        # logits laid out (h, l, k, n): each generated-code argument is one contiguous K × n block
        s = (self._einsum("nlf,khf->hlkn", chi, as_x(m)) + self._einsum("nlj,khj->hlkn", g, as_x(R))
             + as_x(b).T[:, None, :, None])
        args = [s[h, l] for h in range(H) for l in range(L)] + [as_x(v[:, h:h + 1]) for h in range(H)]
        out = self._flow_code(*args)
        self.nfev += len(Y)
        n, K = chi.shape[0], len(Y)
        nb = H * (H + 1) // 2
        G = xp.stack(out[:H * L]).reshape(H, L, K, n)
        parts = {"m": -self._einsum("hlkn,nlf->khf", G, chi).reshape(K, H * F) / n,
                 "K": xp.stack(out[H * L:H * L + L * nb]).reshape(L, nb, K, n).sum((0, 3)).T / n,
                 "b": -G.sum((1, 3)).T / n}
        pos = H * L + L * nb
        if md.trains_sinks:
            parts["v"] = -xp.stack(out[pos:pos + H]).sum(-1).T / n
            pos += H
        if self.kappa > 0:
            parts["N"] = xp.stack(out[pos:pos + nb]).sum(-1).T / n
        parts = {k: self._np(a) for k, a in parts.items()}
        if not all(np.all(np.isfinite(a)) for a in parts.values()):
            raise FloatingPointError("reduced flow: non-finite integrand (logits too large?)")
        dr = self._dr(parts["K"], parts.get("N"), r)
        return np.concatenate([parts["m"], dr, parts["b"], parts.get("v", np.zeros((K, H)))], 1)

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
        gm = self._np(self._einsum("nhl,nlf->hf", G, chi)) / G.shape[0]
        gA = self._np(self._einsum("nhl,nlk->hk", G, self._g)) / G.shape[0]
        gb = self._np(G.sum(-1).mean(0))
        gv = (self._np(xp.stack(out[1 + H * L:1 + H * L + H], -1).mean(0))
              if md.trains_sinks else np.zeros(H))
        if not (np.isfinite(loss) and all(np.all(np.isfinite(x)) for x in (gm, gA, gb, gv))):
            raise FloatingPointError("reduced loss: non-finite value (logits too large?)")
        return loss, gm, gA, gb, gv

    def rhs(self, y):
        """The packed right-hand side (for ODE solvers): ``rhs_batch`` at the one state y."""
        return self.rhs_batch(np.asarray(y, float)[None, :])[0]

    def integrate(self, state0: HeadState, t_eval, method: str = "RK45", rtol: float = 1e-6,
                  atol: float = 1e-9, reached: Callable[[float, HeadState], bool] | None = None,
                  chunk: int | None = None):
        """The (deterministic, common-random-number) flow from ``state0`` by
        ``numerics.ode.integrate``: its Trajectory of packed states (``HeadState.unpack`` with
        H, F; coordinates named by ``head_state_names``), ending with a status, never raising
        for a numerical ending. ``reached(t, state)`` ends it at the first output time where it
        holds (status 'event'); with ``chunk`` the solver restarts every ``chunk`` output
        intervals from the state reached."""
        from numerics.ode import integrate
        H, F = self.model.H, self.model.F
        event = None if reached is None else (lambda t, y: bool(reached(t, HeadState.unpack(y, H, F))))
        return integrate(self.rhs, state0.pack(), t_eval, method=method, rtol=rtol, atol=atol,
                         reached=event, chunk=chunk, names=head_state_names(H, F))

    def with_noise(self, sgd_noise):
        """The same flow (same draws) with SGD-noise strength κ = ``sgd_noise`` (≥ 0)."""
        if not (np.isfinite(sgd_noise) and sgd_noise >= 0):
            raise ValueError(f"sgd_noise={sgd_noise!r} must be ≥ 0 (it is γD/N_b)")
        new = object.__new__(ReducedFlow)
        new.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_flow_code"})
        new.kappa = float(sgd_noise)
        return new
