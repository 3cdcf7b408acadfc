"""What the commands share: the application and its error handling (every error one line and an
exit code), the options of a campaign (``EngineOptions``, declared once), the choice of
claims."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import sys
import traceback
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from ..campaign import CampaignOptions

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
    from ..userfiles import UserFileError
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
    from ..userfiles import UserFileError, user_frame
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



def _select(paper: str | None, ids: list[str] | None, files: list[Path] | None):
    """The claims a command runs: those of ``--claims`` files (only them, unless --paper or
    --claim widen the choice), else all, restricted by --paper and --claim."""
    from ..catalogue import claims_for
    from ..userfiles import load_claims_file
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


@dataclasses.dataclass(frozen=True)
class EngineOptions:
    """Where a campaign command's tasks run and where its results are kept: the options run,
    sweep, calibrate and map share (declared once, ``with_engine_options``)."""

    workers: int | None = None
    scheduler: str | None = None
    insecure_scheduler: bool = False
    dashboard: bool = False
    tls_ca_file: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    store: Path | None = None

    def campaign(self, errors: list[str], **fields) -> CampaignOptions:
        """The campaign's options (``verification.campaign.CampaignOptions``: these, and the
        command's own ``fields``: profile, device, force, rejudge) once every error, the
        command's own (``errors``) and these options', is known: any error is one line each
        and exit 2."""
        from ..campaign import CampaignOptions
        from ..engine import cluster_option_errors
        tls = {field: str(path) for field, path in
               zip(("ca_file", "cert", "key"), (self.tls_ca_file, self.tls_cert, self.tls_key))
               if path is not None} or None
        errors = (errors + _check_common(workers=self.workers)
                  + cluster_option_errors(self.workers, self.scheduler, self.dashboard, tls,
                                          self.insecure_scheduler))
        if errors:
            _fail_all(errors)
        return CampaignOptions(workers=self.workers, scheduler=self.scheduler, store=self.store,
                               dashboard=bool(self.dashboard), tls=tls,
                               insecure_scheduler=bool(self.insecure_scheduler), **fields)


def _engine_parameters() -> list[inspect.Parameter]:
    option = functools.partial(inspect.Parameter, kind=inspect.Parameter.KEYWORD_ONLY)
    return [
        option("workers", default=typer.Option(None, help=_WORKERS_HELP), annotation=int | None),
        option("scheduler", default=typer.Option(None, help=_SCHEDULER_HELP),
               annotation=str | None),
        option("insecure_scheduler", default=_insecure_option(), annotation=bool),
        option("dashboard", default=_dashboard_option(), annotation=bool),
        option("tls_ca_file", default=_tls_option("--tls-ca-file", "the certificate authority"),
               annotation=Path | None),
        option("tls_cert", default=_tls_option("--tls-cert", "this client's certificate"),
               annotation=Path | None),
        option("tls_key", default=_tls_option("--tls-key", "this client's private key"),
               annotation=Path | None),
        option("store", default=typer.Option(None, help=_STORE_HELP), annotation=Path | None)]


def with_engine_options(command):
    """``command(..., engine: EngineOptions)`` as a command whose options are its own followed by
    the shared engine options (``EngineOptions``' fields), declared once here."""
    own = [p for p in inspect.signature(command).parameters.values() if p.name != "engine"]
    shared = _engine_parameters()

    @functools.wraps(command)
    def wrapper(**given):
        engine = EngineOptions(**{p.name: given.pop(p.name) for p in shared})
        return command(engine=engine, **given)

    wrapper.__signature__ = inspect.Signature(own + shared)
    wrapper.__annotations__ = {k: v for k, v in command.__annotations__.items() if k != "engine"}
    return wrapper



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
