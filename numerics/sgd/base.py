"""Shared pieces of the SGD simulators: configuration, results, devices, model code."""

from __future__ import annotations

from dataclasses import dataclass, field
import time
from collections.abc import Mapping

import numpy as np
import sympy as sp

from theory.derived import memo_by_model
from theory.model import Model, projection

__all__ = ["SGDConfig", "SGDResult", "resolve_device", "realise_overlaps", "ModelCode",
           "model_code", "TokenSumSimulator"]


def resolve_device(device: str = "auto") -> str:
    """'auto' picks CUDA when available, else CPU."""
    import torch
    if device not in ("auto", "cpu", "cuda") and not str(device).startswith("cuda:"):
        raise ValueError(f"device={device!r}; allowed: 'auto', 'cpu', 'cuda'")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device='cuda' requested but no CUDA device is available")
    return device


@dataclass(frozen=True)
class SGDConfig:
    """Online SGD on fresh samples: w ← w − lr·∇ℓ (free) or w ← (w − lr·P⊥∇ℓ)/‖·‖ (sphere),
    ℓ the squared error averaged over a batch; time t = step·lr."""

    params: Mapping[str, float]
    lr: float
    steps: int
    seeds: int = 8
    seed: int = 0
    batch: int = 1
    record_every: int = 100
    n_test: int = 0
    init: Mapping[str, float] | str = "random"
    device: str = "auto"
    dtype: str = "float64"

    def __post_init__(self):
        for name, v, lo in (("lr", self.lr, 0), ("steps", self.steps, 0), ("seeds", self.seeds, 0),
                            ("batch", self.batch, 0), ("record_every", self.record_every, 0)):
            if not (v > lo) or not np.isfinite(v):
                raise ValueError(f"SGDConfig: {name}={v!r} must be > {lo}")
        if self.n_test < 0:
            raise ValueError(f"SGDConfig: n_test={self.n_test} must be >= 0")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"SGDConfig: dtype={self.dtype!r}; allowed: 'float32', 'float64'")


@dataclass
class SGDResult:
    """Order parameters q[record, seed, k] (model.order_parameters order) at times t[record];
    test_risk[record, seed] when n_test > 0."""

    t: np.ndarray
    q: np.ndarray
    test_risk: np.ndarray | None
    names: tuple
    steps_per_second: float = float("nan")
    extras: dict = field(default_factory=dict)

    def mean(self):
        return self.q.mean(1)

    def stderr(self):
        n = self.q.shape[1]
        return self.q.std(1, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(self.q[:, 0], np.nan)


def realise_overlaps(model: Model, overlaps: Mapping[str, float]) -> np.ndarray:
    """Coordinates (rows: hidden vectors then trainable) of vectors with the given Gram matrix,
    hidden vectors = first standard basis vectors (Cholesky, lower triangular)."""
    checked = model.check_overlaps(overlaps)
    names = tuple(model.hidden) + tuple(v.name for v in model.trainable)
    subs = {s: checked[s.name] for s in model.order_parameters}
    G = np.array([[float(model.inner(a, b).subs(subs)) for b in names] for a in names])
    n = len(names)
    try:
        C = np.linalg.cholesky(G + 1e-13 * np.eye(n))
    except np.linalg.LinAlgError:
        raise ValueError(f"overlaps {checked} are not realisable (Gram matrix not PSD)") from None
    return C


class ModelCode:
    """Generated torch code for the per-token student t, its derivatives ∂t/∂(xᵀw) for the
    trainable w, and the label s, all as functions of the token's projections."""

    def __init__(self, model: Model):
        from numerics.codegen import generate
        self.model = model
        self.trainable = tuple(v.name for v in model.trainable)
        self.hidden = tuple(model.hidden)
        params = model.param_symbols
        pw = [projection(n) for n in self.trainable]
        ph = [projection(n) for n in self.hidden]
        t = model.student
        self.student = generate(list(params) + pw + ph, [t] + [sp.diff(t, p) for p in pw],
                                backend="torch")
        self.label = generate(list(params) + ph, [model.label], backend="torch")


@memo_by_model
def model_code(model: Model) -> ModelCode:
    """The (cached) generated per-token code of ``model``."""
    return ModelCode(model)


class TokenSumSimulator:
    """What every online-SGD simulator of a single-location, token-sum model shares: the
    validated parameters, the generated per-token code, the token laws, the random stream
    (explicit seed), the prediction from projections and the recording loop. Subclasses keep
    their own state and implement ``step``, ``overlaps`` and ``test_risk``."""

    def __init__(self, model: Model, config: SGDConfig):
        import torch
        self.torch = torch
        self.model, self.cfg = model, config
        self.params = model.check_params(config.params)
        self.d = int(self.params[model.dimension.name])
        self.code = model_code(model)
        self.p, self.q = len(self.code.trainable), len(self.code.hidden)
        if self.d < self.p + self.q:
            raise ValueError(f"dimension d={self.d} must be >= {self.p + self.q} "
                             "(number of trainable plus hidden vectors)")
        self.device = resolve_device(config.device)
        self.dtype = getattr(torch, config.dtype)
        subs = {s: self.params[s.name] for s in model.param_symbols}
        ev = lambda e: float(sp.sympify(e).subs(subs))
        self.L = int(ev(model.data.L))
        self.pvals = [self.params[s.name] for s in model.param_symbols]
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(int(config.seed))
        data = model.data
        self.scale_signal, self.scale_noise = ev(data.signal.scale), ev(data.noise.scale)
        idx = {h: i for i, h in enumerate(self.code.hidden)}
        self.mu_signal = torch.zeros(self.q, dtype=self.dtype, device=self.device)
        self.mu_noise = torch.zeros(self.q, dtype=self.dtype, device=self.device)
        for a, c in data.signal.mean.items():
            self.mu_signal[idx[a]] = ev(c)
        for a, c in data.noise.mean.items():
            self.mu_noise[idx[a]] = ev(c)
        self.label_noise = ev(model.label_noise)
        self.sphere = torch.tensor([v.constraint == "sphere" for v in model.trainable],
                                   device=self.device)
        self.all_sphere = bool(self.sphere.all())

    def _token_terms(self, J):
        """Per-token scale and mean (coefficients on the hidden basis) from the location J."""
        torch = self.torch
        onehot = torch.nn.functional.one_hot(J, self.L).to(self.dtype)         # S,B,L
        scale = self.scale_noise + onehot * (self.scale_signal - self.scale_noise)
        mu = self.mu_noise + onehot[..., None] * (self.mu_signal - self.mu_noise)  # S,B,L,q
        return onehot, scale, mu

    def _predict(self, Pw, Ph, onehot):
        """ŷ − s(x_J) and ∂t/∂(xᵀw) from the projections on trainable (Pw) and hidden (Ph)."""
        outs = self.code.student(*self.pvals, *Pw.unbind(-1), *Ph.unbind(-1))
        t, dts = outs[0], outs[1:]
        PhJ = (Ph * onehot[..., None]).sum(-2)
        y = self.code.label(*self.pvals, *PhJ.unbind(-1))[0]
        return t.sum(-1) - y, dts

    def run(self, progress=None) -> SGDResult:
        cfg = self.cfg
        ts, qs, risks = [], [], []

        def record(k):
            ts.append(k * cfg.lr)
            qs.append(self.overlaps().cpu().numpy())
            if cfg.n_test:
                risks.append(self.test_risk(cfg.n_test).cpu().numpy())

        record(0)
        start = time.perf_counter()
        with self.torch.no_grad():
            for k in range(1, cfg.steps + 1):
                self.step()
                if k % cfg.record_every == 0 or k == cfg.steps:
                    record(k)
                    if not np.all(np.isfinite(qs[-1])):
                        raise FloatingPointError(f"SGD diverged at step {k} (lr={cfg.lr})")
                    if progress is not None:
                        progress(k, cfg.steps)
        elapsed = time.perf_counter() - start
        names = tuple(s.name for s in self.model.order_parameters)
        return SGDResult(np.array(ts), np.array(qs), np.array(risks) if risks else None, names,
                         cfg.steps / max(elapsed, 1e-12))
