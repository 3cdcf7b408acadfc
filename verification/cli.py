"""Command line: ``python -m verification --help``.

Every error is one line on stderr and no traceback: bad input (an option out of range, a file
that is not there, a file of the user's that fails while it is imported: ``FILE:LINE:
ErrorType: message``) exits 2, an unexpected error 1 (``error: ErrorType: message``; an
OSError names the path and the reason), Ctrl-C 130 (``interrupted: ...``). ``--debug`` (before
the command) shows the full traceback instead of the one line, with the same exit code."""

from __future__ import annotations

import contextlib
import math
import sys
import traceback
from enum import StrEnum
from pathlib import Path

import typer
from typer.core import TyperGroup

_MAX_LINE = 600
"""Characters of an unexpected error's message shown (--debug shows all)."""


class _Commands(TyperGroup):
    """The application's command group: what escapes a command becomes one line and an exit
    code (``_exit_code``), or the full traceback with ``--debug``; a usage error (an unknown
    option, a value of the wrong type) is one line too."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException, BrokenPipeError):
            raise                                # BrokenPipeError: a closed pipe, exit 1 quietly
        except BaseException as exc:
            code = _exit_code(exc)
            if code is None:                     # SystemExit, GeneratorExit: as they are
                raise
            if ctx.find_root().params.get("debug"):
                traceback.print_exception(exc, file=sys.stderr)
            else:
                _say(_one_line(exc))
            raise typer.Exit(code) from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        empty = _empty_path_option(sys.argv[1:] if args is None else list(args))
        if empty:
            _say(f"error: {empty} ''; allowed: a path (an empty one would mean the current "
                 "folder)")
            if standalone_mode:
                sys.exit(2)
            return 2
        try:
            code = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                standalone_mode=False, **extra)
        except typer.TyperException as exc:
            code = exc.exit_code
            if type(exc).__name__ != "NoArgsIsHelpError":     # the help is printed already
                _say(_usage_line(exc))
        except typer.Abort:
            _say("error: aborted")
            code = 1
        code = code if isinstance(code, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


_PATH_OPTIONS = ("--out", "--store", "--claims", "--baseline", "--merge", "--rejudge",
                 "--tls-ca-file", "--tls-cert", "--tls-key")


def _empty_path_option(args: list[str]) -> str | None:
    """The first path option given an empty value (``--out ''`` or ``--out=``), which a Path
    would read as the current folder."""
    for i, a in enumerate(args):
        name, eq, value = a.partition("=")
        if name in _PATH_OPTIONS and ((eq and not value.strip()) or
                                      (not eq and i + 1 < len(args) and not args[i + 1].strip())):
            return name
    return None


def _exit_code(exc: BaseException) -> int | None:
    from .userfiles import UserFileError
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, UserFileError):
        return 2
    return 1 if isinstance(exc, Exception) else None


_LINE_BREAKS = str.maketrans({c: repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"})
"""What would break an error's one line (a path or value the user gave that holds a line
break, e.g. $'a\\nb'): written escaped, as Python writes it (\\n)."""


def _say(line: str) -> None:
    typer.secho(line.translate(_LINE_BREAKS), fg="red", err=True)


def _usage_line(exc) -> str:
    msg = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    return f"error: {msg}" + (f" (see '{ctx.command_path} --help')" if ctx is not None else "")


def _one_line(exc: BaseException) -> str:
    """What an exception that reached the command line says, on one line."""
    from .userfiles import UserFileError, user_frame
    if isinstance(exc, KeyboardInterrupt):
        return f"interrupted: {getattr(exc, 'cli_note', None) or 'stopped by Ctrl-C'}"
    if isinstance(exc, UserFileError):
        return str(exc)
    if isinstance(exc, OSError) and (exc.filename is not None or exc.strerror):
        where = f"{exc.filename}: " if exc.filename is not None else ""
        text = where + (exc.strerror or str(exc))
    else:
        text = f"{type(exc).__name__}: {' '.join(str(exc).split())}".rstrip(": ")
    if len(text) > _MAX_LINE:
        text = text[:_MAX_LINE] + " … (--debug shows all)"
    frame = user_frame(exc)
    return f"error: {text}" + (f" (at {frame[0]}:{frame[1]})" if frame else "")


@contextlib.contextmanager
def _interrupt_note(note: str):
    """A Ctrl-C within says ``note`` (what was kept) when it reaches the command line."""
    try:
        yield
    except KeyboardInterrupt as exc:
        exc.cli_note = note
        raise


app = typer.Typer(cls=_Commands, add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False, help=(
                      "Executable claims of attention-layer theory papers. Each claim gets a "
                      "verdict (confirmed, refuted, inconclusive, error) with evidence; a run "
                      "writes report.json, report.npz, report.md, report.html and figures."))
guard_app = typer.Typer(no_args_is_help=True, help=(
    "Regression guard: store a run as a baseline; compare a later run with it (exit 1 on any "
    "changed verdict or tracked value drifted beyond its tolerance)."))
app.add_typer(guard_app, name="guard")
store_app = typer.Typer(no_args_is_help=True, help=(
    "The result store as a cache of simulations: what it holds by claim and stage, pruning what "
    "no current key reaches, export to and import from a tar file (to share simulations "
    "between machines with the same store key)."))
app.add_typer(store_app, name="store")


@app.callback()
def _options(debug: bool = typer.Option(False, "--debug", help="on an error, show the full "
                                        "traceback instead of one line (same exit code); give "
                                        "it before the command")):
    pass


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
    _say(f"error: {msg}")
    raise typer.Exit(2)


@app.command("list")
def list_claims(paper: str | None = typer.Option(None, help="only this paper's claims"),
                claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP)):
    """List claim ids, the paper's labels, where each claim comes from (built-in, a plugin, a
    file) and the statements."""
    from .catalogue import source_of
    try:
        claims = _select(paper, None, claims_file)
    except ValueError as exc:
        _fail(str(exc))
    for c in claims:
        typer.echo(f"{c.id:48s} {c.label:14s} [{source_of(c)}] {c.statement}")


def _select(paper: str | None, ids: list[str] | None, files: list[Path] | None):
    """The claims a command runs: those of ``--claims`` files (only them, unless --paper or
    --claim widen the choice), else all, restricted by --paper and --claim."""
    from .catalogue import claims_for
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
_DASHBOARD_HELP = ("serve dask's dashboard on 127.0.0.1 and print its address (it answers "
                   "anyone who can reach it); needs --workers ≥ 1 or --scheduler")
_TLS_HELP = ("for a --scheduler tls://HOST:PORT: {what} (a PEM file; all three of "
             "--tls-ca-file, --tls-cert and --tls-key, only with --scheduler)")


def _dashboard_option():
    return typer.Option(False, "--dashboard", help=_DASHBOARD_HELP)


def _insecure_option():
    return typer.Option(False, "--insecure-scheduler", help=(
        "dial a plain tcp:// --scheduler on another machine (refused otherwise: its traffic can "
        "be read and altered on the way, and its workers run code as you); prefer tls://"))


def _tls_option(flag: str, what: str):
    return typer.Option(None, flag, help=_TLS_HELP.format(what=what))


def _check_run_options(errors: list[str], workers: int | None, scheduler: str | None,
                       dashboard: bool, tls_files: tuple[Path | None, Path | None, Path | None],
                       insecure_scheduler: bool = False) -> dict:
    """The engine's keywords ``dashboard``, ``tls`` and ``insecure_scheduler``; with ``errors``
    and every error of the cluster options, one line each, exit 2."""
    from .engine import cluster_option_errors
    tls = {field: str(path) for field, path in zip(("ca_file", "cert", "key"), tls_files)
           if path is not None} or None
    errors = errors + cluster_option_errors(workers, scheduler, dashboard, tls, insecure_scheduler)
    if errors:
        _fail_all(errors)
    return {"dashboard": bool(dashboard), "tls": tls, "insecure_scheduler": bool(insecure_scheduler)}


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
        insecure_scheduler: bool = _insecure_option(),
        dashboard: bool = _dashboard_option(),
        tls_ca_file: Path | None = _tls_option("--tls-ca-file", "the certificate authority"),
        tls_cert: Path | None = _tls_option("--tls-cert", "this client's certificate"),
        tls_key: Path | None = _tls_option("--tls-key", "this client's private key"),
        store: Path | None = typer.Option(None, help=_STORE_HELP),
        force: bool = typer.Option(False, help="recompute every claim (the store is rewritten)"),
        rejudge: bool = typer.Option(False, "--rejudge", help="judge every claim again from its "
                                     "stored simulations (computing only those not stored)"),
        wide: bool = typer.Option(False, "--wide", help="print the verdict table with each claim's "
                                  "label and summary (always in report.md and report.html)")):
    """Run claims, print the verdict table (within the terminal's width; --wide: with labels and
    summaries) and write the report.

    report.json is rewritten after every claim ("complete": false until the end); a run that is
    interrupted resumes from the result store when started again with the same options."""
    from .runner import run as run_claims
    errors = _check_common(seed=seed, workers=workers, baseline=baseline)
    cluster = _check_run_options(errors, workers, scheduler, dashboard,
                                 (tls_ca_file, tls_cert, tls_key), insecure_scheduler)
    note = (f"the report in {out} is marked incomplete (report.json: \"complete\": false); the "
            "same command resumes from the result store")
    try:
        claims = _select(paper, claim, claims_file)
        with _interrupt_note(note):
            report = run_claims(claims, profile=profile.value, seed=seed, device=device.value,
                                out=out, figures=figures, workers=workers, scheduler=scheduler,
                                store=store, force=force, wide=wide, rejudge=rejudge, **cluster)
    except ValueError as exc:
        _fail(str(exc))
    from .report import report_lines
    typer.echo("\n".join(report_lines(out, report, len(claims))))
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


def _cache_errors() -> list[str]:
    """The code cache and the user's key checked before any work, as ``run`` does."""
    from numerics.codegen.cache import check_cache
    try:
        check_cache()
    except ValueError as exc:
        return [str(exc)]
    return []


def _fail_all(errors: list[str]):
    for e in errors:
        _say(f"error: {e}")
    raise typer.Exit(2)


_REPORT_ALLOWED = ("allowed: a report.json written by `run` (or its folder), or a baseline "
                   "written by `guard save`")


def _read_report(path: Path, what: str, errors: list[str]) -> dict | None:
    """The report (or baseline) at ``path``; None and an error naming ``what`` when it cannot
    be read or is not one (a list of claims, each with an id and a verdict)."""
    from .guard import load_report
    try:
        rep = load_report(path)
        claims = rep.get("claims") if isinstance(rep, dict) else None
        if not isinstance(claims, list) or not all(
                isinstance(c, dict) and isinstance(c.get("id"), str)
                and isinstance(c.get("verdict"), str) for c in claims):
            raise ValueError("no list of claims with an id and a verdict each")
    except FileNotFoundError as exc:
        errors.append(f"{what}: {exc}; {_REPORT_ALLOWED}")
    except OSError as exc:
        errors.append(f"{what} {path}: {exc.strerror or exc}; {_REPORT_ALLOWED}")
    except ValueError as exc:
        errors.append(f"{what} {path}: not a report ({' '.join(str(exc).split())}); "
                      f"{_REPORT_ALLOWED}")
    else:
        return rep
    return None


def _compare(baseline_path: Path, report: dict) -> int:
    from .guard import compare
    errors: list[str] = []
    base = _read_report(baseline_path, "baseline", errors)
    if errors:
        _fail_all(errors)
    try:
        diffs = compare(base, report)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        _fail(f"baseline {baseline_path} or the report is malformed ({type(exc).__name__}: "
              f"{exc}); {_REPORT_ALLOWED}")
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
    errors: list[str] = []
    _read_report(report, "report", errors)
    if baseline.is_dir():
        errors.append(f"baseline {baseline} is a folder; allowed: the path of a file to write "
                      "(e.g. baselines/quick.json)")
    if errors:
        _fail_all(errors)
    try:
        save_baseline(report, baseline)
    except ValueError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"baseline {baseline}: cannot write ({exc.strerror or exc}); allowed: a file in "
              "a folder you can write")
    typer.echo(f"baseline stored at {baseline}")


@guard_app.command("compare")
def guard_compare(baseline: Path = typer.Argument(..., help="stored baseline"),
                  report: Path = typer.Argument(..., help="report.json or its folder")):
    """Compare a run with the baseline; exit 1 on any difference."""
    errors: list[str] = []
    _read_report(baseline, "baseline", errors)
    current = _read_report(report, "report", errors)
    if errors:
        _fail_all(errors)
    raise typer.Exit(_compare(baseline, current))


_MAX_CALIBRATION_SEEDS = 1000
"""K of ``calibrate --seeds``: each seed is a run of every claim and of each of its mutations
(the committed calibration uses 10; a K of 10⁹ only queued tasks until memory ran out)."""


@app.command()
def calibrate(paper: str | None = typer.Option(None, help="only this paper's claims"),
              claim: list[str] | None = typer.Option(None, "--claim", help="claim id (repeatable)"),
              claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP),
              seeds: int = typer.Option(10, min=1, max=_MAX_CALIBRATION_SEEDS,
                                        help="runs per claim under the true model and under "
                                        "each mutation (seeds 1..K; K ≤ 1000)"),
              profile: Profile = typer.Option(Profile.quick, help="quick or full"),
              device: Device = typer.Option(Device.cpu, help="torch device for simulations"),
              out: Path = typer.Option(Path("calibration"), help="folder for calibration.json "
                                       "and calibration.md"),
              workers: int | None = typer.Option(None, help=_WORKERS_HELP),
              scheduler: str | None = typer.Option(None, help=_SCHEDULER_HELP),
              insecure_scheduler: bool = _insecure_option(),
              dashboard: bool = _dashboard_option(),
              tls_ca_file: Path | None = _tls_option("--tls-ca-file", "the certificate authority"),
              tls_cert: Path | None = _tls_option("--tls-cert", "this client's certificate"),
              tls_key: Path | None = _tls_option("--tls-key", "this client's private key"),
              store: Path | None = typer.Option(None, help=_STORE_HELP),
              force: bool = typer.Option(False, help="recompute every run"),
              merge: list[Path] | None = typer.Option(
                  None, "--merge", help="instead of running: combine these calibration.json "
                  "files (parts of one calibration; repeatable, later ones win per claim) into "
                  "OUT"),
              rejudge: Path | None = typer.Option(
                  None, "--rejudge", help="instead of running: bring the stale records of this "
                  "calibration file (e.g. calibration/quick.json) up to date from the stored "
                  "simulations only, rewrite it, and list the records that still need "
                  "simulating with their estimated time")):
    """Measure each claim's record over K fresh seeds: false refutations and pulls
    ((estimate − claim)/se) under the true model; each family's power with its claimed values
    moved by 0.5× and 1× its own resolution (flagged when the resolution is misstated); a sign
    flip; and every mutation the claim declares, caught or not, with its size in resolutions.
    Perturbed runs judge the true runs' stored simulations. Writes calibration.json and .md
    after every run; runs on the same engine and store as `run`, so an interrupted
    calibration resumes."""
    from numerics.sgd.base import resolve_device

    from .calibrate import calibrate as run_calibration
    from .records import summary_rows
    errors = _check_common(workers=workers)
    if merge and (paper or claim or claims_file):
        errors.append("--merge combines finished files; it takes no --paper/--claim/--claims")
    cluster = _check_run_options(errors, workers, scheduler, dashboard,
                                 (tls_ca_file, tls_cert, tls_key), insecure_scheduler)
    if merge and rejudge:
        errors.append("--merge and --rejudge are two different jobs; give one")
    if merge:
        _merge_calibrations(merge, out)
        return
    if rejudge:
        _rejudge(rejudge, paper, claim, claims_file, device, workers, scheduler, store, cluster)
        return
    note = (f"{out / 'calibration.json'} holds the runs finished so far; the same command "
            "resumes from the result store")
    try:
        claims = _select(paper, claim, claims_file)
        with _interrupt_note(note):
            result = run_calibration(claims, seeds=seeds, profile=profile.value,
                                     device=resolve_device(device.value), out=out,
                                     progress=lambda msg: typer.echo(msg, err=True),
                                     workers=workers, scheduler=scheduler, store=store,
                                     force=force, **cluster)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo("\n".join(summary_rows(result)))
    typer.echo(f"calibration: {out / 'calibration.json'} ({result['seconds']:.0f} s)")


def _rejudge(path: Path, paper, claim, claims_file, device, workers, scheduler, store,
             cluster) -> None:
    from numerics.sgd.base import resolve_device

    from .calibrate import rejudge
    try:
        chosen = _select(paper, claim, claims_file) if (paper or claim or claims_file) else None
        with _interrupt_note(f"{path} is unchanged; the same command resumes from the store"):
            done = rejudge(path, chosen, device=resolve_device(device.value),
                           progress=lambda msg: typer.echo(msg, err=True), workers=workers,
                           scheduler=scheduler, store=store, **cluster)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"{path}: {len(done['rejudged'])} records re-judged from stored simulations "
               f"({done['seconds']:.0f} s), {len(done['current'])} already current")
    for row in done["needs_simulating"]:
        typer.echo(f"  {row['id']}: needs simulating, about {row['estimated_seconds'] / 60:.0f} "
                   f"core-minutes ({row['missing']})")
    if done["needs_simulating"]:
        typer.echo("simulate them with: calibrate --claim ID ... --seeds K --out DIR, then "
                   f"calibrate --merge {path} DIR/calibration.json --out {path.parent}")


def _merge_calibrations(parts: list[Path], out: Path) -> None:
    from .calibrate import merge_calibrations, write_calibration
    from .store import check_folder
    try:
        folder = check_folder(out, "--out")
        result = merge_calibrations(parts)
        write_calibration(folder, result)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"calibration: {out / 'calibration.json'} ({len(result['claims'])} claims "
               f"from {len(parts)} parts)")


def _store_of(store: Path | None):
    """The store a `store` command works on: --store, else $ATTNV_STORE, else results/store."""
    import os

    from .store import STORE_ENV, ResultStore
    root = store or (Path(os.environ[STORE_ENV]) if os.environ.get(STORE_ENV) else
                     Path("results") / "store")
    if not root.is_dir():
        _fail(f"--store {root} is not a folder; allowed: a result store (the --store of a run, "
              "else $ATTNV_STORE, else results/store)")
    return ResultStore(root)


_STORE_ARG_HELP = "the store (default: $ATTNV_STORE, else results/store)"


@store_app.command("size")
def store_size(store: Path | None = typer.Option(None, help=_STORE_ARG_HELP),
               top: int = typer.Option(20, min=1, help="rows shown, largest first")):
    """What the store holds: entries and bytes by stage (simulation, judgement) and claim."""
    from .storeops import usage
    got = usage(_store_of(store))
    typer.echo(f"{got['entries']} entries, {got['bytes'] / 1e6:.1f} MB"
               + (f" ({got['unreadable']} not authenticated by your key)" if got["unreadable"] else ""))
    for r in got["rows"][:top]:
        what = f" {r['what'].rsplit('.', 1)[-1]}" if r["what"] else ""
        typer.echo(f"  {r['bytes'] / 1e6:8.2f} MB {r['entries']:6d}  {r['stage']:<10} "
                   f"{r['claim']}{what}")
    if len(got["rows"]) > top:
        typer.echo(f"  ... {len(got['rows']) - top} more rows (--top)")


@store_app.command("prune")
def store_prune(store: Path | None = typer.Option(None, help=_STORE_ARG_HELP),
                dry_run: bool = typer.Option(False, "--dry-run", help="count, remove nothing")):
    """Remove the entries no current key reaches (code or library versions changed since, or
    not authenticated by your key); entries of claims or files not known here are kept."""
    from .storeops import prune
    got = prune(_store_of(store), dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    typer.echo(f"{verb} {got['removed']} entries ({got['bytes'] / 1e6:.1f} MB); kept "
               f"{got['kept']} ({got['unknown']} whose code is not known here)")


@store_app.command("export")
def store_export(dest: Path = typer.Argument(..., help="the tar file to write"),
                 store: Path | None = typer.Option(None, help=_STORE_ARG_HELP),
                 claim: list[str] | None = typer.Option(
                     None, "--claim", help="only this claim's judgements and the simulations it "
                     "asked for first (repeatable)"),
                 simulations_only: bool = typer.Option(False, "--simulations-only",
                                                       help="only the simulations")):
    """Write the store's authenticated entries to one tar file (data only)."""
    from .storeops import export_store
    if dest.exists() and dest.is_dir():
        _fail(f"DEST {dest} is a folder; allowed: a file to write")
    stages = ("simulation",) if simulations_only else ("simulation", "judgement")
    got = export_store(_store_of(store), dest, claim, stages)
    typer.echo(f"{got['path']}: {got['entries']} entries ({got['bytes'] / 1e6:.1f} MB)")


@store_app.command("import")
def store_import(src: Path = typer.Argument(..., help="a tar file written by `store export`"),
                 store: Path | None = typer.Option(None, help=_STORE_ARG_HELP)):
    """Add the entries of an export to the store: only those your store key authenticates
    (the same $ATTNV_STORE_KEY_FILE on both machines)."""
    import os

    from .store import STORE_ENV, check_folder
    from .storeops import import_store
    if not src.is_file():
        _fail(f"SRC {src} is not a file; allowed: a tar file written by `store export`")
    root = store or (Path(os.environ[STORE_ENV]) if os.environ.get(STORE_ENV) else
                     Path("results") / "store")
    try:
        got = import_store(src, _store_from(check_folder(root, "--store")))
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"imported {got['imported']} entries, {got['present']} already there, "
               f"{got['refused']} refused (not authenticated by your store key)")


def _store_from(root: Path):
    from .store import ResultStore
    return ResultStore(root)


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
          insecure_scheduler: bool = _insecure_option(),
          dashboard: bool = _dashboard_option(),
          tls_ca_file: Path | None = _tls_option("--tls-ca-file", "the certificate authority"),
          tls_cert: Path | None = _tls_option("--tls-cert", "this client's certificate"),
          tls_key: Path | None = _tls_option("--tls-key", "this client's private key"),
          store: Path | None = typer.Option(None, help=_STORE_HELP),
          force: bool = typer.Option(False, help="recompute every run")):
    """Run claims at several seeds on one engine and store, and tabulate their verdicts side by
    side: a claim whose verdict moves with the seed is flagged (with its calibration record,
    which says whether that is within its α)."""
    from .sweep import sweep as run_sweep
    from .sweep import table_rows
    errors = _check_common(workers=workers)
    seed_list = _seed_list(seeds, errors)
    cluster = _check_run_options(errors, workers, scheduler, dashboard,
                                 (tls_ca_file, tls_cert, tls_key), insecure_scheduler)
    note = (f"{out / 'sweep.json'} holds the runs finished so far (\"complete\": false); the "
            "same command resumes from the result store")
    try:
        claims = _select(paper, claim, claims_file)
        with _interrupt_note(note):
            result = run_sweep(claims, seed_list, profile=profile.value, device=device.value,
                               out=out, workers=workers, scheduler=scheduler, store=store,
                               force=force, **cluster)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo("\n".join(table_rows(result)))
    moved = [c["id"] for c in result["claims"] if not c["agree"]]
    typer.echo(f"sweep: {out / 'sweep.json'}; {len(moved)} claim(s) change verdict with the seed")


MAX_MAP_POINTS = 100_000


@app.command("map")
def map_command(claim_id: str = typer.Argument(..., metavar="CLAIM",
                                               help="the claim's id (see 'list')"),
                claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP),
                points: int = typer.Option(64, "--points", help="settings sampled over the "
                                           "domain (scrambled Sobol over the ranges, every "
                                           "choice), before the boundaries are refined"),
                seed: int = typer.Option(0, help="seed of the sampling and of the claim's runs"),
                profile: Profile = typer.Option(Profile.quick, help="the effort judging each "
                                                "setting (quick or full)"),
                device: Device = typer.Option(Device.auto, help="torch device for simulations"),
                out: Path | None = typer.Option(None, help="folder for map.json, map.md, map.html "
                                                "and figures/ (default: maps/<claim>)"),
                workers: int | None = typer.Option(None, help=_WORKERS_HELP),
                scheduler: str | None = typer.Option(None, help=_SCHEDULER_HELP),
                insecure_scheduler: bool = _insecure_option(),
                store: Path | None = typer.Option(None, help=_STORE_HELP),
                force: bool = typer.Option(False, help="judge every setting again"),
                refine: bool = typer.Option(True, help="locate the boundaries between verdicts "
                                            "and shrink a counterexample (--no-refine: the "
                                            "sample only)"),
                figures: bool = typer.Option(True, help="draw a panel per pair of ranged "
                                             "coordinates")):
    """Map where CLAIM holds over its declared domain: judge sampled settings, bisect between
    neighbours of different verdicts to locate the boundary (to 1 % of each range), shrink the
    refuted setting nearest the reference to a minimal counterexample.

    Each setting is a stored task: a map that is interrupted (even killed) resumes when the same
    command is run again. Writes map.json, map.md, map.html and figures/."""
    from .mapping import map_claim, map_summary
    errors = _check_common(seed=seed, workers=workers)
    if not 1 <= points <= MAX_MAP_POINTS:
        errors.append(f"--points {points}; allowed: an integer from 1 to {MAX_MAP_POINTS}")
    cluster = _check_run_options(errors, workers, scheduler, False, (None, None, None),
                                 insecure_scheduler)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in claim_id)
    out = out if out is not None else Path("maps") / safe
    note = f"{out / 'map.json'} is marked incomplete; the same command resumes from the store"
    try:
        claims = _select(None, [claim_id], claims_file)
        with _interrupt_note(note):
            doc = map_claim(claims[0], points=points, seed=seed, profile=profile.value,
                            device=device.value, out=out, workers=workers, scheduler=scheduler,
                            store=store, force=force, figures=figures, refine=refine, show=True,
                            insecure_scheduler=cluster["insecure_scheduler"])
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(map_summary(doc))
    typer.echo(f"wrote {', '.join(str(out / f) for f in doc.get('files', ['map.json']))}")


def _seed_list(seeds: str, errors: list[str]) -> list[int]:
    """The distinct seeds of ``--seeds 0,1,2``; an error appended for anything else."""
    try:
        seed_list = [int(x) for x in seeds.split(",") if x.strip()]
        if not seed_list or min(seed_list) < 0 or len(set(seed_list)) != len(seed_list):
            raise ValueError
    except ValueError:
        errors.append(f"--seeds {seeds!r}; allowed: distinct integers ≥ 0, comma-separated")
        return []
    return seed_list


_MODEL_HELP = ("marion2025 | dohmatob2025 | sagitova2026, a module in theory.models with a MODEL, "
               "PATH.py[:NAME] (a Model, DohmatobModel, MultiHeadModel or reduced model in your "
               "own file; NAME defaults to MODEL) or an installed entry point "
               "(attention_verification.models)")


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


_MAX_SIMPLIFY_OPS = 400
"""The largest expression (SymPy's count_ops) that ``derive`` simplifies (--simplify, --on):
sp.simplify's time grows fast and erratically with the size (the measurements:
benchmarks/cli_limits.md)."""


def _equation_rows(rm, latex: bool, simplify: str | None) -> list[str]:
    """The model's equations (``_equations``) as text, or LaTeX with ``latex``."""
    return [eq.text(latex) for eq in _equations(rm, simplify)]


def _equations(rm, simplify: str | None) -> list:
    """The model's equations; for the multi-head kind also the saddle Hessian (any activation,
    either output convention). ``simplify``: the option that asks to simplify them (None: as
    derived); a ValueError naming it when one is too large to simplify in reasonable time."""
    saddle = hasattr(rm, "saddle_equations")
    eqs = rm.equations(saddle=False) if saddle else rm.equations()
    if simplify:
        _check_simplifiable(eqs, simplify)
        eqs = [_simplified(eq) for eq in eqs]
    return eqs + (rm.saddle_equations() if saddle else [])


_JSON_HELP = ("print one JSON document on stdout instead of text (errors: one line on stderr, "
              "exit 2, as without it): numbers as JSON numbers, the parameters and the state's "
              "names, every expression as 'text', 'latex' and 'srepr' (rebuild it with "
              "sympy.parse_expr(srepr, local_dict=...), or eval(srepr) after from sympy import *, "
              "local_dict holding the classes its 'classes' name as module:name, e.g. OwensT: "
              "theory.special:OwensT)")


def _plain(value):
    """``value`` as JSON can hold it: numbers (NumPy's and SymPy's too) as numbers, a non-finite
    one (JSON has none) as the string 'inf', '-inf' or 'nan'; mappings, sequences and arrays as
    objects and lists; anything else as its text."""
    import numpy as np
    import sympy as sp
    if value is None or isinstance(value, str | bool | np.bool_):
        return value if not isinstance(value, np.bool_) else bool(value)
    if isinstance(value, int | np.integer | sp.Integer):
        return int(value)
    if isinstance(value, float | np.floating | sp.Number):
        x = float(value)
        return x if math.isfinite(x) else str(x)
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def _echo_json(doc: dict) -> None:
    import json
    typer.echo(json.dumps(_plain(doc), indent=1, allow_nan=False))


def _expression(expr) -> dict:
    """A SymPy expression or Matrix as {'text', 'latex', 'srepr', 'classes'}: 'classes' names
    the classes in srepr that ``from sympy import *`` does not give (the suite's OwensT and
    GaussianExpectation, SymPy's ExprCondPair, a user's own) as {name: 'module:qualname'}, for
    parse_expr's local_dict."""
    import sympy as sp

    from theory.printing import latex
    text = sp.srepr(expr)
    return {"text": sp.sstr(expr), "latex": latex(expr), "srepr": text,
            "classes": _srepr_classes(expr, text)}


def _srepr_classes(expr, text: str) -> dict[str, str]:
    import sympy as sp
    found = {}
    for part in (list(expr) if isinstance(expr, sp.MatrixBase) else [expr]):
        for node in (sp.preorder_traversal(part) if isinstance(part, sp.Basic) else []):
            cls = type(node)
            if getattr(sp, cls.__name__, None) is not cls and f"{cls.__name__}(" in text:
                found[cls.__name__] = f"{cls.__module__}:{cls.__qualname__}"
    return dict(sorted(found.items()))


def _equation_json(eq) -> dict:
    """One equation: its name (plain and LaTeX) and its right-hand side as ``_expression``, or
    as text and LaTeX with srepr null where it is stated in words (an expectation)."""
    head = {"name": eq.lhs, "name_latex": eq.lhs_latex}
    if isinstance(eq.rhs, str):
        return {**head, "text": eq.rhs, "latex": eq.latex_rhs(), "srepr": None, "classes": {}}
    return {**head, **_expression(eq.rhs), "latex": eq.latex_rhs()}


def _check_simplifiable(eqs, option: str) -> None:
    import sympy as sp
    sizes = {eq.lhs: sp.count_ops(eq.rhs) for eq in eqs if isinstance(eq.rhs, sp.Basic)}
    big = max(sizes, key=sizes.get, default=None)
    if big is not None and sizes[big] > _MAX_SIMPLIFY_OPS:
        how = ("fix more order parameters" if option.startswith("--on") else
               "restrict with --on first, or drop --simplify")
        raise ValueError(f"{option}: {big} has {sizes[big]} operations to simplify; allowed: "
                         f"≤ {_MAX_SIMPLIFY_OPS} per equation ({how}; larger ones take minutes)")


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
                                         "model's prior")):
    """Print what the engine derives for a model: the reduced risk and its overlap flow
    (marion2025; dohmatob2025: R̄ of Prop. 1 and its flow; a Model of your own), or the token
    weights, the conditional loss φ, the flow on (m, r, b, v) and the saddle Hessian
    (sagitova2026, or a MultiHeadModel of your own). --json: the same as one JSON document
    (command, model, name, params, state_names, time, loss_name, on, simplified, equations)."""
    errors: list[str] = _cache_errors()
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
    doc = {"command": "derive", "model": model, "name": rm.name, "params": rm.params,
           "state_names": list(rm.state_names), "time": rm.time, "loss_name": rm.loss_name,
           "on": fixed, "simplified": simplified, "equations": [_equation_json(e) for e in eqs]}
    if hasattr(rm, "saddle_equations"):
        prior = getattr(rm, "prior", None)
        moments = None if prior is None else _moments("prior", prior.mean(), cov=prior.cov())
        doc["saddle"] = _saddle_answer(rm.model, moments)
    return doc


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
                                        "prior, the prior, hessian_at_prior and eigenvalues")):
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
    from .userfiles import load_activation
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

    from theory.models.sagitova2026 import at_moments
    from theory.multihead import saddle_hessian
    Hm, ms, mu, S = saddle_hessian(model)
    doc = {"coordinates": [str(x) for x in ms], "at": "m = 0, r = 0, b = 0, v = 0",
           "mean_symbols": [str(x) for x in mu],
           "second_moment_symbols": [[str(x) for x in S.row(i)] for i in range(S.rows)],
           "hessian": _expression(Hm), "prior": None, "hessian_at_prior": None,
           "eigenvalues": None}
    if moments is not None:
        Hn = at_moments(Hm, moments["mean"], moments["second_moment"], mu, S)
        doc.update(prior=moments, hessian_at_prior=Hn,
                   eigenvalues=np.linalg.eigvalsh((Hn + Hn.T) / 2))
    return doc


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
    return [Equation(f"saddle Hessian at {at}", r"\left.\frac{\partial^2 L}{\partial m^2}"
                     r"\right|_{m = r = b = 0,\ " + at_tex + "}",
                     sp.Matrix(saddle["hessian_at_prior"])).text(latex),
            Equation(f"saddle Hessian eigenvalues (ascending) at {at}",
                     r"\operatorname{eig}\left.\frac{\partial^2 L}{\partial m^2}\right|_{"
                     + at_tex + "}", eig, eig).text(latex)]


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

    from .userfiles import load_model_object
    try:
        obj, _ = load_model_object(model)
    except (ValueError, TypeError, OSError):
        return False
    return isinstance(obj, MultiHeadModel)


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
                                                    help="name=value (repeatable; defaults for the rest)"),
             json_out: bool = typer.Option(False, "--json", help="print one JSON document on "
                                           "stdout instead of text (errors: one line on stderr, "
                                           "exit 2, as without it): command, model, name, params, "
                                           "state_names, time, the state, the loss {name, value, "
                                           "se (0: not estimated)} and the rhs {state name: "
                                           "d name/d time}, numbers as JSON numbers")):
    """Evaluate the loss (± its standard error where estimated) and the flow's right-hand side
    at one state, e.g. evaluate marion2025 --param d=20 --state kappa=0.5 --state nu=0.4;
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
    if errors:
        _fail_all(errors)
    y, loss, se, rhs = _evaluation(rm, params, values)
    if json_out:
        _echo_json({"command": "evaluate", "model": model, "name": rm.name, "params": rm.params,
                    "state_names": list(rm.state_names), "time": rm.time,
                    "state": dict(zip(rm.state_names, y)),
                    "loss": {"name": rm.loss_name, "value": loss, "se": se},
                    "rhs": {name: r + 0.0 for name, r in zip(rm.state_names, rhs)}})
        return
    for line in _evaluated(rm, loss, se, rhs):
        typer.echo(line)


def _evaluated(rm, loss: float, se: float, rhs: list[float]) -> list[str]:
    """``_evaluation``'s loss and right-hand side as lines."""
    return ([f"{rm.loss_name} = {loss:.12g}" + (f" ± {se:.3g}" if se > 0 else "")]
            + [f"d{name}/d{rm.time} = {r + 0.0:.12g}"                 # + 0.0: no "-0"
               for name, r in zip(rm.state_names, rhs)])


def _evaluation(rm, params: dict, values: dict) -> tuple:
    """(the packed state, the loss, its standard error, the flow's right-hand side) at
    ``values``; one error line naming the values when the loss or the right-hand side is not
    finite (parameters in range whose formulas overflow, e.g. --param L=1e308; no numpy
    overflow warning besides it)."""
    import numpy as np
    given = " ".join([*(f"--param {k}={v}" for k, v in params.items()),
                      *(f"--state {k}={v}" for k, v in values.items())]) or "the defaults"
    allowed = "allowed: values at which the model's formulas stay finite (less extreme ones)"
    try:
        with np.errstate(all="ignore"):      # what is not finite is reported below, one line
            y = rm.check_state(rm.pack(values, base=rm.default_state()))
            loss, se = rm.loss(y)
            rhs = [float(r) for r in rm.rhs(y)]
    except ValueError as exc:
        _fail(str(exc))
    except (FloatingPointError, OverflowError, ZeroDivisionError) as exc:
        _fail(f"{type(exc).__name__}: {exc} at {given}; {allowed}")
    bad = [f"d{n}/d{rm.time}" for n, r in zip(rm.state_names, rhs) if not math.isfinite(r)]
    bad = ([rm.loss_name] if not math.isfinite(loss) else []) + bad
    if bad:
        _fail(f"{', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''} not finite at {given}; {allowed}")
    return [float(v) + 0.0 for v in y], float(loss), float(se), rhs


def main():
    app()
