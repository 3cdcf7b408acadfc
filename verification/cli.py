"""Command line: ``python -m verification --help``."""

from __future__ import annotations

from enum import Enum
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


class Profile(str, Enum):
    quick = "quick"
    full = "full"


class Device(str, Enum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


def _fail(msg: str):
    typer.secho(f"error: {msg}", fg="red", err=True)
    raise typer.Exit(2)


@app.command("list")
def list_claims(paper: str | None = typer.Option(None, help="only this paper's claims")):
    """List claim ids, the paper's labels and the statements."""
    from .registry import claims_for
    try:
        claims = claims_for(paper)
    except ValueError as exc:
        _fail(str(exc))
    for c in claims:
        typer.echo(f"{c.id:48s} {c.label:14s} {c.statement}")


@app.command()
def run(paper: str | None = typer.Option(None, help="only this paper's claims"),
        claim: list[str] | None = typer.Option(None, "--claim", help="claim id (repeatable)"),
        profile: Profile = typer.Option(Profile.quick, help="quick: minutes on 2 CPU cores; full: larger d and samples"),
        device: Device = typer.Option(Device.auto, help="torch device for simulations"),
        seed: int = typer.Option(0, help="run seed (every stochastic check derives its own from it)"),
        out: Path = typer.Option(Path("results"), help="folder for the report files"),
        baseline: Path | None = typer.Option(None, help="compare with this baseline; exit 1 on differences"),
        figures: bool = typer.Option(True, help="draw the report's figures"),
        fail_on_refuted: bool = typer.Option(False, help="exit 1 when a claim is refuted or errors")):
    """Run claims, print the verdict table and write the report."""
    from .registry import claims_for
    from .runner import run as run_claims
    if seed < 0:
        _fail(f"--seed {seed} must be >= 0")
    try:
        claims = claims_for(paper, claim)
        report = run_claims(claims, profile=profile.value, seed=seed, device=device.value,
                            out=out, figures=figures)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"report: {out / 'report.json'} (also report.md, report.html, report.npz)")
    code = 0
    if baseline is not None:
        code = _compare(baseline, report)
    if fail_on_refuted and any(c["verdict"] in ("refuted", "error") for c in report["claims"]):
        code = 1
    raise typer.Exit(code)


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
def derive(model: str = typer.Argument(..., help="model module in theory.models, e.g. marion2025"),
           latex: bool = typer.Option(False, help="print LaTeX instead of plain text")):
    """Print the reduced risk and the overlap flow the engine derives for a model."""
    import importlib
    import sympy as sp
    from theory import derive as derive_model
    try:
        mod = importlib.import_module(f"theory.models.{model}")
    except ModuleNotFoundError:
        _fail(f"model {model!r} not found in theory/models/")
    if not hasattr(mod, "MODEL"):
        _fail(f"theory.models.{model} describes multi-head attention; use `heads` instead")
    d = derive_model(mod.MODEL)
    show = sp.latex if latex else sp.sstr
    typer.echo(f"R = {show(d.risk)}\n")
    for q, r in zip(d.flow.state, d.flow.rhs):
        typer.echo(f"d{q}/dt = {show(r)}\n")


@app.command()
def heads(H: int = typer.Option(2, help="number of heads"), L: int = typer.Option(4, help="tokens"),
          F: int = typer.Option(2, help="hidden features"),
          activation: str = typer.Option("softmax", help="softmax | softmax-1 | softmax-v | b-softmax"),
          output: str = typer.Option("mean", help="mean: ŷ = (1/H)Σ_h; sum: ŷ = Σ_h"),
          latex: bool = typer.Option(False, help="print LaTeX instead of plain text")):
    """Print what SymPy derives for multi-head attention (Sagitova et al. 2026): token
    weights, the conditional loss φ(s) and the saddle Hessian of Lemma III.1 in the head
    overlaps m at m = 0, r = 0 (θ's moments as symbols mu_f, S_ff′)."""
    import sympy as sp
    from theory.models.sagitova2026 import saddle_hessian
    from theory.multihead import MultiHeadModel
    try:
        md = MultiHeadModel(H, L, F, activation, output=output)
    except ValueError as exc:
        _fail(str(exc))
    show = sp.latex if latex else sp.sstr
    for l, w in enumerate(md.token_weights):
        typer.echo(f"w_{l} = {show(w)}\n")
    typer.echo(f"phi = {show(md.conditional_loss)}\n")
    if activation in ("softmax", "softmax-1", "b-softmax") and output == "mean":
        Hm, ms, mu, S = saddle_hessian(L, H, F, activation)
        typer.echo(f"saddle Hessian in {[str(x) for x in ms]} = {show(Hm)}")


def _pairs(items, what):
    out = {}
    for item in items or []:
        if "=" not in item:
            _fail(f"--{what} {item!r} must look like name=value")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


@app.command()
def evaluate(model: str = typer.Argument(..., help="model module in theory.models, e.g. marion2025"),
             param: list[str] | None = typer.Option(None, "--param", help="name=value (repeatable)"),
             overlap: list[str] | None = typer.Option(None, "--overlap", help="name=value (repeatable)")):
    """Evaluate the derived risk and overlap flow at one point, e.g.
    evaluate marion2025 --param d=20 --param L=3 --param lam=0.7 --param gamma=0.8
    --param eps=0.3 --overlap kappa=0.5 --overlap nu=0.4 --overlap theta=0 --overlap eta=0
    --overlap rho=0."""
    import importlib
    from numerics import compiled
    try:
        mod = importlib.import_module(f"theory.models.{model}")
    except ModuleNotFoundError:
        _fail(f"model {model!r} not found in theory/models/")
    cm = compiled(mod.MODEL)
    try:
        params = cm.model.check_params(_pairs(param, "param"))
        q = cm.q_vector(_pairs(overlap, "overlap"))
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"risk = {float(cm.risk(params, q)):.12g}")
    for s, r in zip(cm.model.order_parameters, cm.rhs(params, q)):
        typer.echo(f"d{s.name}/dt = {float(r):.12g}")


def main():
    app()
