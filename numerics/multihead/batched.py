"""Many trajectories of the multi-head reduced flow at once.

``ReducedFlow.rhs_batch`` evaluates the flow's quasi-Monte Carlo expectations at K states in one
call of the generated code (at a few thousand draws most of a right-hand side's time is the
per-call cost of the elementwise operations, not arithmetic, so K states one by one cost nearly
K times one). ``integrate_batch`` combines it with ``numerics.ode.batched.rk45_until_batch``: one
RK45 per initial condition, the pending stages of all running rows in one ``rhs_batch`` call.
"""

from __future__ import annotations

import numpy as np

from ..ode.batched import rk45_until_batch
from .flow import ReducedFlow
from .state import HeadState

__all__ = ["integrate_batch"]


def integrate_batch(flow: ReducedFlow, Y0, t_eval, reached=None, chunk=None, rtol=1e-6, atol=1e-12,
                    name: str | None = None):
    """The flow from each row of ``Y0`` (K × P packed states) at the output times ``t_eval``,
    each by its own RK45 (``numerics.ode.batched.rk45_until_batch``: the numbers of integrating
    it alone with scipy's RK45 and ``flow.rhs``, up to the rounding of the batched right-hand
    side), the right-hand sides of all rows still running in one ``flow.rhs_batch`` call.
    ``reached(y)`` ends a row at its first output state where it holds; ``chunk`` restarts each
    row's solver every ``chunk`` output intervals. Returns K pairs (times, packed states). Each
    initial state is checked first (one packed state, finite, r positive semi-definite), as
    ``HeadReduced.check_state`` does; errors name ``name`` (default: the flow's class) and the row."""
    md = flow.model
    Y0 = np.atleast_2d(np.asarray(Y0, float))
    P = md.H * md.F + md.H * (md.H + 1) // 2 + 2 * md.H
    for k, y in enumerate(Y0):
        try:
            if y.shape != (P,):
                raise ValueError(f"{y.size} coordinates; the {md.H}-head, {md.F}-feature state "
                                 f"has {P}")
            st = HeadState.unpack(y, md.H, md.F)
            HeadState.make(st.m, st.r, st.b, st.v)
        except ValueError as exc:
            raise ValueError(f"Y0 row {k}: {exc}") from None
    return rk45_until_batch(lambda t, Y: flow.rhs_batch(Y), Y0, t_eval, reached=reached,
                            chunk=chunk, rtol=rtol, atol=atol, name=name or type(flow).__name__)
