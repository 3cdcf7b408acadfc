"""Command line: ``python -m verification --help``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help=(
    "Executable claims of attention-layer theory papers. Each claim gets a verdict "
    "(confirmed, refuted, inconclusive, error) with evidence; a run writes report.json, "
    "report.npz, report.md, report.html and figures."))
guard_app = typer.Typer(no_args_is_help=True, help=(
    "Regression guard: store a run as a baseline; compare a later run with it (exit 1 on any "
    "changed verdict or tracked value drifted beyond its tolerance)."))
app.add_typer(guard_app, name="guard")


class Profile(StrEnum):
    quick = "quick"
    full = "full"


class Device(StrEnum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


_CLAIMS_HELP = ("a Python file of your own claims (@claim checks), repeatable; alone, only its "
                "claims run")


def _fail(msg: str):
    typer.secho(f"error: {msg}", fg="red", err=True)
    raise typer.Exit(2)


@app.command("list")
def list_claims(paper: str | None = typer.Option(None, help="only this paper's claims"),
                claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP)):
    """List claim ids, the paper's labels, where each claim comes from (built-in, a plugin, a
    file) and the statements."""
    from .registry import source_of
    try:
        claims = _select(paper, None, claims_file)
    except ValueError as exc:
        _fail(str(exc))
    for c in claims:
        typer.echo(f"{c.id:48s} {c.label:14s} [{source_of(c)}] {c.statement}")


def _select(paper: str | None, ids: list[str] | None, files: list[Path] | None):
    """The claims a command runs: those of ``--claims`` files (only them, unless --paper or
    --claim widen the choice), else all, restricted by --paper and --claim."""
    from .registry import claims_for
    from .userfiles import load_claims_file
    from_files: list[str] = []
    for f in files or []:
        try:
            from_files += load_claims_file(f)
        except (OSError, ValueError) as exc:
            raise ValueError(f"--claims {exc}") from None
    if from_files and not paper and not ids:
        ids = from_files
    return claims_for(paper, ids)


_WORKERS_HELP = ("worker processes on this machine (0: run in this process, for debugging); "
                 "default: every core")
_SCHEDULER_HELP = ("address of an existing dask.distributed scheduler (e.g. one started by "
                   "dask-jobqueue on SLURM); overrides --workers")
_STORE_HELP = ("result store folder (default: $ATTNV_STORE, else OUT/store): results are reused "
               "while their code and inputs are unchanged")


@app.command()
def run(paper: str | None = typer.Option(None, help="only this paper's claims"),
        claim: list[str] | None = typer.Option(None, "--claim", help="claim id (repeatable)"),
        claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP),
        profile: Profile = typer.Option(Profile.quick, help="quick: minutes on 2 CPU cores; full: "
                                        "larger d and samples"),
        device: Device = typer.Option(Device.auto, help="torch device for simulations"),
        seed: int = typer.Option(0, help="run seed (every stochastic check derives its own from it)"),
        out: Path = typer.Option(Path("results"), help="folder for the report files"),
        baseline: Path | None = typer.Option(None, help="compare with this baseline; exit 1 on differences"),
        figures: bool = typer.Option(True, help="draw the report's figures"),
        fail_on_refuted: bool = typer.Option(False, help="exit 1 when a claim is refuted or errors"),
        workers: int | None = typer.Option(None, help=_WORKERS_HELP),
        scheduler: str | None = typer.Option(None, help=_SCHEDULER_HELP),
        store: Path | None = typer.Option(None, help=_STORE_HELP),
        force: bool = typer.Option(False, help="recompute every claim (the store is rewritten)")):
    """Run claims, print the verdict table and write the report.

    report.json is rewritten after every claim ("complete": false until the end); a run that is
    interrupted resumes from the result store when started again with the same options."""
    from .runner import run as run_claims
    errors = _check_common(seed=seed, workers=workers, baseline=baseline)
    if errors:
        _fail_all(errors)
    try:
        claims = _select(paper, claim, claims_file)
        report = run_claims(claims, profile=profile.value, seed=seed, device=device.value,
                            out=out, figures=figures, workers=workers, scheduler=scheduler,
                            store=store, force=force)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"report: {out / 'report.json'} (also report.md, report.html, report.npz)"
               + (f"; {report['reused']} of {len(claims)} claims reused from the store"
                  if report.get("reused") else ""))
    for path in report.get("store_damaged", []):
        typer.secho(f"damaged store entry recomputed: {path}", fg="yellow", err=True)
    code = 0
    if baseline is not None:
        code = _compare(baseline, report)
    if fail_on_refuted and any(c["verdict"] in ("refuted", "error") for c in report["claims"]):
        code = 1
    raise typer.Exit(code)


def _check_common(seed: int | None = None, workers: int | None = None,
                  baseline: Path | None = None) -> list[str]:
    """Every error in the options a command shares, before any work starts."""
    errors = []
    if seed is not None and seed < 0:
        errors.append(f"--seed {seed}; allowed: an integer ≥ 0")
    if workers is not None and workers < 0:
        errors.append(f"--workers {workers}; allowed: an integer ≥ 0 (0: this process)")
    if baseline is not None and not baseline.is_file():
        errors.append(f"--baseline {baseline}: no such file; allowed: a baseline written by "
                      "`guard save` (the committed one is baselines/quick.json)")
    return errors


def _fail_all(errors: list[str]):
    for e in errors:
        typer.secho(f"error: {e}", fg="red", err=True)
    raise typer.Exit(2)


def _compare(baseline_path: Path, report: dict) -> int:
    from .guard import compare, load_report
    try:
        base = load_report(baseline_path)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    diffs = compare(base, report)
    if diffs:
        typer.secho(f"{len(diffs)} difference(s) from baseline {baseline_path}:", fg="red")
        for d in diffs:
            typer.echo(f"  {d}")
        return 1
    typer.secho(f"matches baseline {baseline_path}", fg="green")
    return 0


@guard_app.command("save")
def guard_save(report: Path = typer.Argument(..., help="report.json or its folder"),
               baseline: Path = typer.Argument(..., help="where to store the baseline")):
    """Store a run's report as the baseline."""
    from .guard import save_baseline
    try:
        save_baseline(report, baseline)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(f"baseline stored at {baseline}")


@guard_app.command("compare")
def guard_compare(baseline: Path = typer.Argument(..., help="stored baseline"),
                  report: Path = typer.Argument(..., help="report.json or its folder")):
    """Compare a run with the baseline; exit 1 on any difference."""
    from .guard import load_report
    try:
        current = load_report(report)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    raise typer.Exit(_compare(baseline, current))


@app.command()
def calibrate(paper: str | None = typer.Option(None, help="only this paper's claims"),
              claim: list[str] | None = typer.Option(None, "--claim", help="claim id (repeatable)"),
              claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP),
              seeds: int = typer.Option(10, min=1, help="runs per claim under the true model and "
                                        "under each mutation (seeds 1..K)"),
              profile: Profile = typer.Option(Profile.quick, help="quick or full"),
              device: Device = typer.Option(Device.cpu, help="torch device for simulations"),
              out: Path = typer.Option(Path("calibration"), help="folder for calibration.json "
                                       "and calibration.md"),
              workers: int | None = typer.Option(None, help=_WORKERS_HELP),
              scheduler: str | None = typer.Option(None, help=_SCHEDULER_HELP),
              store: Path | None = typer.Option(None, help=_STORE_HELP),
              force: bool = typer.Option(False, help="recompute every run"),
              merge: list[Path] | None = typer.Option(
                  None, "--merge", help="instead of running: combine these calibration.json "
                  "files (parts of one calibration; repeatable, later ones win per claim) into "
                  "OUT")):
    """Measure each claim's record: false refutations over K fresh seeds under the true model,
    and refutations under mutations (a relative change at the claim's resolution, a sign flip,
    and the formula mutations the claim declares). Writes calibration.json after every run;
    runs on the same engine and store as `run`, so an interrupted calibration resumes."""
    from numerics.sgd.base import resolve_device

    from .calibrate import calibrate as run_calibration
    from .calibrate import merge_calibrations, summary_rows, write_calibration
    errors = _check_common(workers=workers)
    if merge and (paper or claim or claims_file):
        errors.append("--merge combines finished files; it takes no --paper/--claim/--claims")
    if errors:
        _fail_all(errors)
    if merge:
        try:
            from .store import check_folder
            folder = check_folder(out, "--out")
            result = merge_calibrations(merge)
            write_calibration(folder, result)
        except ValueError as exc:
            _fail(str(exc))
        typer.echo(f"calibration: {out / 'calibration.json'} ({len(result['claims'])} claims "
                   f"from {len(merge)} parts)")
        return
    try:
        claims = _select(paper, claim, claims_file)
        result = run_calibration(claims, seeds=seeds, profile=profile.value,
                                 device=resolve_device(device.value), out=out,
                                 progress=lambda msg: typer.echo(msg, err=True), workers=workers,
                                 scheduler=scheduler, store=store, force=force)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo("\n".join(summary_rows(result)))
    typer.echo(f"calibration: {out / 'calibration.json'} ({result['seconds']:.0f} s)")


@app.command()
def sweep(paper: str | None = typer.Option(None, help="only this paper's claims"),
          claim: list[str] | None = typer.Option(None, "--claim", help="claim id (repeatable)"),
          claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP),
          seeds: str = typer.Option("0,1,2", help="run seeds, comma-separated (e.g. 0,1,2)"),
          profile: Profile = typer.Option(Profile.quick, help="quick or full"),
          device: Device = typer.Option(Device.auto, help="torch device for simulations"),
          out: Path = typer.Option(Path("sweep"), help="folder for sweep.json and sweep.md"),
          workers: int | None = typer.Option(None, help=_WORKERS_HELP),
          scheduler: str | None = typer.Option(None, help=_SCHEDULER_HELP),
          store: Path | None = typer.Option(None, help=_STORE_HELP),
          force: bool = typer.Option(False, help="recompute every run")):
    """Run claims at several seeds on one engine and store, and tabulate their verdicts side by
    side: a claim whose verdict moves with the seed is flagged (with its calibration record,
    which says whether that is within its α)."""
    from .sweep import sweep as run_sweep
    from .sweep import table_rows
    errors = _check_common(workers=workers)
    try:
        seed_list = [int(x) for x in seeds.split(",") if x.strip()]
        if not seed_list or min(seed_list) < 0 or len(set(seed_list)) != len(seed_list):
            raise ValueError
    except ValueError:
        errors.append(f"--seeds {seeds!r}; allowed: distinct integers ≥ 0, comma-separated")
        seed_list = []
    if errors:
        _fail_all(errors)
    try:
        claims = _select(paper, claim, claims_file)
        result = run_sweep(claims, seed_list, profile=profile.value, device=device.value, out=out,
                           workers=workers, scheduler=scheduler, store=store, force=force)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo("\n".join(table_rows(result)))
    moved = [c["id"] for c in result["claims"] if not c["agree"]]
    typer.echo(f"sweep: {out / 'sweep.json'}; {len(moved)} claim(s) change verdict with the seed")


_MODEL_HELP = ("marion2025 | dohmatob2025 | sagitova2026, a module in theory.models with a MODEL, "
               "PATH.py[:NAME] (a Model, MultiHeadModel or reduced model in your own file; NAME "
               "defaults to MODEL) or an installed entry point (attention_verification.models)")


def _load(model: str, params: dict | None):
    """(reduced model, []) or (None, every error): with several parameters, each is tried on
    its own so that every bad one is named."""
    from .userfiles import load_model
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


def _equation_rows(rm, latex: bool, simplify: bool) -> list[str]:
    """The model's equations; for the multi-head kind also the saddle Hessian (any activation,
    either output convention)."""
    saddle = hasattr(rm, "saddle_equations")
    eqs = rm.equations(saddle=False) if saddle else rm.equations()
    if simplify:
        eqs = [_simplified(eq) for eq in eqs]
    rows = [eq.text(latex) for eq in eqs]
    if saddle:
        rows += [eq.text(latex) for eq in rm.saddle_equations()]
    return rows


def _simplified(eq):
    import dataclasses

    import sympy as sp
    if not isinstance(eq.rhs, sp.Basic):
        return eq
    s = sp.simplify(eq.rhs)
    return dataclasses.replace(eq, rhs=s) if sp.count_ops(s) <= sp.count_ops(eq.rhs) else eq


def _manifold(on: str | None, errors: list[str]) -> dict:
    fixed = {}
    for item in (on or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            fixed[key.strip()] = float(value)
        except ValueError:
            errors.append(f"--on {item.strip()!r}; allowed: name=number, comma-separated "
                          "(e.g. --on theta=0,eta=0,rho=0)")
    return fixed


@app.command()
def derive(model: str = typer.Argument(..., help=_MODEL_HELP),
           latex: bool = typer.Option(False, help="print LaTeX instead of plain text"),
           on: str | None = typer.Option(None, help="restrict to a manifold, e.g. "
                                         "theta=0,eta=0,rho=0 (order parameters fixed); the "
                                         "output is simplified"),
           simplify: bool = typer.Option(False, help="simplify every expression (slow for the "
                                         "full flows; implied by --on)")):
    """Print what the engine derives for a model: the reduced risk and its overlap flow
    (marion2025; dohmatob2025: R̄ of Prop. 1 and its flow; a Model of your own), or the token
    weights, the conditional loss φ, the flow on (m, r, b, v) and the saddle Hessian
    (sagitova2026, or a MultiHeadModel of your own)."""
    errors: list[str] = []
    fixed = _manifold(on, errors)
    rm, errs = _load(model, None)
    errors += errs
    if rm is not None and fixed:
        if not hasattr(rm, "restrict"):
            errors.append(f"--on: {rm.name} is not an overlap model; allowed: --on with a model "
                          "whose state is order parameters (marion2025, dohmatob2025, a Model)")
        else:
            try:
                rm = rm.restrict(fixed)
            except ValueError as exc:
                errors.append(f"--on: {exc}")
    if errors:
        _fail_all(errors)
    try:
        rows = _equation_rows(rm, latex, simplify or bool(fixed))
    except ValueError as exc:
        _fail(str(exc))
    for row in rows:
        typer.echo(row + "\n")


@app.command()
def heads(H: int = typer.Option(2, help="number of heads"), L: int = typer.Option(4, help="tokens"),
          F: int = typer.Option(2, help="hidden features"),
          activation: str = typer.Option("softmax", help="softmax | softmax-1 | softmax-v | "
                                         "b-softmax, PATH.py:NAME (an Activation in your own "
                                         "file) or an installed entry point "
                                         "(attention_verification.activations)"),
          output: str = typer.Option("mean", help="mean: ŷ = (1/H)Σ_h; sum: ŷ = Σ_h"),
          latex: bool = typer.Option(False, help="print LaTeX instead of plain text")):
    """Print what SymPy derives for multi-head attention (Sagitova et al. 2026): token
    weights, the conditional loss φ(s), the flow on (m, r, b, v) and the saddle Hessian of
    Lemma III.1 in the head overlaps m at m = 0, r = 0, b = 0, sinks at v = 0 (θ's moments as
    symbols mu_f, S_ff′); any activation and output convention."""
    from numerics.reduced import HeadReduced
    from theory.multihead import MultiHeadModel

    from .userfiles import load_activation
    errors = [f"--{k} {v}; allowed: an integer ≥ {lo}" for k, v, lo in (("H", H, 1), ("L", L, 2),
                                                                       ("F", F, 1)) if v < lo]
    if output not in ("mean", "sum"):
        errors.append(f"--output {output!r}; allowed: 'mean' or 'sum'")
    act = None
    try:
        act = load_activation(activation)
    except (ValueError, FileNotFoundError) as exc:
        errors.append(f"--{exc}" if str(exc).startswith("activation=") else f"--activation: {exc}")
    if errors:
        _fail_all(errors)
    try:
        rm = HeadReduced(MultiHeadModel(H, L, F, act, output=output))
        rows = _equation_rows(rm, latex, False)
    except ValueError as exc:
        _fail(str(exc))
    for row in rows:
        typer.echo(row + "\n")


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


def _state_errors(rm, state: dict) -> list[str]:
    try:
        rm.check_state(rm.pack(state, base=rm.default_state()))
    except (ValueError, FloatingPointError) as exc:
        return [str(exc)]
    return []


@app.command()
def evaluate(model: str = typer.Argument(..., help=_MODEL_HELP),
             param: list[str] | None = typer.Option(None, "--param", help="name=value (repeatable; "
                                                    "defaults for the rest)"),
             state: list[str] | None = typer.Option(None, "--state", "--overlap",
                                                    help="name=value (repeatable; defaults for the rest)")):
    """Evaluate the loss (± its standard error where estimated) and the flow's right-hand side
    at one state, e.g. evaluate marion2025 --param d=20 --state kappa=0.5 --state nu=0.4;
    evaluate dohmatob2025 --param link=quadratic; evaluate sagitova2026 --state "m[0,0]=0.3".
    Every error is reported, one line each."""
    errors: list[str] = []
    params, values = _pairs(param, "param", errors), _pairs(state, "state", errors)
    rm, errs = _load(model, params)
    errors += errs
    checker = rm
    if rm is None and params and not any("not found" in e or "no such file" in e for e in errs):
        checker, _ = _load(model, None)      # the state's names still checked on the defaults
    if checker is not None:
        errors += _state_errors(checker, values)
    if errors:
        _fail_all(errors)
    try:
        y = rm.check_state(rm.pack(values, base=rm.default_state()))
        loss, se = rm.loss(y)
        rhs = rm.rhs(y)
    except (ValueError, FloatingPointError) as exc:
        _fail(str(exc))
    typer.echo(f"{rm.loss_name} = {loss:.12g}" + (f" ± {se:.3g}" if se > 0 else ""))
    for name, r in zip(rm.state_names, rhs):
        typer.echo(f"d{name}/d{rm.time} = {float(r) + 0.0:.12g}")     # + 0.0: no "-0"


def main():
    app()
