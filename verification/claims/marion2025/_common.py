"""Helpers shared by the Marion et al. claim modules: the settings, their domain and realisable
overlap points (what the simulations share is in ``verification.simulations.marion2025``)."""

from __future__ import annotations

import numpy as np

from ...domain import Domain, Integers, Interval

PAPER = "marion2025"

# (d, L, λ, γ, ε) spread over the domain: small and large d, L, λ, γ
SETTINGS = [(8, 2, 0.5, 0.5, 0.1), (16, 3, 1.0, 1.0, 0.3), (32, 5, 0.3, 0.7, 0.0),
            (12, 4, 2.0, 1.5, 0.5), (24, 2, 0.8, 0.3, 0.2), (10, 6, 0.4, 1.2, 0.1),
            (40, 3, 0.25, 0.9, 0.2), (6, 3, 1.5, 0.6, 0.4)]


DOMAIN = Domain({"d": Integers(4, 64, log=True), "L": Integers(2, 8),
                 "lam": Interval(0.1, 3.0, log=True), "gamma": Interval(0.1, 2.0),
                 "eps": Interval(0.0, 1.0)})
"""(d, L, λ, γ, ε): the model's parameters, over which Marion et al.'s statements quantify."""


def sub_domain(*names: str, **coordinates) -> Domain:
    """``coordinates`` of a claim's own (first), then the coordinates ``names`` of ``DOMAIN``: a
    statement over some of the model's parameters, the others swept inside a setting or not
    entering it."""
    return Domain({**coordinates, **{k: DOMAIN.coordinates[k] for k in names}})


def as_setting(s):
    """A tuple (d, L, λ, γ, ε) of ``SETTINGS`` as a setting of ``DOMAIN``."""
    return dict(zip(("d", "L", "lam", "gamma", "eps"), s))


def random_overlaps(rng, on_manifold: bool) -> dict:
    """Overlaps of unit vectors k, v with k* = e1, v* = e2 (realisable by construction)."""
    if on_manifold:
        kap, n = rng.uniform(-1, 1, 2)
        return dict(kappa=kap, nu=n, theta=0.0, eta=0.0, rho=0.0)
    k = rng.standard_normal(4) + rng.uniform(-2, 2) * np.eye(4)[0]
    v = rng.standard_normal(4) + rng.uniform(-2, 2) * np.eye(4)[1]
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    return dict(kappa=k[0], nu=v[1], theta=v[0], eta=k[1], rho=k @ v)
