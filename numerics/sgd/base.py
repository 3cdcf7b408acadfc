"""The SGD skeleton every model kind shares: configuration, device and generator set-up, the
recording loop, the fresh-sample test loss in law, and the result type.

A model kind (token-sum ``numerics.sgd.token_sum``, multi-head ``numerics.sgd.multihead``)
supplies, for its direct and its Gram-matrix simulator,

- ``gram()``: the Gram matrix (S × n × n) of the model's vectors, hidden vectors first;
- ``step()``: one online-SGD step (its own random draws, in a fixed order);
- ``order_parameters()``: name → tensor (S, …), the same names on the direct and Gram sides;
- ``_embed(Z, J, V)`` and ``_residual(P, onehot)``: how a sample's tokens, prediction and label
  follow from standard Gaussian coordinates Z in the n-dimensional frame V (rows: the vectors).

Every prediction and label depends on a token x only through its projections on the model's
vectors, so the test loss E(y − ŷ)² is computed exactly in law from n coordinates per token:
with V Vᵀ = G (``psd_factor``), a token x = x_E + x_⊥ has x_E = s·z + μ in the span E and
projections P = x_E Vᵀ; x_⊥ never enters.

Also here, shared with ``numerics.montecarlo`` and ``numerics.pgd``: ``resolve_device``, the
token-sum model's generated per-token code (``model_code``) and ``realise_overlaps``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from theory.model import Model

__all__ = ["SimulationConfig", "SGDResult", "SGDSimulator", "resolve_device", "psd_factor",
           "realise_overlaps", "model_code", "check_device_name"]

DTYPES = ("float32", "float64")


def resolve_device(device: str = "auto") -> str:
    """'auto' picks CUDA when available, else CPU; 'cpu', 'cuda' and 'cuda:N' are taken as
    given (CUDA ones only when a CUDA device is present)."""
    import torch
    check_device_name(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} requested but no CUDA device is available; "
                         "allowed here: 'auto', 'cpu'")
    return device


def check_device_name(device) -> None:
    """A ValueError unless ``device`` is 'auto', 'cpu', 'cuda' or 'cuda:N'."""
    ok = device in ("auto", "cpu", "cuda") or (isinstance(device, str) and device.startswith("cuda:")
                                               and device[5:].isdigit())
    if not ok:
        raise ValueError(f"device={device!r}; allowed: 'auto', 'cpu', 'cuda', 'cuda:N'")


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


@dataclass(frozen=True, kw_only=True)
class SimulationConfig:
    """What every online-SGD simulation is configured by (keywords only).

    lr: step γ (> 0); the flow's time is t = step·γ. steps: number of SGD steps (≥ 1).
    batch: fresh samples per step (≥ 1). seeds: independent runs, batched (≥ 1). seed: the
    generator's seed (integer ≥ 0). record_every: steps between records (≥ 1; the last step is
    always recorded). n_test: fresh samples per seed for the test loss at each record (0: none).
    device: 'auto', 'cpu', 'cuda' or 'cuda:N'. dtype: 'float32' or 'float64'. init: the initial
    state, None for the kind's default; each model kind's simulator says what it accepts
    (``simulate``)."""

    lr: float
    steps: int
    batch: int = 1
    seeds: int = 8
    seed: int = 0
    record_every: int = 100
    n_test: int = 0
    device: str = "auto"
    dtype: str = "float64"
    init: Any = None

    def __post_init__(self) -> None:
        name = type(self).__name__
        if isinstance(self.lr, bool) or not (isinstance(self.lr, (int, float, np.number))
                                             and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"{name}: lr={self.lr!r}; allowed: a finite number > 0")
        for key in ("steps", "batch", "seeds", "record_every"):
            v = getattr(self, key)
            if not (_is_int(v) and v >= 1):
                raise ValueError(f"{name}: {key}={v!r}; allowed: an integer ≥ 1")
        for key in ("seed", "n_test"):
            v = getattr(self, key)
            if not (_is_int(v) and v >= 0):
                raise ValueError(f"{name}: {key}={v!r}; allowed: an integer ≥ 0")
        check_device_name(self.device)
        if self.dtype not in DTYPES:
            raise ValueError(f"{name}: dtype={self.dtype!r}; allowed: 'float32', 'float64'")


def psd_factor(M, rel_jitter: float = 1e-13):
    """M_f with M_f M_fᵀ = M for a batch of PSD matrices: Cholesky (fast) of M plus a relative
    jitter far below float64 statistical resolution; entries where it fails (rank-deficient
    beyond the jitter) fall back to the eigen-square-root."""
    import torch
    n = M.shape[-1]
    scale = M.diagonal(dim1=-2, dim2=-1).sum(-1).clamp(min=1e-300) / n
    eye = torch.eye(n, dtype=M.dtype, device=M.device)
    Lc, info = torch.linalg.cholesky_ex(M + (rel_jitter * scale)[..., None, None] * eye)
    bad = info != 0
    if bool(bad.any()):
        lam, U = torch.linalg.eigh(M[bad])
        Lc = Lc.clone()
        Lc[bad] = U * lam.clamp(min=0).sqrt().unsqueeze(-2)
    return Lc


@dataclass
class SGDResult:
    """Named order parameters of an SGD run on the flow's own time axis.

    t[record] = step·lr (for multi-head attention the flow time τ = γ·t); state[name] an array
    [record, seed, …] for each name in ``names`` (token-sum: the model's overlaps, e.g. kappa, nu,
    theta, eta, rho; multi-head: m (H × F), r (H × H), b, v); loss[record, seed] the fresh-sample
    test loss E(y − ŷ)² on n_test samples (None when n_test = 0); extras: how the run ended (and,
    multi-head, ``sgd_noise``: κ = γD/N_b, the strength of the reduced flow's SGD-noise term)."""

    t: np.ndarray
    state: dict[str, np.ndarray]
    loss: np.ndarray | None
    names: tuple[str, ...]
    steps_per_second: float = float("nan")
    extras: dict = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.state:
            raise KeyError(f"{name!r}; allowed: {', '.join(self.names)}")
        return self.state[name]

    def _values(self, name: str | None) -> np.ndarray:
        return self.stacked() if name is None else self[name]

    def mean(self, name: str | None = None) -> np.ndarray:
        """Seed mean of one order parameter [record, …], or of all scalar ones [record, K]."""
        return self._values(name).mean(1)

    def stderr(self, name: str | None = None) -> np.ndarray:
        """Standard error of the seed mean (NaN with a single seed)."""
        x = self._values(name)
        n = x.shape[1]
        return x.std(1, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(x[:, 0], np.nan)

    def stacked(self) -> np.ndarray:
        """The scalar order parameters in ``names`` order, [record, seed, K]."""
        wide = [k for k in self.names if self.state[k].ndim != 2]
        if wide:
            raise ValueError(f"stacked() needs scalar order parameters; {wide} are not "
                             "(use res[name])")
        return np.stack([self.state[k] for k in self.names], -1)

    def head_state(self, k: int, seed: int):
        """The multi-head ``HeadState`` (m, r, b, v) of one seed at record k."""
        from ..multihead import HeadState
        if set(self.names) != {"m", "r", "b", "v"}:
            raise ValueError(f"head_state needs the multi-head order parameters m, r, b, v; "
                             f"this result has {self.names}")
        return HeadState(*(self.state[key][k, seed] for key in ("m", "r", "b", "v")))


class SGDSimulator:
    """Device, dtype, explicitly seeded generator, recording loop and test loss of an online
    SGD simulation batched over S independent seeds. A model kind sets ``self.L`` (tokens per
    sample) and implements ``gram``, ``step``, ``order_parameters``, ``_embed`` and
    ``_residual`` (module docstring)."""

    config_class = SimulationConfig
    """The config class every SGD simulator takes (``numerics.simulate`` checks it)."""

    def __init__(self, config: SimulationConfig):
        import torch
        self.torch, self.cfg = torch, config
        self.device = resolve_device(config.device)
        self.dtype = getattr(torch, config.dtype)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(int(config.seed))

    # -- what a model kind supplies ---------------------------------------------------------
    def gram(self):
        """Gram matrix (S × n × n) of the model's vectors, hidden vectors first."""
        raise NotImplementedError

    def step(self) -> None:
        raise NotImplementedError

    def order_parameters(self) -> dict:
        """Name → tensor (S, …)."""
        raise NotImplementedError

    def _embed(self, Z, J, V):
        """Frame coordinates X (S × m × L × n) of m samples from standard Z and signal
        locations J, and the one-hot of J (S × m × L)."""
        raise NotImplementedError

    def _residual(self, P, onehot):
        """ŷ − y per sample (S × m), label noise included, from the projections P."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------
    def _draw_tokens(self, m: int, n: int):
        """Standard coordinates Z (S × m × L × n) and signal locations J (S × m), in this order."""
        torch, S = self.torch, self.cfg.seeds
        Z = torch.randn(S, m, self.L, n, generator=self.gen, dtype=self.dtype, device=self.device)
        J = torch.randint(self.L, (S, m), generator=self.gen, device=self.device)
        return Z, J

    def test_loss(self, m: int):
        """Fresh-sample loss E(y − ŷ)² per seed (S,), from m samples drawn exactly in law in the
        n-dimensional frame V of the model's vectors (V Vᵀ = gram())."""
        V = psd_factor(self.gram())
        Z, J = self._draw_tokens(m, V.shape[-1])
        X, onehot = self._embed(Z, J, V)
        P = X @ V.transpose(1, 2)[:, None]
        return (self._residual(P, onehot) ** 2).mean(1)

    def _record(self) -> dict[str, np.ndarray]:
        return {k: v.cpu().numpy() for k, v in self.order_parameters().items()}

    def run(self, progress: Callable[[int, int], None] | None = None,
            until: Callable[[dict[str, np.ndarray]], bool] | None = None) -> SGDResult:
        """Run ``steps`` steps, recording every ``record_every`` and at the last step.

        progress(k, steps) is called at each record; until(state) (name → array over seeds) may
        stop the run at a record by returning True. A non-finite order parameter raises
        FloatingPointError."""
        cfg = self.cfg
        times, states, losses = [], [], []

        def record(k):
            times.append(k * cfg.lr)
            states.append(self._record())
            if not all(np.all(np.isfinite(v)) for v in states[-1].values()):
                raise FloatingPointError(f"SGD diverged at step {k} (lr={cfg.lr})")
            if cfg.n_test:       # after the check: no test loss of a diverged state
                losses.append(self.test_loss(cfg.n_test).cpu().numpy())

        k, stopped = 0, False
        with self.torch.no_grad():
            record(0)
            start = time.perf_counter()
            for k in range(1, cfg.steps + 1):
                self.step()
                if k % cfg.record_every == 0 or k == cfg.steps:
                    record(k)
                    if progress is not None:
                        progress(k, cfg.steps)
                    if until is not None and until(states[-1]):
                        stopped = k < cfg.steps
                        break
            elapsed = time.perf_counter() - start
        names = tuple(states[0])
        return SGDResult(np.array(times), {n: np.stack([s[n] for s in states]) for n in names},
                         np.array(losses) if losses else None, names, k / max(elapsed, 1e-12),
                         {"simulator": type(self).__name__, "steps_done": k, "stopped_early": stopped,
                          "device": self.device, "dtype": cfg.dtype, **self.extras()})

    def extras(self) -> dict:
        """What a model kind adds to the result's ``extras`` (e.g. the multi-head SGD-noise
        strength)."""
        return {}


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


def model_code(model: Model):
    """The (cached) generated per-token code of ``model``: ``compiled(model, 'torch').token_code``."""
    from numerics.compiled import compiled
    return compiled(model, "torch").token_code
