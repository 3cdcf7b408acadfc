"""Shared strategies and helpers for the tests."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from hypothesis import strategies as st

from theory.models.marion2025 import MODEL


@st.composite
def marion_params(draw: st.DrawFn, max_d: int = 40) -> dict[str, float]:
    """Parameters of Marion et al.'s model in the ranges the tests explore."""
    return dict(d=draw(st.integers(4, max_d)), L=draw(st.integers(1, 7)),
                lam=draw(st.floats(0.05, 3.0)), gamma=draw(st.floats(0.1, 2.0)),
                eps=draw(st.floats(0.0, 1.0)))


@st.composite
def unit_overlaps(draw: st.DrawFn) -> dict[str, float]:
    """Overlaps of unit vectors k, v with orthonormal k*, v* (realisable by construction)."""
    k = np.array(draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4)))
    v = np.array(draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4)))
    k = k + np.array([1e-3, 0, 0, 0]) if np.linalg.norm(k) < 1e-3 else k
    v = v + np.array([0, 1e-3, 0, 0]) if np.linalg.norm(v) < 1e-3 else v
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    return dict(kappa=k[0], nu=v[1], theta=v[0], eta=k[1], rho=float(k @ v))


def q_of(ov: Mapping[str, float]) -> np.ndarray:
    """The overlaps as an array in the order of ``MODEL.order_parameters``."""
    return np.array([ov[s.name] for s in MODEL.order_parameters])
