"""The multi-head reduced model (Sagitova et al. 2026) behind the common interface.

State: m (H × F), the upper triangle of r (H × H, PSD), b (H), v (H), packed as
``HeadState.pack`` packs them and named "m[h,f]", "r[h,k]" (h ≤ k), "b[h]", "v[h]"
(``numerics.multihead.head_state_names``); every method taking a state y also takes a
HeadState. Loss and flow are ``numerics.multihead.ReducedFlow``'s quasi-Monte Carlo estimates
with common random numbers (the reduced model's ``.flow``: the one way a ReducedFlow is built
for claims and the command line): the loss comes with its standard error; the right-hand side
is a deterministic function of the state (the same draws at every evaluation), so its Jacobian
is taken by central differences, and the Hessian of the loss by central differences of the
common-random-number loss. At a singular r (e.g. r = 0) the Jacobian's r-columns are those of
the eigenvalue-clipped extension ReducedFlow evaluates; there the flow is block-triangular
(dr/dτ = −(Mr + rM) vanishes with r), so the eigenvalues, hence the class, do not depend on
those columns. The Hessian's entries whose stencil leaves the PSD cone are NaN.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import cached_property

import numpy as np
import sympy as sp

from numerics.expectation import Estimate
from numerics.multihead import HeadState, ReducedFlow, head_state_names, mean_and_se
from numerics.ode import Trajectory
from theory.derived import derive
from theory.multihead import MultiHeadModel

from .base import Equation, ReducedModel

__all__ = ["HeadReduced"]


class HeadReduced(ReducedModel):
    """The reduced flow of H attention heads on (m, r, b, v) for a :class:`MultiHeadModel` and
    a prior of the latent θ (``theory.models.sagitova2026``: DiscretePrior, GaussianPrior).

    ``n``, ``seed``, ``sgd_noise``, ``backend``, ``kind``: as ``ReducedFlow`` (n quasi-Monte
    Carlo draws, κ = γD/N_b, 'sobol' or pseudo-'random' base points). ``prior=None`` leaves the
    model symbolic: equations only. ``step``: the central-difference step of ``jacobian`` and
    ``hessian``."""

    time = "tau"

    def __init__(self, model: MultiHeadModel, prior=None, *, n: int = 2**14, seed: int = 0,
                 sgd_noise: float = 0.0, backend: str = "numpy", kind: str = "sobol", name: str = "",
                 default_state: Mapping[str, float] | None = None, step: float = 1e-4):
        if not isinstance(model, MultiHeadModel):
            raise TypeError(f"model must be a MultiHeadModel, got {type(model).__name__}")
        if prior is not None:
            model.check_prior(prior)
        if not (np.isfinite(step) and step > 0):
            raise ValueError(f"step={step!r} must be > 0")
        self.model, self.prior = model, prior
        self.name = name or f"multihead(H={model.H}, L={model.L}, F={model.F}, {model.activation.name})"
        self._settings = {"n": n, "seed": seed, "sgd_noise": float(sgd_noise), "backend": backend,
                          "kind": kind}
        self.step = float(step)
        self._default = dict(default_state or {})
        if prior is not None:
            _ = self.flow           # draws and checks n, sgd_noise, backend, kind now

    @cached_property
    def flow(self) -> ReducedFlow:
        if self.prior is None:
            raise ValueError(f"{self.name}: no prior; give prior= (e.g. flipping_spike(4.0, 1.5)) "
                             "for numerical evaluation")
        return ReducedFlow(self.model, self.prior, **self._settings)

    def compile(self) -> ReducedFlow:
        return self.flow

    # --- state ---------------------------------------------------------------------------
    @cached_property
    def state_names(self) -> tuple[str, ...]:
        return head_state_names(self.model.H, self.model.F)

    @property
    def params(self) -> dict[str, object]:
        md = self.model
        return {"H": md.H, "L": md.L, "F": md.F, "activation": md.activation.name,
                "output": md.output, "delta": md.delta, **self._settings,
                "prior": repr(self.prior)}

    @property
    def free(self) -> tuple[int, ...]:
        """Every coordinate but the sink logits v when the activation does not train them."""
        n_v = 0 if self.model.trains_sinks else self.model.H
        return tuple(range(len(self.state_names) - n_v))

    def default_state(self) -> np.ndarray:
        return self.pack(self._default, base=np.zeros(len(self.state_names)))

    def _pack_object(self, values: object) -> np.ndarray | None:
        return values.pack() if isinstance(values, HeadState) else None

    def _vector(self, y) -> np.ndarray:
        return super()._vector(y.pack() if isinstance(y, HeadState) else y)

    def _state(self, y) -> HeadState:
        """y as a HeadState: a HeadState of this model's shape as it is (no pack/unpack round
        trip), a packed state unpacked."""
        if isinstance(y, HeadState):
            if y.m.shape != (self.model.H, self.model.F):
                raise ValueError(f"{self.name}: state.m has shape {y.m.shape}; allowed: "
                                 f"({self.model.H}, {self.model.F})")
            return y
        return self.unpack(y)

    def states(self, trajectory: Trajectory) -> list[HeadState]:
        """The HeadState at each time of a trajectory of this model (``integrate``)."""
        return [self.unpack(y) for y in trajectory.y]

    def unpack(self, y: np.ndarray) -> HeadState:
        return HeadState.unpack(self._vector(y), self.model.H, self.model.F)

    def check_state(self, y: np.ndarray) -> np.ndarray:
        """y if finite with r PSD; else a ValueError naming the coordinate (a non-finite one, a
        negative r[h,h], an r[h,k] with r[h,k]² > r[h,h]·r[k,k], or r as a whole)."""
        y = self._vector(y)
        bad = np.flatnonzero(~np.isfinite(y))
        if len(bad):
            i = bad[0]
            raise ValueError(f"state coordinate {self.state_names[i]}={float(y[i])} is not finite; "
                             "allowed: a finite real")
        r = self.unpack(y).r
        tol = 1e-9 * max(1.0, float(np.abs(r).max()))
        H = self.model.H
        for h in range(H):
            if r[h, h] < -tol:
                raise ValueError(f"state coordinate r[{h},{h}]={r[h, h]:.6g} is out of range; "
                                 "allowed: ≥ 0 (r = Q − mmᵀ is PSD)")
        for h in range(H):
            for k in range(h + 1, H):
                if r[h, k] ** 2 > r[h, h] * r[k, k] + tol:
                    raise ValueError(
                        f"state coordinate r[{h},{k}]={r[h, k]:.6g} is out of range; allowed: "
                        f"|r[{h},{k}]| ≤ √(r[{h},{h}]·r[{k},{k}]) = {np.sqrt(r[h, h] * r[k, k]):.6g} "
                        "(r is PSD)")
        lam = np.linalg.eigvalsh(r).min()
        if lam < -tol:
            raise ValueError(f"state coordinates r[h,k] give r an eigenvalue {lam:.3g} < 0; "
                             "allowed: r PSD")
        return y

    # --- numerics ------------------------------------------------------------------------
    def loss(self, y: np.ndarray | HeadState) -> tuple[float, float]:
        """(estimate, standard error) of Δ² + E φ (``ReducedFlow.loss``)."""
        mean, se = self.flow.loss(self._state(y))
        return float(mean), float(se)

    def rhs(self, y: np.ndarray | HeadState) -> np.ndarray:
        return np.asarray(self.flow.rhs(self._vector(y)), float)

    def rhs_estimate(self, y: np.ndarray | HeadState, tol: float | None = None) -> Estimate:
        """The flow's right-hand side with its standard errors (the draws' antithetic group
        means, ``mean_and_se``); the value is ``rhs``'s. ``tol`` is for quadrature errors, of
        which a sampled flow has none."""
        _, se = mean_and_se(self.rhs_draws(y))
        value = self.rhs(y)
        return Estimate(value, np.broadcast_to(np.asarray(se, float), value.shape).copy(),
                        quadrature_error=np.zeros_like(value))

    def rhs_draws(self, y: np.ndarray | HeadState) -> np.ndarray:
        """Per-draw right-hand sides (n × P, ``state_names`` order; antithetic groups not yet
        averaged): ``numerics.multihead.mean_and_se`` of them, or of any linear contrast of
        them, gives the estimate and its standard error."""
        return self.flow.derivative_draws(self._state(y))

    def with_noise(self, sgd_noise: float) -> HeadReduced:
        """The same model on the same draws with SGD-noise strength κ = ``sgd_noise`` ≥ 0
        (``ReducedFlow.with_noise``)."""
        flow = self.flow.with_noise(sgd_noise)
        new = copy.copy(self)
        new._settings = {**self._settings, "sgd_noise": float(sgd_noise)}
        new.__dict__["flow"] = flow
        return new

    def jacobian(self, y: np.ndarray) -> np.ndarray:
        """∂f/∂y by central differences of the deterministic (common-random-number) rhs."""
        y = self._vector(y)
        h = self.step
        cols = []
        for j in range(y.size):
            e = np.zeros_like(y)
            e[j] = h
            cols.append((self.rhs(y + e) - self.rhs(y - e)) / (2 * h))
        return np.stack(cols, 1)

    def _crn_loss(self, y) -> float:
        """The common-random-number loss; NaN outside the PSD cone of r, where the estimator
        (ω = √r g with r's eigenvalues clipped at 0) has a kink and no second derivative."""
        st = self.unpack(y)
        if np.linalg.eigvalsh(st.r).min() < -1e-12:
            return float("nan")
        return float(self.flow.loss_samples(st).mean())

    def hessian(self, y: np.ndarray) -> np.ndarray:
        """∂²L/∂y² of the common-random-number loss by central differences. Entries whose
        stencil leaves the PSD cone of r (r-entries at a singular r, e.g. r = 0) are NaN: the
        estimator has a kink there."""
        y = self._vector(y)
        n, h = y.size, self.step
        E = np.eye(n) * h
        f = self._crn_loss
        f0 = f(y)
        out = np.zeros((n, n))
        for i in range(n):
            out[i, i] = (f(y + E[i]) - 2 * f0 + f(y - E[i])) / h**2
            for j in range(i + 1, n):
                out[i, j] = out[j, i] = (f(y + E[i] + E[j]) - f(y + E[i] - E[j])
                                         - f(y - E[i] + E[j]) + f(y - E[i] - E[j])) / (4 * h**2)
        return out

    def default_box(self) -> list[tuple[float, float]]:
        """m, b (and trained v) in [−3, 3], r[h,h] in [0, 1], r[h,k] in [−1, 1]."""
        box = []
        for i in self.free:
            name = self.state_names[i]
            if name.startswith("r["):
                h, k = name[2:-1].split(",")
                box.append((0.0, 1.0) if h == k else (-1.0, 1.0))
            else:
                box.append((-3.0, 3.0))
        return box

    def _integrate_defaults(self) -> dict:
        return {"method": "RK45", "rtol": 1e-6, "atol": 1e-9}

    # --- symbolic ------------------------------------------------------------------------
    def equations(self, saddle: bool = True) -> list[Equation]:
        """Token weights w_ℓ, the conditional loss φ, the flow on (m, r, b, v) (module
        docstring of ``numerics.multihead``) and, with ``saddle``, the saddle Hessian."""
        md = derive(self.model)
        eqs = [Equation(f"w_{l}", f"w_{{{l}}}", w) for l, w in enumerate(md.token_weights)]
        eqs.append(Equation("phi", r"\phi", md.conditional_loss))
        eqs += self._flow_equations()
        if saddle:
            eqs += self.saddle_equations()
        return eqs

    def _flow_equations(self) -> list[Equation]:
        kappa = self._settings["sgd_noise"]
        noise = f" + {kappa:g}·E N" if kappa > 0 else ""
        noise_tex = rf" + {kappa:g}\,\mathbb{{E}}\,N" if kappa > 0 else ""
        eqs = [
            Equation("dm_hf/dtau", r"\frac{dm_{hf}}{d\tau}", "-E sum_l dphi/ds_hl * chi_lf",
                     r"-\mathbb{E}\sum_\ell \frac{\partial\phi}{\partial s_{h\ell}}\,\chi_{\ell f}"),
            Equation("dr/dtau", r"\frac{dr}{d\tau}",
                     f"-(M r + r M){noise},  M_hk = E sum_l d2phi/ds_hl ds_kl",
                     rf"-(Mr + rM){noise_tex},\quad M_{{hk}} = \mathbb{{E}}\sum_\ell "
                     r"\frac{\partial^2\phi}{\partial s_{h\ell}\,\partial s_{k\ell}}"),
            Equation("db_h/dtau", r"\frac{db_h}{d\tau}", "-E sum_l dphi/ds_hl",
                     r"-\mathbb{E}\sum_\ell \frac{\partial\phi}{\partial s_{h\ell}}")]
        if self.model.trains_sinks:
            eqs.append(Equation("dv_h/dtau", r"\frac{dv_h}{d\tau}", "-E dphi/dv_h",
                                r"-\mathbb{E}\,\frac{\partial\phi}{\partial v_h}"))
        eqs.append(Equation("s_hl", r"s_{h\ell}",
                            "m_h.chi_l + omega_hl + b_h,  chi_l = theta[l = 0] + zeta_l,  "
                            "omega = R g, R R^T = r",
                            r"m_h\cdot\chi_\ell + \omega_{h\ell} + b_h,\quad \chi_\ell = "
                            r"\theta\,[\ell = 0] + \zeta_\ell,\quad \omega = Rg,\ RR^\top = r"))
        return eqs

    def saddle_equations(self) -> list[Equation]:
        """The saddle Hessian in m at m = r = b = 0 (symbolic in θ's moments, and at the prior's
        moments when there is a prior), from the model's own loss (``theory.multihead.
        saddle_hessian``: any activation, either output convention, sinks at v = 0); its rows
        and columns are the coordinates m[h,f] in ``state_names`` order, its symbols mu[f] and
        S[f,g] θ's mean and second moment, every index 0-based as in the state's names."""
        from theory.models.sagitova2026 import at_prior
        from theory.multihead import saddle_hessian
        Hm, ms, mu, S = saddle_hessian(self.model)
        where = f"d2L/dm2 at m = r = b = 0, v = 0 (m order {[str(x) for x in ms]})"
        eqs = [Equation(f"saddle Hessian {where}", r"\left.\frac{\partial^2 L}{\partial m^2}"
                        r"\right|_{m = r = b = 0}", Hm)]
        if self.prior is not None:
            eqs.append(Equation("saddle Hessian at the prior's moments",
                                r"\left.\frac{\partial^2 L}{\partial m^2}\right|_{0,\ \theta\sim P}",
                                sp.Matrix(at_prior(Hm, self.prior, mu, S))))
        return eqs

    def latex(self) -> dict[str, str]:
        """As ``equations()``, the saddle Hessian included."""
        return {eq.lhs_latex: eq.latex_rhs() for eq in self.equations()}
