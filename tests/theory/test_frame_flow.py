"""The flow in frame coordinates (``theory.frame.frame_flow``): by the chain rule it is the
symbolic overlap flow (``theory.dynamics.overlap_flow``), its coordinates follow the frame, and
its norm-restoring form keeps sphere vectors on their spheres."""

import numpy as np
import pytest
import sympy as sp

from numerics.frame import compile_frame_flow
from theory.dynamics import overlap_flow
from theory.frame import frame_flow
from theory.models import dohmatob2025 as dm
from tests.helpers import free_vector_geometry, random_frame_state

DOHMATOB_VALUES = {dm.alpha: sp.Rational(1, 10), dm.beta: 1, dm.gamma: sp.Rational(3, 5), dm.d: 10}

CASES = {
    "dohmatob-linear": lambda: (dm.OVERLAP_STRUCTURE, dm.paper_risk("linear"), DOHMATOB_VALUES),
    "dohmatob-quadratic": lambda: (dm.OVERLAP_STRUCTURE, dm.paper_risk("quadratic"), DOHMATOB_VALUES),
    "free-vector": lambda: (*free_vector_geometry(), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_frame_flow_maps_to_the_symbolic_overlap_flow(case):
    """Chain rule: d/dt q(y) = Σ ∂q/∂y·ẏ along the frame flow equals the Gram-matrix overlap
    flow at q(y), at random realisable points."""
    geometry, risk, values = CASES[case]()
    flow = frame_flow(geometry, risk, values)
    R = sp.sympify(risk).subs(values) if values else risk
    reference = overlap_flow(geometry, R)
    rates = flow.overlap_rates()
    rng = np.random.default_rng(3)
    for _ in range(3):
        y = random_frame_state(flow, rng)
        at_y = dict(zip(flow.state, y))
        q = {s: float(e.subs(at_y)) for s, e in flow.overlap_expressions.items()}
        for s, rhs in zip(reference.state, reference.rhs):
            got, want = float(rates[s].subs(at_y)), float(rhs.subs(q))
            assert abs(got - want) <= 1e-10 * max(1.0, abs(want)), (case, s, got, want)


def test_frame_flow_coordinates_follow_the_frame():
    flow = frame_flow(dm.OVERLAP_STRUCTURE, dm.paper_risk("linear"), DOHMATOB_VALUES)
    u = sp.symbols("u1:5", real=True)
    v = sp.symbols("v1:5", real=True)
    assert flow.state == u + v
    ex = flow.overlap_expressions
    assert (ex[dm.mu], ex[dm.eta], ex[dm.zeta], ex[dm.nu]) == (u[0], u[1], v[0], v[1])
    assert sp.expand(ex[dm.rho] - sum(a * b for a, b in zip(u, v))) == 0
    assert flow.blocks == (("u", 0, 4, "sphere"), ("v", 4, 8, "sphere"))
    with pytest.raises(ValueError, match="free symbols"):
        compile_frame_flow(frame_flow(dm.OVERLAP_STRUCTURE, dm.paper_risk("linear")))


def test_frame_flow_keeps_vectors_on_the_sphere():
    """On the unit spheres the norm-restoring flow equals −(I − wwᵀ)g; off them it pulls the
    norm back, d‖w‖²/dt = −2‖w‖²(‖w‖² − 1), where the plain flow has 2(wᵀg)(‖w‖² − 1)."""
    kept = compile_frame_flow(frame_flow(dm.OVERLAP_STRUCTURE, dm.paper_risk("linear"), DOHMATOB_VALUES))
    plain = compile_frame_flow(frame_flow(dm.OVERLAP_STRUCTURE, dm.paper_risk("linear"), DOHMATOB_VALUES,
                                          keep_on_sphere=False))
    rng = np.random.default_rng(5)
    for _ in range(3):
        y = rng.standard_normal(8)
        y[:4] /= np.linalg.norm(y[:4])
        y[4:] /= np.linalg.norm(y[4:])
        np.testing.assert_allclose(kept.rhs(y), plain.rhs(y), rtol=1e-10, atol=1e-12)
        off = y * np.repeat([1.01, 0.98], 4)
        f = kept.rhs(off)
        for a, b in ((0, 4), (4, 8)):
            n2 = off[a:b] @ off[a:b]
            assert 2 * off[a:b] @ f[a:b] == pytest.approx(-2 * n2 * (n2 - 1), rel=1e-9, abs=1e-12)
