"""Shared strategies and helpers for the tests."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from theory.model import Model, Vector
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


# --- frame coordinates (theory.frame, numerics.frame, numerics.pgd) --------------------------
def free_vector_geometry() -> tuple[Model, sp.Expr]:
    """Two hidden vectors, one free and one sphere vector (a free vector's norm is an overlap),
    and a risk on their overlaps."""
    a, b, n, c, f, e = sp.symbols("a b n c f e", real=True)
    model = Model(name="test-free", hidden=("h1", "h2"),
                  trainable=(Vector("w", "free"), Vector("u", "sphere")),
                  overlaps={("w", "h1"): a, ("w", "h2"): b, ("w", "w"): n, ("u", "h1"): c,
                            ("u", "h2"): f, ("u", "w"): e},
                  params=(), data=None, student=sp.S.Zero, label=sp.S.Zero)
    risk = (a - 1) ** 2 + b**2 * c + sp.exp(e) * n / 4 + (n - 1) ** 2 + c * a**3 + f * e
    return model, risk


def random_frame_state(flow, rng: np.random.Generator) -> np.ndarray:
    """A random state of a frame flow, its sphere blocks normalised."""
    y = rng.standard_normal(len(flow.state))
    for _, lo, hi, constraint in flow.blocks:
        if constraint == "sphere":
            y[lo:hi] /= np.linalg.norm(y[lo:hi])
    return y


# --- runs (verification.runner) ---------------------------------------------------------------
CHEAP_CLAIMS = ["marion2025:prop3-linear", "marion2025:cor2-bayes-limit", "sagitova2026:prop-iv1-bayes",
                "dohmatob2025:rem-constants"]
"""Cheap claims, exact and statistical, from the three papers."""


def same_results(a: dict, b: dict) -> None:
    """Two reports have the same claims, verdicts, contracts and evidence (timings aside)."""
    from verification.guard import compare
    from verification.records import to_jsonable
    assert [c["id"] for c in a["claims"]] == [c["id"] for c in b["claims"]]
    for x, y in zip(a["claims"], b["claims"]):
        assert (x["verdict"], x["contract"]) == (y["verdict"], y["contract"]), x["id"]
        assert to_jsonable(x["evidence"]) == to_jsonable(y["evidence"]), x["id"]
    assert compare(a, b) == [] and compare(b, a) == []


# --- SGD in law (numerics.sgd) -----------------------------------------------------------------
def flat_head_state(res, k):
    """The multi-head order parameters (m, r, b, v) of every seed at record k, one row a seed."""
    S = res["m"].shape[1]
    return np.concatenate([res[name][k].reshape(S, -1) for name in ("m", "r", "b", "v")], 1)


def sd_var(x):
    """Variance of the sample standard deviation by the delta method with the sample fourth
    moment (the increments are far from Gaussian: σ/√(2n) would be overconfident)."""
    n = x.shape[0]
    c = x - x.mean(0)
    m2, m4 = (c**2).mean(0), (c**4).mean(0)
    return (m4 - m2**2) / (4 * np.maximum(m2, 1e-300) * n)


def same_law(a, b, records):
    """Two multi-head SGD results in law at the given records: two-sample z for the means and
    standard deviations of every component, Bonferroni over all at α = 10⁻³; (largest z,
    critical z)."""
    S = a["m"].shape[1]
    rows = []
    for k in records:
        qa, qb = flat_head_state(a, k), flat_head_state(b, k)
        sd = np.sqrt(qa.var(0) / S + qb.var(0) / S)
        keep = sd > 1e-12                       # components fixed by construction (e.g. v unused)
        rows.append(np.abs(qa.mean(0) - qb.mean(0))[keep] / sd[keep])
        sds = np.sqrt(sd_var(qa) + sd_var(qb))
        rows.append(np.abs(qa.std(0) - qb.std(0))[keep] / sds[keep])
    zs = np.concatenate(rows)
    from scipy.stats import norm
    z = norm.isf(1e-3 / (2 * len(zs)))
    return float(zs.max()), z


def compiled_flow(cm, params, q0, t_eval):
    """A compiled model's overlap flow by Radau with its symbolic Jacobian (the front door)."""
    import numpy as np

    from numerics.ode import integrate
    p = cm.model.check_params(params)
    tr = integrate(lambda q: cm.rhs(p, q, check=False), np.asarray(q0, float), t_eval,
                   jac=lambda q: cm.jacobian(p, q, check=False), method="Radau")
    assert tr.ok, tr.message
    return tr
