"""The explorer commands: list, derive, evaluate (and what heads shares with them)."""

from __future__ import annotations

import math

import typer

from .common import _cache_errors, _fail, _fail_all, app
from .answers import (_JSON_HELP, _MAX_SIMPLIFY_OPS, _echo_json, _equation_json, _equation_rows,
                      _equations)
from .heads import _derive_size_errors, _moments, _saddle_answer

_MODEL_HELP = ("marion2025 | dohmatob2025 | sagitova2026, a module in theory.models with a MODEL, "
               "PATH.py[:NAME] (a Model, DohmatobModel, MultiHeadModel or reduced model in your "
               "own file; NAME defaults to MODEL) or an installed entry point "
               "(attention_verification.models)")


def _load(model: str, params: dict | None):
    """(reduced model, []) or (None, every error): with several parameters, each is tried on
    its own so that every bad one is named."""
    from ..userfiles import load_model
    try:
        return load_model(model, params), []
    except (ValueError, TypeError, FileNotFoundError) as exc:
        first = str(exc)
    if not params or len(params) == 1 or "not found" in first or "no such file" in first:
        return None, [first]
    errors = []
    for key, value in params.items():
        try:
            load_model(model, {key: value})
        except (ValueError, TypeError) as exc:
            errors.append(str(exc))
    return None, errors or [first]


def _manifold(on: str | None, errors: list[str]) -> dict:
    fixed = {}
    for item in (on or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            number = float(value)
        except ValueError:
            errors.append(f"--on {item.strip()!r}; allowed: name=number, comma-separated "
                          "(e.g. --on theta=0,eta=0,rho=0)")
            continue
        if key.strip() in fixed:
            errors.append(f"--on {key.strip()} given twice ({key.strip()}={fixed[key.strip()]:g}, "
                          f"{key.strip()}={number:g}); allowed: once")
            continue
        fixed[key.strip()] = number
    return fixed


@app.command()
def derive(model: str = typer.Argument(..., help=_MODEL_HELP),
           latex: bool = typer.Option(False, help="print LaTeX instead of plain text"),
           on: str | None = typer.Option(None, help="restrict to a manifold, e.g. "
                                         "theta=0,eta=0,rho=0 (order parameters fixed); the "
                                         "output is simplified"),
           simplify: bool = typer.Option(False, help="simplify every expression (each of ≤ "
                                         f"{_MAX_SIMPLIFY_OPS} operations, so not the full "
                                         "flows; implied by --on)"),
           json_out: bool = typer.Option(False, "--json", help=_JSON_HELP + "; for a multi-head "
                                         "model also 'saddle', as heads --json gives it, at the "
                                         "model's prior"),
           param: list[str] | None = typer.Option(None, "--param", help="name=value (repeatable; "
                                                  "defaults for the rest), as for evaluate: e.g. "
                                                  "link=quadratic or link=PATH.py:NAME "
                                                  "(dohmatob2025), activation=PATH.py:NAME "
                                                  "(sagitova2026)")):
    """Print what the engine derives for a model: the reduced risk and its overlap flow
    (marion2025; dohmatob2025: R̄ of Prop. 1 and its flow; a Model of your own), or the token
    weights, the conditional loss φ, the flow on (m, r, b, v) and the saddle Hessian
    (sagitova2026, or a MultiHeadModel of your own). --json: the same as one JSON document
    (command, model, name, params, state_names, time, loss_name, on, simplified, equations)."""
    errors: list[str] = _cache_errors()
    fixed = _manifold(on, errors)
    params = _pairs(param, "param", errors)
    size_errors = _draw_errors(model, params)
    rm, errs = _load(model, {k: v for k, v in params.items()
                             if not (size_errors and k in ("H", "L", "n"))} or None)
    errors += size_errors + errs
    if rm is not None and fixed:
        if not hasattr(rm, "restrict"):
            errors.append(f"--on: {rm.name} is not an overlap model; allowed: --on with a model "
                          "whose state is order parameters (marion2025, dohmatob2025, a Model)")
        else:
            try:
                rm = rm.restrict(fixed)
            except ValueError as exc:
                errors.append(f"--on: {exc}")
    errors += _derive_size_errors(model, rm)
    if errors:
        _fail_all(errors)
    how = f"--on {on}" if fixed else "--simplify" if simplify else None
    try:
        if json_out:
            eqs = _equations(rm, how)
        else:
            rows = _equation_rows(rm, latex, how)
    except ValueError as exc:
        _fail(str(exc))
    if json_out:
        _echo_json(_derived_json(model, rm, eqs, fixed, how is not None))
        return
    for row in rows:
        typer.echo(row + "\n")


def _derived_json(model: str, rm, eqs, fixed: dict, simplified: bool) -> dict:
    """``derive --json``'s document."""
    doc = {"command": "derive", "model": model, "name": rm.name, "params": _json_params(rm),
           "state_names": list(rm.state_names), "time": rm.time, "loss_name": rm.loss_name,
           "on": fixed, "simplified": simplified, "equations": [_equation_json(e) for e in eqs]}
    if hasattr(rm, "saddle_equations"):
        prior = getattr(rm, "prior", None)
        moments = None if prior is None else _moments("prior", prior.mean(), cov=prior.cov())
        doc["saddle"] = _saddle_answer(rm.model, moments)
    return doc


def _json_params(rm) -> dict:
    """The model's parameters for JSON: those declared integer (d, L, H, n, ...) as integers."""
    declared = {p.name: p for p in getattr(getattr(rm, "derivation", None), "params", ())}
    if not declared and getattr(rm, "name", "") == "sagitova2026":
        from theory.models.sagitova2026 import PARAMS
        declared = {p.name: p for p in PARAMS}
    out = {}
    for key, value in rm.params.items():
        whole = isinstance(value, float) and value.is_integer()
        out[key] = int(value) if whole and getattr(declared.get(key), "integer", False) else value
    return out


def _pairs(items, what, errors: list[str]) -> dict:
    """{name: value} of repeated ``--what name=value`` options; malformed and repeated names
    are added to ``errors``."""
    out = {}
    for item in items or []:
        if "=" not in item:
            errors.append(f"--{what} {item!r} must look like name=value")
            continue
        k, v = (x.strip() for x in item.split("=", 1))
        if k in out:
            errors.append(f"--{what} {k} given twice ({k}={out[k]}, {k}={v}); allowed: once")
            continue
        out[k] = v
    return out


_MAX_HEADS_TOKENS, _MAX_DRAWS = 24, 2**18
"""What ``evaluate`` computes for a multi-head model (heads × tokens, quasi-Monte Carlo draws):
within these limits seconds and about a gigabyte, beyond them minutes or tens of gigabytes (the
measurements: benchmarks/cli_limits.md)."""


def _number(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _draw_errors(model: str, params: dict) -> list[str]:
    """The sizes of a multi-head model's evaluation out of their limits (values that are not
    numbers at all are left to the model's own checks)."""
    if not ({"H", "L", "n"} & set(params)) or not _is_multihead(model):
        return []
    errors = []
    n = _number(params.get("n", 8))
    if n is not None and not n <= _MAX_DRAWS:
        errors.append(f"parameter n={params['n']!r} is out of range; allowed: an integer in "
                      f"[8, {_MAX_DRAWS}] (2**18), a multiple of 4 (more draws take minutes and "
                      "gigabytes)")
    if model == "sagitova2026":
        H, L = _number(params.get("H", 2)), _number(params.get("L", 4))
        if H is not None and L is not None and 1 <= H and 2 <= L and math.isfinite(H * L) \
                and H * L > _MAX_HEADS_TOKENS:
            errors.append(f"parameters H={params.get('H', 2)!r}, L={params.get('L', 4)!r}: "
                          f"H·L = {H * L:g}; allowed: H·L ≤ {_MAX_HEADS_TOKENS} (larger ones take "
                          "minutes)")
    return errors


def _is_multihead(model: str) -> bool:
    """Whether ``model`` names a multi-head model (sagitova2026, a MultiHeadModel in a file or
    an entry point); False for a name that names nothing (``_load`` reports it)."""
    if model == "sagitova2026":
        return True
    from theory.multihead import MultiHeadModel

    from ..userfiles import load_model_object
    try:
        obj, _ = load_model_object(model)
    except (ValueError, TypeError, OSError):
        return False
    return isinstance(obj, MultiHeadModel)


def _state_errors(rm, state: dict) -> list[str]:
    """Every error in ``--state``: the unknown names, each known coordinate's own error, then
    (when each is fine alone) the state's as a whole."""
    errors = []

    def check(values):
        try:
            rm.check_state(rm.pack(values, base=rm.default_state()))
        except (ValueError, FloatingPointError) as exc:
            if str(exc) not in errors:
                errors.append(str(exc))
            return False
        return True
    unknown = {k: v for k, v in state.items() if k not in rm.state_names}
    if unknown:
        check(unknown)
    known = {k: v for k, v in state.items() if k in rm.state_names}
    alone = [check({k: v}) for k, v in known.items()]
    if all(alone) and known:
        check(known)
    return errors


@app.command()
def evaluate(model: str = typer.Argument(..., help=_MODEL_HELP),
             param: list[str] | None = typer.Option(None, "--param", help="name=value (repeatable; "
                                                    "defaults for the rest)"),
             state: list[str] | None = typer.Option(None, "--state", "--overlap",
                                                    help="name=value (repeatable; defaults for the rest)"),
             json_out: bool = typer.Option(False, "--json", help="print one JSON document on "
                                           "stdout instead of text (errors: one line on stderr, "
                                           "exit 2, as without it): command, model, name, params, "
                                           "state_names, time, the state, the loss {name, value, "
                                           "se, quadrature_error} (se: a sampled loss's "
                                           "standard error; quadrature_error: the estimated "
                                           "error of integrated expectations; 0: exact), the rhs "
                                           "{state name: d name/d time} and rhs_se, "
                                           "rhs_quadrature_error {state name: error}, numbers "
                                           "as JSON numbers"),
             tol: float | None = typer.Option(None, "--tol", help="the largest acceptable "
                                              "quadrature error (absolute) of the loss and of "
                                              "each d name/d time; not met: one error line. "
                                              "Default: report the error, whatever it is")):
    """Evaluate the loss and the flow's right-hand side at one state, each ± its error where
    it is not exact (se: a sampled loss; quadrature: integrated expectations, split at kinks),
    e.g. evaluate marion2025 --param d=20 --state kappa=0.5 --state nu=0.4;
    evaluate dohmatob2025 --param link=quadratic (or link=PATH.py:NAME, a link of your own: a
    SymPy Lambda of one variable or a function of one SymPy symbol, e.g. CUBE = lambda t: t**3);
    evaluate sagitova2026 --state "m[0,0]=0.3".
    Every error is reported, one line each."""
    errors: list[str] = _cache_errors()
    params, values = _pairs(param, "param", errors), _pairs(state, "state", errors)
    size_errors = _draw_errors(model, params)      # before any draw: the others still checked
    rm, errs = _load(model, {k: v for k, v in params.items()
                             if not (size_errors and k in ("H", "L", "n"))})
    errors += size_errors + errs
    checker = rm
    if rm is None and params and not any("not found" in e or "no such file" in e for e in errs):
        checker, _ = _load(model, None)      # the state's names still checked on the defaults
    if checker is not None:
        errors += _state_errors(checker, values)
    if tol is not None and not (tol > 0 and math.isfinite(tol)):
        errors.append(f"--tol {tol}; allowed: a positive finite number")
    if errors:
        _fail_all(errors)
    y, loss, rhs = _evaluation(rm, params, values, tol)
    names = rm.state_names
    if json_out:
        _echo_json({"command": "evaluate", "model": model, "name": rm.name, "params": _json_params(rm),
                    "state_names": list(names), "time": rm.time, "state": dict(zip(names, y)),
                    "loss": {"name": rm.loss_name, "value": loss.value, "se": loss.stderr,
                             "quadrature_error": loss.quadrature_error},
                    "rhs": dict(zip(names, rhs.value)), "rhs_se": dict(zip(names, rhs.stderr)),
                    "rhs_quadrature_error": dict(zip(names, rhs.quadrature_error))})
        return
    for line in _evaluated(rm, loss, rhs):
        typer.echo(line)


def _with_error(value: float, se: float, quadrature_error: float) -> str:
    """value ± its error, which kind said (nothing for an exact value)."""
    text = f"{value + 0.0:.12g}"                                     # + 0.0: no "-0"
    if se > 0:
        text += f" ± {se:.3g} (se)"
    if quadrature_error > 0:
        text += f" ± {quadrature_error:.2g} (quadrature)"
    return text


def _evaluated(rm, loss, rhs) -> list[str]:
    """``_evaluation``'s loss and right-hand side as lines, each with its error."""
    return ([f"{rm.loss_name} = {_with_error(loss.value, loss.stderr, loss.quadrature_error)}"]
            + [f"d{name}/d{rm.time} = {_with_error(*v)}" for name, *v in
               zip(rm.state_names, rhs.value, rhs.stderr, rhs.quadrature_error)])


def _evaluation(rm, params: dict, values: dict, tol: float | None = None) -> tuple:
    """(the packed state, the loss and the flow's right-hand side as Estimates, floats) at
    ``values``; one error line naming the values when the loss or the right-hand side is not
    finite (parameters in range whose formulas overflow, e.g. --param L=1e308; no numpy
    overflow warning besides it), or when a quadrature error exceeds ``tol``."""
    import numpy as np

    from numerics.expectation import Estimate
    given = " ".join([*(f"--param {k}={v}" for k, v in params.items()),
                      *(f"--state {k}={v}" for k, v in values.items())]) or "the defaults"
    allowed = "allowed: values at which the model's formulas stay finite (less extreme ones)"
    try:
        with np.errstate(all="ignore"):      # what is not finite is reported below, one line
            y = rm.check_state(rm.pack(values, base=rm.default_state()))
            loss = rm.loss_estimate(y, tol)
            rhs = rm.rhs_estimate(y, tol)
    except ValueError as exc:
        _fail(str(exc))
    except (FloatingPointError, OverflowError, ZeroDivisionError) as exc:
        _fail(f"{type(exc).__name__}: {exc} at {given}; {allowed}")
    loss = Estimate(*(float(x) for x in (loss.value, loss.stderr, loss.dof,
                                         loss.quadrature_error)))
    rhs = Estimate(*([float(x) + 0.0 for x in np.broadcast_to(a, (len(rm.state_names),))]
                     for a in (rhs.value, rhs.stderr)), rhs.dof,
                   [float(x) for x in np.broadcast_to(rhs.quadrature_error, (len(rm.state_names),))])
    bad = [f"d{n}/d{rm.time}" for n, r in zip(rm.state_names, rhs.value) if not math.isfinite(r)]
    bad = ([rm.loss_name] if not math.isfinite(loss.value) else []) + bad
    if bad:
        _fail(f"{', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''} not finite at {given}; {allowed}")
    return [float(v) + 0.0 for v in y], loss, rhs
