"""Dohmatob's kind (Dohmatob 2025): a ``theory.models.dohmatob2025.DohmatobModel``, R̄ of
Prop. 1 for its link σ stated in the overlaps (µ, ν, ζ, η, ρ), and its samplers as simulators
of the one calling convention ``numerics.simulate(declaration, params, config, method)``:

* 'rem': the risk at e^{αd} dummy tokens by extreme-value sampling (``numerics.rem``);
* 'rem-torch': the same estimator in torch, on any device (``numerics.rem_torch``);
* 'brute-force': every dummy token's projections drawn (small αd; ``numerics.rem``);
* 'direct': whole tokens in R^d at vectors realising the overlaps (``numerics.rem``);
  these four take a :class:`RiskSampling` and return an ``Estimate`` (mean, standard error);
* 'pgd': projected gradient descent on the empirical risk of n samples in R^d
  (``numerics.softmax_attention``), a :class:`PGDConfig`, an ``SGDResult``.

The kind's Monte Carlo risk is 'rem' at a state."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from theory.derived import memo_by_model
from theory.model import check_params
from theory.models import dohmatob2025 as dm

from ..codegen import generate
from ..compiled import compile_derivation
from ..expectation import Estimate
from ..reduced.registry import reduce_dohmatob
from ..rem import brute_force_softmax_risk, direct_softmax_risk, softmax_risk_mc
from ..rem_torch import softmax_risk_mc_torch
from ..sgd.base import DTYPES, SGDResult, check_device_name
from ..softmax_attention import pgd_empirical
from ..kinds import Kind, register

__all__ = ["DOHMATOB", "RiskSampling", "PGDConfig", "link_code", "ExtremeValueRisk",
           "ExtremeValueRiskTorch", "BruteForceRisk", "DirectRisk", "EmpiricalPGD"]

OVERLAPS = tuple(q.name for q in dm.OVERLAP_STRUCTURE.order_parameters)


@memo_by_model
def link_code(link, backend: str) -> Callable:
    """σ of a ``dohmatob2025.Link`` as generated code for ``backend`` ('numpy' or 'torch'),
    elementwise on arrays or tensors (a constant σ still broadcasts)."""
    t = sp.Symbol("t", real=True)
    fn = generate([t], [dm.as_link(link)(t)], backend=backend)
    return lambda x: fn(x)[0] + 0 * x


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _check_ints(name: str, config, minima: Mapping[str, int]) -> None:
    for key, low in minima.items():
        v = getattr(config, key)
        if not (_is_int(v) and v >= low):
            raise ValueError(f"{name}: {key}={v!r}; allowed: an integer ≥ {low}")


@dataclass(frozen=True, kw_only=True)
class RiskSampling:
    """Configuration of Dohmatob's risk samplers (keywords only).

    state: the overlaps µ, ν, ζ, η, ρ by name (mu, nu, zeta, eta, rho; finite). n_samples:
    samples (≥ 2). seed: the generator's seed (≥ 0). top_k: levels drawn exactly by 'rem' and
    'rem-torch' (≥ 1). max_levels: the most dummy tokens 'brute-force' and 'direct' draw
    (≥ 1). device ('auto', 'cpu', 'cuda', 'cuda:N') and dtype ('float32', 'float64'):
    'rem-torch' only."""

    state: Mapping[str, float]
    n_samples: int
    seed: int = 0
    top_k: int = 2000
    max_levels: int = 2_000_000
    device: str = "auto"
    dtype: str = "float64"

    def __post_init__(self) -> None:
        name = type(self).__name__
        if not isinstance(self.state, Mapping) or set(self.state) != set(OVERLAPS):
            got = sorted(self.state) if isinstance(self.state, Mapping) else self.state
            raise ValueError(f"{name}: state={got!r}; allowed: a mapping of exactly "
                             f"{list(OVERLAPS)}")
        bad = [k for k, v in self.state.items() if not (isinstance(v, (int, float, np.number))
                                                         and math.isfinite(v))]
        if bad:
            raise ValueError(f"{name}: state {bad} not finite numbers; allowed: finite numbers")
        _check_ints(name, self, {"n_samples": 2, "seed": 0, "top_k": 1, "max_levels": 1})
        check_device_name(self.device)
        if self.dtype not in DTYPES:
            raise ValueError(f"{name}: dtype={self.dtype!r}; allowed: {list(DTYPES)}")


class _RiskSampler:
    """(declaration, params, config) → ``run()`` → Estimate(mean, stderr); params: the
    declaration's (d, alpha, beta, gamma), checked against their ranges."""

    config_class = RiskSampling

    def __init__(self, model, params: Mapping[str, float], config: RiskSampling):
        if not isinstance(params, Mapping):
            raise ValueError(f"params={params!r}; allowed: a dict of {[p.name for p in dm.PARAMS]}")
        self.model, self.cfg = model, config
        self.params = check_params(model.params, params, model.name)
        self.state = {k: float(config.state[k]) for k in OVERLAPS}

    def _args(self):
        p = self.params
        return (p["alpha"], p["beta"], p["gamma"], p["d"], self.state, self.cfg.n_samples)

    def sample(self) -> tuple[float, float]:
        raise NotImplementedError

    def run(self, progress=None, until=None) -> Estimate:
        if until is not None:
            raise ValueError("until: not allowed for a risk sampler (no trajectory to stop)")
        out = self.sample()
        mean, se = out
        if not (math.isfinite(mean) and math.isfinite(se)):
            raise FloatingPointError(f"{type(self).__name__}: non-finite risk ({mean}, {se})")
        if progress is not None:
            progress(1, 1)
        # the extreme-value samplers average their bulk with a quadrature rule: its error with
        # the value (the all-token samplers have none)
        error = float(getattr(out, "quadrature_error", 0.0))
        return Estimate(mean, se, dof=self.cfg.n_samples - 1, quadrature_error=error)


class ExtremeValueRisk(_RiskSampler):
    """'rem': ``numerics.rem.softmax_risk_mc`` (NumPy)."""

    def sample(self):
        return softmax_risk_mc(link_code(self.model.link, "numpy"), *self._args(),
                               seed=self.cfg.seed, top_k=self.cfg.top_k, quadrature_error=True)


class ExtremeValueRiskTorch(_RiskSampler):
    """'rem-torch': ``numerics.rem_torch.softmax_risk_mc_torch`` on ``config.device``."""

    def sample(self):
        return softmax_risk_mc_torch(link_code(self.model.link, "torch"), *self._args(),
                                     seed=self.cfg.seed, top_k=self.cfg.top_k,
                                     device=self.cfg.device, dtype=self.cfg.dtype,
                                     quadrature_error=True)


class BruteForceRisk(_RiskSampler):
    """'brute-force': ``numerics.rem.brute_force_softmax_risk`` (every dummy token drawn)."""

    def sample(self):
        return brute_force_softmax_risk(link_code(self.model.link, "numpy"), *self._args(),
                                        seed=self.cfg.seed, max_levels=self.cfg.max_levels)


class DirectRisk(_RiskSampler):
    """'direct': ``numerics.rem.direct_softmax_risk``, whole tokens in R^d (d ≥ 4)."""

    def sample(self):
        if self.params["d"] < 4:
            raise ValueError(f"parameter d={self.params['d']}; allowed for 'direct': ≥ 4 "
                             "(u, v, u*, v* are realised in R^d)")
        alpha, beta, gamma, d, state, n = self._args()
        return direct_softmax_risk(link_code(self.model.link, "torch"), alpha, beta, gamma,
                                   int(d), state, n, seed=self.cfg.seed,
                                   max_tokens=self.cfg.max_levels)


@dataclass(frozen=True, kw_only=True)
class PGDConfig:
    """Configuration of 'pgd' (keywords only): lr, the step s (> 0, finite); steps (≥ 1);
    n_train, n_test: training and test samples (≥ 1); record_every (≥ 1; the last step is
    always recorded); seed (≥ 0); init: (u, v) or None (random directions); dtype."""

    lr: float
    steps: int
    n_train: int
    n_test: int
    record_every: int = 100
    seed: int = 0
    init: Any = None
    dtype: str = "float64"

    def __post_init__(self) -> None:
        name = type(self).__name__
        if isinstance(self.lr, bool) or not (isinstance(self.lr, (int, float, np.number))
                                             and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"{name}: lr={self.lr!r}; allowed: a finite number > 0")
        _check_ints(name, self, {"steps": 1, "n_train": 1, "n_test": 1, "record_every": 1,
                                 "seed": 0})
        if self.dtype not in DTYPES:
            raise ValueError(f"{name}: dtype={self.dtype!r}; allowed: {list(DTYPES)}")


class EmpiricalPGD:
    """'pgd': ``numerics.softmax_attention.pgd_empirical`` for the declaration's link.

    params: the finite data law, d (integer ≥ 2), L (tokens, integer ≥ 2), beta (> 0),
    gamma (in (0, 1)), eps (label noise, ≥ 0). The result's state holds µ, ν, ζ, η, ρ
    [record, 1]; loss the test risk (ε² removed) [record, 1]; t = step·lr; extras the test
    risk's standard error and the training risk."""

    config_class = PGDConfig
    PARAMS = ("d", "L", "beta", "gamma", "eps")

    def __init__(self, model, params: Mapping[str, float], config: PGDConfig):
        if not isinstance(params, Mapping) or set(params) != set(self.PARAMS):
            got = sorted(params) if isinstance(params, Mapping) else params
            raise ValueError(f"params={got!r}; allowed for 'pgd': exactly {list(self.PARAMS)}")
        for key in ("d", "L"):
            if not (_is_int(params[key]) and params[key] >= 2):
                raise ValueError(f"parameter {key}={params[key]!r}; allowed: an integer ≥ 2")
        p = {k: params[k] for k in self.PARAMS}
        if not (p["beta"] > 0 and 0 < p["gamma"] < 1 and p["eps"] >= 0):
            raise ValueError(f"params {p}; allowed: beta > 0, gamma in (0, 1), eps ≥ 0")
        self.model, self.params, self.cfg = model, p, config

    def run(self, progress=None, until=None) -> SGDResult:
        if until is not None:
            raise ValueError("until: not allowed for 'pgd' (it runs its steps whole)")
        p, c = self.params, self.cfg
        out = pgd_empirical(p["d"], p["L"], p["beta"], p["gamma"], p["eps"],
                            link_code(self.model.link, "torch"), c.n_train, c.n_test, c.lr,
                            c.steps, c.record_every, c.seed, init=c.init, dtype=c.dtype)
        if progress is not None:
            progress(c.steps, c.steps)
        ov = out["overlaps"]
        return SGDResult(t=out["step"] * c.lr, names=OVERLAPS,
                         state={n: ov[:, i:i + 1] for i, n in enumerate(OVERLAPS)},
                         loss=out["test_risk"][:, None],
                         extras={"test_se": out["test_se"], "train_risk": out["train_risk"]})


def _risk(model, params, state, n: int, seed: int) -> tuple[float, float]:
    """The risk at ``state`` by 'rem' (extreme-value sampling at e^{αd} tokens)."""
    est = ExtremeValueRisk(model, params, RiskSampling(state=state, n_samples=n, seed=seed)).run()
    return float(est.value), float(est.stderr)


def _example():
    return dm.build("quadratic"), dict(dm.DEFAULT_PARAMS), {}


def _trials():
    small = {"d": 40, "alpha": 0.05, "beta": 1.0, "gamma": 0.6}     # e^{αd} ≈ 7 dummy tokens
    sampling = RiskSampling(state=dict(dm.DEFAULT_STATE), n_samples=64, seed=1, top_k=50,
                            device="cpu")
    pgd = ({"d": 8, "L": 4, "beta": 1.0, "gamma": 0.6, "eps": 0.1},
           PGDConfig(lr=0.1, steps=4, n_train=64, n_test=64, record_every=2))
    return {"rem": (small, sampling), "rem-torch": (small, sampling),
            "brute-force": (small, sampling), "direct": (small, sampling), "pgd": pgd,
            "risk": (small, dict(dm.DEFAULT_STATE))}


DOHMATOB = register(Kind(
    "dohmatob-student", dm.DohmatobModel, compile=compile_derivation, reduce=reduce_dohmatob,
    example=_example,
    simulators={"rem": ExtremeValueRisk, "rem-torch": ExtremeValueRiskTorch,
                "brute-force": BruteForceRisk, "direct": DirectRisk, "pgd": EmpiricalPGD},
    risk=_risk, trials=_trials,
    doc="Dohmatob's student: R̄ of Prop. 1 for a link σ, stated in the overlaps (Dohmatob 2025)"))
