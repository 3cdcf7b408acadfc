"""ODE integration: one module per method family, a small shared base."""

from .adaptive import integrate_adaptive
from .base import Trajectory
from .fixed_step import integrate_euler_maruyama, integrate_rk4
from .integrate import integrate

__all__ = ["Trajectory", "integrate", "integrate_adaptive", "integrate_rk4", "integrate_euler_maruyama",
           "integrate_flow"]


def integrate_flow(cm, params, q0, t_eval, method="Radau", **kw):
    """Integrate a compiled model's overlap flow with its symbolic Jacobian."""
    import numpy as np
    p = cm.model.check_params(params)
    rhs = lambda q: cm.rhs(p, q, check=False)
    jac = lambda q: cm.jacobian(p, q, check=False)
    return integrate_adaptive(rhs, np.asarray(q0, float), t_eval, jac=jac, method=method, **kw)
