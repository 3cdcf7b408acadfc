"""The heads command: multi-head attention's weights, flow and saddle Hessian."""

from __future__ import annotations

import math

import typer

from .common import _cache_errors, _fail, _fail_all, app
from .answers import _JSON_HELP, _echo_json, _equation_json, _equations, _expression

_MAX_HF, _MAX_HLF = 6, 18
"""The sizes ``heads`` derives for: the saddle Hessian's SymPy derivatives grow with (H·F)² and
faster than L; within these limits a derivation takes seconds, beyond them minutes (the
measurements: benchmarks/cli_limits.md)."""
_SIZES = f"H·F ≤ {_MAX_HF} and H·L·F ≤ {_MAX_HLF}"


def _size_errors(H: int, L: int, F: int) -> list[str]:
    """Every error in heads' sizes: each below its least value, or together too large."""
    errors = [f"--{k} {v}; allowed: an integer ≥ {lo} ({_SIZES})"
              for k, v, lo in (("H", H, 1), ("L", L, 2), ("F", F, 1)) if v < lo]
    if not errors and (H * F > _MAX_HF or H * L * F > _MAX_HLF):
        errors.append(f"--H {H} --L {L} --F {F}: H·F = {H * F}, H·L·F = {H * L * F}; allowed: "
                      f"{_SIZES} (larger sizes take minutes)")
    return errors


def _derive_size_errors(model: str, rm) -> list[str]:
    """A multi-head model (a MultiHeadModel of the user's) beyond the sizes ``heads`` derives
    for: its saddle Hessian would take minutes (H = 4, L = 8, F = 3: over 90 s)."""
    md = getattr(rm, "model", None)
    if not hasattr(rm, "saddle_equations") or not all(hasattr(md, k) for k in "HLF"):
        return []
    H, L, F = md.H, md.L, md.F
    if H * F <= _MAX_HF and H * L * F <= _MAX_HLF:
        return []
    return [f"model {model}: H = {H}, L = {L}, F = {F}: H·F = {H * F}, H·L·F = {H * L * F}; "
            f"allowed: {_SIZES} (larger sizes take minutes)"]


_PRIOR_HELP = {
    "mean": "the prior's mean μ = Eθ: F numbers, comma-separated (e.g. --mean 0.5,0); with "
            "exactly one of --cov and --second-moment, the saddle Hessian is also evaluated at "
            "this prior and its eigenvalues printed",
    "cov": "the prior's covariance Cov θ: F×F numbers, rows separated by ';' and entries by ',' "
           "(e.g. --cov '1,0;0,0.5'), symmetric and positive semi-definite (or --second-moment)",
    "second-moment": "the prior's second moment S = E θθᵀ = Cov θ + μμᵀ (not the covariance "
                     "unless μ = 0): F×F numbers as for --cov, symmetric, with S − μμᵀ positive "
                     "semi-definite (or --cov)"}


@app.command()
def heads(H: int = typer.Option(2, help=f"number of heads, ≥ 1 ({_SIZES})"),
          L: int = typer.Option(4, help=f"tokens, ≥ 2 ({_SIZES})"),
          F: int = typer.Option(2, help=f"hidden features, ≥ 1 ({_SIZES})"),
          activation: str = typer.Option("softmax", help="softmax | softmax-1 | softmax-v | "
                                         "b-softmax, PATH.py:NAME (an Activation in your own "
                                         "file) or an installed entry point "
                                         "(attention_verification.activations)"),
          output: str = typer.Option("mean", help="mean: ŷ = (1/H)Σ_h; sum: ŷ = Σ_h"),
          latex: bool = typer.Option(False, help="print LaTeX instead of plain text"),
          mean: str | None = typer.Option(None, "--mean", help=_PRIOR_HELP["mean"]),
          cov: str | None = typer.Option(None, "--cov", help=_PRIOR_HELP["cov"]),
          second_moment: str | None = typer.Option(None, "--second-moment",
                                                   help=_PRIOR_HELP["second-moment"]),
          json_out: bool = typer.Option(False, "--json", help=_JSON_HELP + "; 'saddle': the "
                                        "Hessian's coordinates (the state's names m[0,0], ...), the "
                                        "symbols of θ's moments, the symbolic matrix and, with a "
                                        "prior, the prior, hessian_at_prior, eigenvalues and "
                                        "quadrature_error (of the eigenvalues; 0: exact)")):
    """Print what SymPy derives for multi-head attention (Sagitova et al. 2026): token
    weights, the conditional loss φ(s), the flow on (m, r, b, v) and the saddle Hessian of
    Lemma III.1 in the head overlaps m at m = 0, r = 0, b = 0, sinks at v = 0, symbolic in θ's
    moments (every index 0-based, as in the state's names: rows m[0,0], m[0,1], ..., the mean
    mu[0], ..., the second moment S[0,0], S[0,1], ...); any activation and output convention.
    With a prior (--mean and either --cov or --second-moment) also the Hessian at it and its
    eigenvalues, ascending. --json: one JSON document (command, params, state_names, time,
    equations, saddle)."""
    from numerics.reduced import HeadReduced
    from theory.multihead import MultiHeadModel
    act, moments = _heads_inputs(H, L, F, activation, output, (mean, cov, second_moment))
    try:
        rm = HeadReduced(MultiHeadModel(H, L, F, act, output=output))
        eqs = _equations(rm, None)
        saddle = _saddle_answer(rm.model, moments)
    except ValueError as exc:
        _fail(str(exc))
    if json_out:
        _echo_json({"command": "heads", "params": {"H": H, "L": L, "F": F, "activation": act.name,
                                                   "output": output},
                    "state_names": list(rm.state_names), "time": rm.time,
                    "equations": [_equation_json(e) for e in eqs], "saddle": saddle})
        return
    for row in [eq.text(latex) for eq in eqs] + _saddle_rows(saddle, latex):
        typer.echo(row + "\n")


def _heads_inputs(H: int, L: int, F: int, activation: str, output: str, prior: tuple):
    """(the activation, the prior's moments or None) of ``heads``' options; every error at
    once, one line each, exit 2."""
    from ..userfiles import load_activation
    errors = _size_errors(H, L, F) + _cache_errors()
    if output not in ("mean", "sum"):
        errors.append(f"--output {output!r}; allowed: 'mean' or 'sum'")
    act = None
    try:
        act = load_activation(activation)
    except (ValueError, FileNotFoundError) as exc:
        errors.append(f"--{exc}" if str(exc).startswith("activation=") else f"--activation: {exc}")
    moments = _prior_moments(F if F >= 1 else None, *prior, errors)
    if errors:
        _fail_all(errors)
    return act, moments


def _prior_moments(F: int | None, mean: str | None, cov: str | None, second: str | None,
                   errors: list[str]) -> dict | None:
    """The prior of ``heads --mean ... --cov/--second-moment ...`` as ``_moments``; None when
    none of them is given, or on an error (each added to ``errors``). ``F`` None: the sizes
    are wrong, only the options' combination is checked."""
    if mean is None and cov is None and second is None:
        return None
    n0 = len(errors)
    spread = [flag for flag, text in (("--cov", cov), ("--second-moment", second)) if text is not None]
    both = ("exactly one of --cov (the covariance Cov θ) and --second-moment (S = E θθᵀ = "
            "Cov θ + μμᵀ)")
    if len(spread) == 2:
        errors.append(f"--cov and --second-moment both given; allowed: {both}")
    elif not spread:
        errors.append(f"--mean {mean!r} alone; allowed: --mean with {both}")
    if mean is None:
        errors.append(f"{' and '.join(spread)} without --mean; allowed: the prior's mean too "
                      "(F numbers, e.g. --mean 0,0)")
    if F is None or len(errors) > n0:
        return None
    mu = _vector_option("--mean", mean, F, errors)
    given = _matrix_option(spread[0], cov if cov is not None else second, F, errors)
    if len(errors) > n0:
        return None
    if cov is not None:
        return _psd_moments(mu, given, "cov", cov, errors)
    return _psd_moments(mu, given, "second-moment", second, errors)


def _psd_moments(mu, given, flag: str, text: str, errors: list[str]) -> dict | None:
    """``_moments`` from the mean and the covariance or second moment given by ``--flag``, if
    the covariance is positive semi-definite, else an error."""
    import numpy as np
    C = given if flag == "cov" else given - np.outer(mu, mu)
    lam = float(np.linalg.eigvalsh(C).min())
    if lam < -1e-12 * max(1.0, float(np.abs(C).max())):
        what = ("not positive semi-definite" if flag == "cov" else
                "S − μμᵀ (the covariance, μ from --mean) is not positive semi-definite")
        errors.append(f"--{flag} {text!r}: {what} (eigenvalue {lam:.6g} < 0); "
                      f"{_matrix_allowed('--' + flag, len(mu))}")
        return None
    return _moments(flag, mu, cov=given) if flag == "cov" else _moments(flag, mu, second=given)


def _moments(given: str, mean, cov=None, second=None) -> dict:
    """A prior's moments: the mean, the covariance and the second moment (E θθᵀ = Cov + μμᵀ;
    either one given, the other computed) and which option (or 'prior') gave them."""
    import numpy as np
    mean = np.asarray(mean, float)
    outer = np.outer(mean, mean)
    cov = np.asarray(second, float) - outer if cov is None else np.asarray(cov, float)
    second = cov + outer if second is None else np.asarray(second, float)
    return {"given": given, "mean": mean, "cov": cov, "second_moment": second}


def _finite_numbers(text: str) -> list[float] | None:
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        return None
    return values if all(math.isfinite(x) for x in values) else None


def _vector_option(flag: str, text: str, F: int, errors: list[str]):
    """The F numbers of ``flag text`` (comma-separated), or None and an error."""
    import numpy as np
    values = _finite_numbers(text)
    if values is not None and len(values) == F:
        return np.array(values)
    why = ("not finite numbers" if values is None else
           f"{len(values)} number{'s' if len(values) != 1 else ''}")
    example = ",".join(["0.5"] + ["0"] * (F - 1))
    errors.append(f"{flag} {text!r}: {why}; allowed: F = {F} finite numbers, comma-separated "
                  f"(e.g. {flag} {example})")
    return None


def _matrix_option(flag: str, text: str, F: int, errors: list[str]):
    """The symmetric F × F matrix of ``flag text`` (rows separated by ';', entries by ','), or
    None and an error."""
    import numpy as np
    rows = [_finite_numbers(row) for row in text.split(";")]
    why = None
    if any(r is None for r in rows):
        why = "not finite numbers"
    elif len(rows) != F or any(len(r) != F for r in rows):
        why = (f"{len(rows)} row{'s' if len(rows) != 1 else ''} of "
               f"{' and '.join(str(len(r)) for r in rows)} numbers")
    else:
        A = np.array(rows)
        gap = np.abs(A - A.T)
        i, j = np.unravel_index(np.argmax(gap), gap.shape)
        if gap[i, j] <= 1e-12 * max(1.0, float(np.abs(A).max())):
            return (A + A.T) / 2
        why = f"not symmetric ([{i},{j}] = {A[i, j]:g}, [{j},{i}] = {A[j, i]:g})"
    errors.append(f"{flag} {text!r}: {why}; {_matrix_allowed(flag, F)}")
    return None


def _matrix_allowed(flag: str, F: int) -> str:
    example = ";".join(",".join("1" if i == j else "0" for j in range(F)) for i in range(F))
    return (f"allowed: {F}×{F} finite numbers, rows separated by ';' and entries by ',' (e.g. "
            f"{flag} '{example}'), symmetric, " + (
                "positive semi-definite (the covariance Cov θ)" if flag == "--cov" else
                "with S − μμᵀ positive semi-definite (the second moment S = E θθᵀ = Cov θ + μμᵀ, "
                "μ from --mean)"))


def _saddle_answer(model, moments: dict | None) -> dict:
    """The saddle Hessian of Lemma III.1 as an answer: its coordinates (the state's names
    m[h,f]), the symbols of θ's moments, the symbolic matrix and, at a prior's ``moments``
    (``_moments``), the prior, the numeric matrix and its eigenvalues (ascending); null
    without a prior."""
    import numpy as np

    from theory.multihead import saddle_hessian
    Hm, ms, mu, S = saddle_hessian(model)
    doc = {"coordinates": [str(x) for x in ms], "at": "m = 0, r = 0, b = 0, v = 0",
           "mean_symbols": [str(x) for x in mu],
           "second_moment_symbols": [[str(x) for x in S.row(i)] for i in range(S.rows)],
           "hessian": _expression(Hm), "prior": None, "hessian_at_prior": None,
           "eigenvalues": None, "quadrature_error": None}
    if moments is not None:
        Hn, err = _hessian_at(Hm, moments, mu, S)
        doc.update(prior=moments, hessian_at_prior=Hn,
                   eigenvalues=np.linalg.eigvalsh((Hn + Hn.T) / 2), quadrature_error=err)
    return doc


def _hessian_at(Hm, moments: dict, mu, S) -> tuple:
    """(the saddle Hessian at a prior's moments, the quadrature error of its eigenvalues):
    exact (error 0) unless an activation of the user's leaves expectation nodes, which are then
    integrated adaptively; the eigenvalues' error is bounded by the Frobenius norm of the
    entries' errors (Weyl)."""
    import numpy as np

    from theory.gaussian import GaussianExpectation
    from theory.models.sagitova2026 import at_moments
    if not Hm.has(GaussianExpectation):
        return at_moments(Hm, moments["mean"], moments["second_moment"], mu, S), 0.0
    from theory.quadrature import integrate
    at = {S[a, b]: moments["second_moment"][a, b] for a in range(len(mu)) for b in range(len(mu))}
    at.update({mu[a]: moments["mean"][a] for a in range(len(mu))})
    done = [[integrate(Hm[i, j], at) for j in range(Hm.cols)] for i in range(Hm.rows)]
    Hn = np.array([[d.value for d in row] for row in done])
    err = float(np.sqrt(sum(d.quadrature_error ** 2 for row in done for d in row)))
    return Hn, err


def _saddle_rows(saddle: dict, latex: bool) -> list[str]:
    """``heads``' lines for the saddle Hessian at a prior: the matrix and its eigenvalues."""
    import sympy as sp

    from numerics.reduced.base import Equation
    prior = saddle["prior"]
    if prior is None:
        return []
    vec = ", ".join(f"{x + 0.0:.12g}" for x in prior["mean"])
    cov, second = ("; ".join(", ".join(f"{x + 0.0:.12g}" for x in row) for row in prior[k])
                   for k in ("cov", "second_moment"))
    at = f"mean ({vec}), covariance ({cov}), second moment ({second})"
    at_tex = (r"\mu = (" + vec + r"),\ \operatorname{Cov}\theta = (" + cov
              + r"),\ \mathbb{E}\,\theta\theta^\top = (" + second + ")")
    eig = ", ".join(f"{x + 0.0:.12g}" for x in saddle["eigenvalues"])
    if saddle.get("quadrature_error"):
        eig += f" (each ± {saddle['quadrature_error']:.2g}, quadrature)"
    return [Equation(f"saddle Hessian at {at}", r"\left.\frac{\partial^2 L}{\partial m^2}"
                     r"\right|_{m = r = b = 0,\ " + at_tex + "}",
                     sp.Matrix(saddle["hessian_at_prior"])).text(latex),
            Equation(f"saddle Hessian eigenvalues (ascending) at {at}",
                     r"\operatorname{eig}\left.\frac{\partial^2 L}{\partial m^2}\right|_{"
                     + at_tex + "}", eig, eig).text(latex)]


