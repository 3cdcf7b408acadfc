"""One calling convention for every reduced model (the token-sum Model's overlap flow,
Dohmatob's overlap flow, the multi-head flow on (m, r, b, v)).

A reduced model is a finite state y (named coordinates), a loss L(y) (exact, or estimated
with a standard error), the flow ẏ = f(y) of gradient descent in the high-dimensional
limit, and the derivatives a dynamical analysis needs: the Jacobian ∂f/∂y and the Hessian
∂²L/∂y². Stationary points (f(y) = 0) are found by root finding from scrambled-Sobol' starts
and classified by the eigenvalues of the Jacobian (``theory.stationary``); trajectories come
from ``numerics.ode.integrate``. Like PyDy's one calling convention over several symbolic
forms, each kind only supplies state, loss, flow, derivatives and its equations.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

from numerics.expectation import Estimate
from numerics.ode import Trajectory, integrate as integrate_ode
from theory.printing import latex
from theory.stationary import StationaryPoint, classify, find_stationary_points

__all__ = ["Equation", "ReducedModel"]


@dataclass(frozen=True)
class Equation:
    """One displayed equation ``lhs = rhs``: the right-hand side is a SymPy object, or text
    given in both plain and LaTeX form (for equations whose terms are expectations)."""

    lhs: str
    lhs_latex: str
    rhs: sp.Basic | str
    rhs_latex: str | None = None

    def text(self, latex: bool = False) -> str:
        if latex:
            return f"{self.lhs_latex} = {self.latex_rhs()}"
        rhs = self.rhs if isinstance(self.rhs, str) else sp.sstr(self.rhs)
        return f"{self.lhs} = {rhs}"

    def latex_rhs(self) -> str:
        if self.rhs_latex is not None:
            return self.rhs_latex
        return latex(self.rhs) if isinstance(self.rhs, (sp.Basic, sp.MatrixBase)) else str(self.rhs)


class ReducedModel(abc.ABC):
    """A reduced model: named state, loss, flow, Jacobian, Hessian, stationary points.

    Subclasses implement ``state_names``, ``params``, ``unpack``, ``check_state``, ``loss``,
    ``rhs``, ``jacobian``, ``hessian`` and ``equations``. The packed state y is a 1-D float
    array in ``state_names`` order.
    """

    name: str = ""
    declaration: object = None
    """The declared model it reduces (a ``theory.Model``, ``DohmatobModel``,
    ``MultiHeadModel``; None for a risk stated on a geometry)."""
    time: str = "t"
    """Name of the flow's time variable (t, or τ for the multi-head flow)."""
    loss_name: str = "loss"
    """What the loss is called (the token-sum kind's is the population risk)."""

    # --- state ---------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def state_names(self) -> tuple[str, ...]: ...

    @property
    @abc.abstractmethod
    def params(self) -> dict[str, object]:
        """The bound parameter values (empty when unbound)."""

    def default_state(self) -> np.ndarray:
        """A realisable state used where none is given (zeros unless the kind says otherwise)."""
        return np.zeros(len(self.state_names))

    def pack(self, values: Mapping[str, float] | Sequence[float] | np.ndarray | object,
             base: np.ndarray | None = None) -> np.ndarray:
        """The packed state from {name: value} (missing names taken from ``base``, an error
        without one), from an array in ``state_names`` order, or from the kind's own state
        object (e.g. a HeadState)."""
        names = self.state_names
        if isinstance(values, Mapping):
            unknown = sorted(set(values) - set(names))
            if unknown:
                raise ValueError(f"{self.name}: unknown state coordinate(s) {unknown}; allowed: "
                                 f"{list(names)}")
            if base is None:
                missing = [n for n in names if n not in values]
                if missing:
                    raise ValueError(f"{self.name}: missing state coordinate(s) {missing}")
                base = np.zeros(len(names))
            y = np.array(base, float).ravel().copy()
            for key, value in values.items():
                y[names.index(key)] = _as_float(value, key)
            return y
        obj = self._pack_object(values)
        y = np.asarray(values if obj is None else obj, float).ravel()
        if y.shape != (len(names),):
            raise ValueError(f"{self.name}: a state has {len(names)} coordinates {list(names)}, "
                             f"got {y.size}")
        return y

    def _pack_object(self, values: object) -> np.ndarray | None:
        """The packed form of the kind's own state object, None for anything else."""
        return None

    @abc.abstractmethod
    def unpack(self, y: np.ndarray) -> object:
        """The kind's own representation of the packed state y."""

    def as_dict(self, y: np.ndarray) -> dict[str, float]:
        return dict(zip(self.state_names, (float(v) for v in self._vector(y))))

    def _vector(self, y) -> np.ndarray:
        y = np.asarray(y, float).ravel()
        if y.shape != (len(self.state_names),):
            raise ValueError(f"{self.name}: a state has {len(self.state_names)} coordinates "
                             f"{list(self.state_names)}, got {y.size}")
        return y

    @abc.abstractmethod
    def check_state(self, y: np.ndarray) -> np.ndarray:
        """y if it is realisable (finite; overlaps of unit vectors in [−1, 1]; PSD Gram
        matrix or PSD r), else a ValueError naming the offending coordinate(s)."""

    # --- loss and flow -------------------------------------------------------------------
    @abc.abstractmethod
    def loss(self, y: np.ndarray) -> tuple[float, float]:
        """(value, standard error) of the loss at y; the error is 0.0 for an exact loss."""

    @abc.abstractmethod
    def rhs(self, y: np.ndarray) -> np.ndarray:
        """ẏ = f(y): the flow's right-hand side."""

    def loss_estimate(self, y: np.ndarray, tol: float | None = None) -> Estimate:
        """The loss at y with its errors: ``stderr`` (a sampled loss) and ``quadrature_error``
        (a loss with numerically integrated expectations; 0 when exact). ``tol``: the largest
        acceptable quadrature error (``theory.quadrature.QuadratureError`` when not met)."""
        value, se = self.loss(y)
        return Estimate(float(value), float(se), quadrature_error=0.0)

    def rhs_estimate(self, y: np.ndarray, tol: float | None = None) -> Estimate:
        """The flow's right-hand side at y with its errors, as ``loss_estimate``."""
        value = np.asarray(self.rhs(y), float)
        return Estimate(value, np.zeros_like(value), quadrature_error=np.zeros_like(value))

    @abc.abstractmethod
    def jacobian(self, y: np.ndarray) -> np.ndarray:
        """∂f/∂y at y (n × n)."""

    @abc.abstractmethod
    def hessian(self, y: np.ndarray) -> np.ndarray:
        """∂²L/∂y² at y (n × n)."""

    def compile(self) -> object:
        """Generate (or load from the code cache) the numerical functions behind ``loss``,
        ``rhs``, ``jacobian`` and ``hessian`` now, and return them (the kind's own object)."""
        return None

    # --- symbolic description ------------------------------------------------------------
    @abc.abstractmethod
    def equations(self) -> list[Equation]:
        """The model's equations (loss, flow, ...), for the command line and reports."""

    def latex(self) -> dict[str, str]:
        """{LaTeX left-hand side: LaTeX right-hand side} of ``equations()``."""
        return {eq.lhs_latex: eq.latex_rhs() for eq in self.equations()}

    def _repr_latex_(self) -> str:
        rows = r" \\ ".join(f"{k} &= {v}" for k, v in self.latex().items())
        return rf"$\begin{{aligned}} {rows} \end{{aligned}}$"

    # --- dynamics ------------------------------------------------------------------------
    @property
    def free(self) -> tuple[int, ...]:
        """Indices of the coordinates that move under the flow (others are frozen, e.g.
        untrained sink logits); stationary points and classes are taken in these."""
        return tuple(range(len(self.state_names)))

    def default_box(self) -> list[tuple[float, float]]:
        """Search box for ``stationary_points`` (per coordinate of ``free``)."""
        raise ValueError(f"{self.name}: no default search box; give box=[(lo, hi), ...] for "
                         f"{[self.state_names[i] for i in self.free]}")

    def _embed(self, x, at: np.ndarray) -> np.ndarray:
        y = np.array(at, float)
        y[list(self.free)] = x
        return y

    def stationary_points(self, box: Sequence[tuple[float, float]] | None = None, n_starts: int = 64,
                          seed: int = 0, tol: float = 1e-10, eig_tol: float = 1e-9,
                          at: np.ndarray | None = None) -> list[StationaryPoint]:
        """Zeros of the flow in ``box`` (over the free coordinates; frozen ones held at ``at``,
        default ``default_state``), found by ``theory.stationary.find_stationary_points`` and
        classified by the Jacobian's eigenvalues; points that are not realisable dropped. Each
        point's x is the full packed state."""
        free = list(self.free)
        box = self.default_box() if box is None else list(box)
        if len(box) != len(free):
            raise ValueError(f"{self.name}: box has {len(box)} intervals; one per free coordinate "
                             f"{[self.state_names[i] for i in free]} is needed")
        at = self.default_state() if at is None else self._vector(at)
        rhs = lambda x: self.rhs(self._embed(x, at))[free]
        jac = lambda x: self.jacobian(self._embed(x, at))[np.ix_(free, free)]
        points = find_stationary_points(rhs, jac, box, n_starts=n_starts, seed=seed, tol=tol,
                                        eig_tol=eig_tol)
        out = []
        for p in points:
            y = self._embed(p.x, at)
            try:
                self.check_state(y)
            except ValueError:
                continue
            out.append(replace(p, x=tuple(float(v) for v in y)))
        return out

    def classify(self, y: np.ndarray, tol: float = 1e-9) -> StationaryPoint:
        """The class of y as a stationary point (sink, source, saddle, degenerate) from the
        eigenvalues of the Jacobian over the free coordinates; ``residual`` is max |f(y)|."""
        y = self._vector(y)
        free = list(self.free)
        eig = np.linalg.eigvals(np.asarray(self.jacobian(y), float)[np.ix_(free, free)])
        residual = float(np.max(np.abs(self.rhs(y)[free])))
        return StationaryPoint(tuple(float(v) for v in y), tuple(eig), classify(eig, tol), residual)

    def _integrate_defaults(self) -> dict:
        return {}

    def integrate(self, y0: Mapping[str, float] | np.ndarray | object, t_eval: Sequence[float],
                  **kw) -> Trajectory:
        """The flow from y0 (checked realisable) at the times ``t_eval``, by
        ``numerics.ode.integrate`` (keywords passed on; the kind supplies method and Jacobian
        defaults); the result's columns are named by ``state_names``."""
        y0 = self.check_state(self.pack(y0))
        return integrate_ode(self.rhs, y0, t_eval, **{**self._integrate_defaults(), **kw},
                             names=self.state_names)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, state={list(self.state_names)})"


def _as_float(value, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"state coordinate {name}={value!r} is not a number; allowed: a real "
                         "number") from None
