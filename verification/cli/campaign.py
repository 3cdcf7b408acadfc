"""The campaign commands: list, run, sweep, calibrate, map, guard, store; run, sweep, calibrate
and map share their engine options (``EngineOptions``, declared once)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..domain_calibration import MAX_SETTINGS
from ..replication import REPLICATES
from .common import (_CLAIMS_HELP, Device, EngineOptions, Profile, _check_common, _fail, _fail_all,
               _interrupt_note, _select, app, guard_app, store_app, with_engine_options)


@app.command("list")
def list_claims(paper: str | None = typer.Option(None, help="only this paper's claims"),
                claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP)):
    """List claim ids, the paper's labels, where each claim comes from (built-in, a plugin, a
    file) and the statements."""
    from ..catalogue import source_of
    try:
        claims = _select(paper, None, claims_file)
    except ValueError as exc:
        _fail(str(exc))
    for c in claims:
        typer.echo(f"{c.id:48s} {c.label:14s} [{source_of(c)}] {c.statement}")


@app.command()
@with_engine_options
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
        force: bool = typer.Option(False, help="recompute every claim (the store is rewritten)"),
        rejudge: bool = typer.Option(False, "--rejudge", help="judge every claim again from its "
                                     "stored simulations (computing only those not stored)"),
        wide: bool = typer.Option(False, "--wide", help="print the verdict table with each claim's "
                                  "label and summary (always in report.md and report.html)"),
        replicate: int = typer.Option(REPLICATES, help="judge each refutation that depends on "
                                      "its seed again at this many independent seeds; it stays "
                                      "refuted only if every one refutes (0: single-seed "
                                      "refutations)"),
        engine: EngineOptions = EngineOptions()):
    """Run claims, print the verdict table (within the terminal's width; --wide: with labels and
    summaries) and write the report.

    report.json is rewritten after every claim that ran (those reused from the store every few
    seconds; "complete": false until the end); a run that is
    interrupted resumes from the result store when started again with the same options."""
    from ..runner import run as run_claims
    options = engine.campaign(_check_common(seed=seed, baseline=baseline), profile=profile.value,
                              device=device.value, force=force, rejudge=rejudge,
                              replicate=replicate)
    note = (f"the report in {out} is marked incomplete (report.json: \"complete\": false); the "
            "same command resumes from the result store")
    try:
        claims = _select(paper, claim, claims_file)
        with _interrupt_note(note):
            report = run_claims(claims, options, seed=seed, out=out, figures=figures,
                                wide=wide)
    except ValueError as exc:
        _fail(str(exc))
    from ..report import report_lines
    typer.echo("\n".join(report_lines(out, report, len(claims))))
    for path in report.get("store_damaged", []):
        typer.secho(f"damaged store entry recomputed: {path}", fg="yellow", err=True)
    code = 0
    if baseline is not None:
        code = _compare(baseline, report)
    if fail_on_refuted and any(c["verdict"] in ("refuted", "error") for c in report["claims"]):
        code = 1
    raise typer.Exit(code)



_REPORT_ALLOWED = ("allowed: a report.json written by `run` (or its folder), or a baseline "
                   "written by `guard save`")


def _read_report(path: Path, what: str, errors: list[str]) -> dict | None:
    """The report (or baseline) at ``path``; None and an error naming ``what`` when it cannot
    be read or is not one (a list of claims, each with an id and a verdict)."""
    from ..guard import load_report
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
    from ..guard import compare
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
    from ..guard import save_baseline
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
@with_engine_options
def calibrate(paper: str | None = typer.Option(None, help="only this paper's claims"),
              claim: list[str] | None = typer.Option(None, "--claim", help="claim id (repeatable)"),
              claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP),
              seeds: int = typer.Option(10, min=1, max=_MAX_CALIBRATION_SEEDS,
                                        help="runs per claim under the true model and under "
                                        "each mutation (seeds 1..K; K ≤ 1000)"),
              profile: Profile = typer.Option(Profile.quick, help="quick or full"),
              device: Device = typer.Option(Device.cpu, help="torch device for simulations"),
              out: Path | None = typer.Option(None, help="folder for calibration.json "
                                              "and calibration.md [default: calibration; with "
                                              "--rejudge: the file's own folder]"),
              force: bool = typer.Option(False, help="recompute every run"),
              domain: int | None = typer.Option(
                  None, "--domain", min=1, max=MAX_SETTINGS, help="instead of the reference: judge "
                  "each claim at this many settings of its domain (≤ 1024; its declared "
                  "transition settings first, then Sobol points) × --seeds seeds, and write "
                  "domain.json (false refutations: settings refuted at some seeds and not at "
                  "others)"),
              merge: list[Path] | None = typer.Option(
                  None, "--merge", help="instead of running: combine these calibration.json "
                  "files (parts of one calibration; repeatable, later ones win per claim) into "
                  "OUT"),
              rejudge: Path | None = typer.Option(
                  None, "--rejudge", help="instead of running: bring the stale records of this "
                  "calibration file (e.g. calibration/quick.json) up to date from the stored "
                  "simulations only, rewrite it in place (or, with --out elsewhere than its "
                  "folder, write the re-judged copy there), and list the records that still need "
                  "simulating with their estimated time"),
              engine: EngineOptions = EngineOptions()):
    """Measure each claim's record over K fresh seeds: false refutations and pulls
    ((estimate − claim)/se) under the true model; each family's power with its claimed values
    moved by 0.5× and 1× its own resolution (flagged when the resolution is misstated); a sign
    flip; and every mutation the claim declares, caught or not, with its size in resolutions.
    Perturbed runs judge the true runs' stored simulations. Writes calibration.json and .md
    after every run; runs on the same engine and store as `run`, so an interrupted
    calibration resumes."""

    from ..calibrate import calibrate as run_calibration
    from ..records import summary_rows
    errors = []
    if merge and (paper or claim or claims_file):
        errors.append("--merge combines finished files; it takes no --paper/--claim/--claims")
    if merge and rejudge:
        errors.append("--merge and --rejudge are two different jobs; give one")
    if domain is not None and (merge or rejudge):
        errors.append("--domain runs a calibration over the domain; it takes no --merge or "
                      "--rejudge")
    options = engine.campaign(errors, profile=profile.value, device=device.value, force=force)
    if domain is not None:
        _calibrate_domain(paper, claim, claims_file, domain, seeds, options,
                          out or Path("calibration"))
        return
    if merge:
        _merge_calibrations(merge, out or Path("calibration"))
        return
    if rejudge:
        _rejudge(rejudge, paper, claim, claims_file, options, out or rejudge.parent)
        return
    out = out or Path("calibration")
    note = (f"{out / 'calibration.json'} holds the runs finished so far; the same command "
            "resumes from the result store")
    try:
        claims = _select(paper, claim, claims_file)
        with _interrupt_note(note):
            result = run_calibration(claims, seeds, options, out=out,
                                     progress=lambda msg: typer.echo(msg, err=True))
    except ValueError as exc:
        _fail(str(exc))
    typer.echo("\n".join(summary_rows(result)))
    typer.echo(f"calibration: {out / 'calibration.json'} ({result['seconds']:.0f} s)")


def _calibrate_domain(paper, claim, claims_file, settings: int, seeds: int, options,
                      out: Path) -> None:
    from ..domain_calibration import calibrate_domain
    try:
        claims = _select(paper, claim, claims_file)
        with _interrupt_note(f"{out / 'domain.json'} holds the claims finished so far; the same "
                             "command resumes from the result store"):
            result = calibrate_domain(claims, settings, seeds, options, out=out,
                                      progress=lambda msg: typer.echo(msg, err=True))
    except ValueError as exc:
        _fail(str(exc))
    for rec in result["claims"]:
        typer.echo(f"{rec['claim']}: {rec['runs']} runs, {rec['false_refutations']} false "
                   f"refutations, consistent refutations at {len(rec['consistent_refutations'])} "
                   f"of {rec['coverage']['settings']} settings")
    typer.echo(f"domain calibration: {out / 'domain.json'} ({result['seconds']:.0f} s)")


def _rejudge(path: Path, paper, claim, claims_file, options, out: Path) -> None:
    """--rejudge FILE: rewritten in place when --out is FILE's folder (the default for
    calibration/quick.json), else the re-judged copy goes to --out."""
    from ..calibrate import rejudge
    elsewhere = out.resolve() != path.resolve().parent
    try:
        chosen = _select(paper, claim, claims_file) if (paper or claim or claims_file) else None
        with _interrupt_note(f"{path} is unchanged; the same command resumes from the store"):
            done = rejudge(path, chosen, options, progress=lambda msg: typer.echo(msg, err=True),
                           out=out if elsewhere else None)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"{done['file']}: {len(done['rejudged'])} records re-judged from stored simulations "
               f"({done['seconds']:.0f} s), {len(done['current'])} already current")
    for row in done["needs_simulating"]:
        typer.echo(f"  {row['id']}: needs simulating, about {row['estimated_seconds'] / 60:.0f} "
                   f"core-minutes ({row['missing']})")
    if done["needs_simulating"]:
        typer.echo("simulate them with: calibrate --claim ID ... --seeds K --out DIR, then "
                   f"calibrate --merge {path} --merge DIR/calibration.json --out MERGED, whose "
                   f"calibration.json and .md replace {path} and its .md")


def _merge_calibrations(parts: list[Path], out: Path) -> None:
    from ..calibrate import merge_calibrations, write_calibration
    from ..store import check_folder
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

    from ..store import STORE_ENV, ResultStore
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
    from ..storeops import usage
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
    from ..storeops import prune
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
    from ..storeops import export_store
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

    from ..store import STORE_ENV, check_folder
    from ..storeops import import_store
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
    from ..store import ResultStore
    return ResultStore(root)


@app.command()
@with_engine_options
def sweep(paper: str | None = typer.Option(None, help="only this paper's claims"),
          claim: list[str] | None = typer.Option(None, "--claim", help="claim id (repeatable)"),
          claims_file: list[Path] | None = typer.Option(None, "--claims", help=_CLAIMS_HELP),
          seeds: str = typer.Option("0,1,2", help="run seeds, comma-separated (e.g. 0,1,2)"),
          profile: Profile = typer.Option(Profile.quick, help="quick or full"),
          device: Device = typer.Option(Device.auto, help="torch device for simulations"),
          out: Path = typer.Option(Path("sweep"), help="folder for sweep.json and sweep.md"),
          force: bool = typer.Option(False, help="recompute every run"),
          engine: EngineOptions = EngineOptions()):
    """Run claims at several seeds on one engine and store, and tabulate their verdicts side by
    side: a claim whose verdict moves with the seed is flagged (with its calibration record,
    which says whether that is within its α)."""
    from ..sweep import sweep as run_sweep
    from ..sweep import table_rows
    errors: list[str] = []
    seed_list = _seed_list(seeds, errors)
    options = engine.campaign(errors, profile=profile.value, device=device.value, force=force)
    note = (f"{out / 'sweep.json'} holds the runs finished so far (\"complete\": false); the "
            "same command resumes from the result store")
    try:
        claims = _select(paper, claim, claims_file)
        with _interrupt_note(note):
            result = run_sweep(claims, seed_list, options, out=out)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo("\n".join(table_rows(result)))
    moved = [c["id"] for c in result["claims"] if not c["agree"]]
    typer.echo(f"sweep: {out / 'sweep.json'}; {len(moved)} claim(s) change verdict with the seed")


MAX_MAP_POINTS = 100_000


@app.command("map")
@with_engine_options
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
                force: bool = typer.Option(False, help="judge every setting again"),
                refine: bool = typer.Option(True, help="locate the boundaries between verdicts "
                                            "and shrink a counterexample (--no-refine: the "
                                            "sample only)"),
                figures: bool = typer.Option(True, help="draw a panel per pair of ranged "
                                             "coordinates"),
                escalate: bool = typer.Option(False, help="judge every inconclusive setting of "
                                              "the sample, the bisection and the shrink again "
                                              "at the full profile, whose verdict counts (more "
                                              "draws and "
                                              "larger dimensions where the quick profile could "
                                              "not decide, which is near the boundaries; "
                                              "with --profile quick)"),
                engine: EngineOptions = EngineOptions()):
    """Map where CLAIM holds over its declared domain: judge sampled settings, bisect between
    neighbours of different verdicts to locate the boundary (to 1 % of each range), shrink the
    refuted setting nearest the reference to a minimal counterexample.

    Each setting is a stored task: a map that is interrupted (even killed) resumes when the same
    command is run again. Writes map.json, map.md, map.html and figures/."""
    from ..mapping import map_claim, map_summary
    errors = _check_common(seed=seed)
    if not 1 <= points <= MAX_MAP_POINTS:
        errors.append(f"--points {points}; allowed: an integer from 1 to {MAX_MAP_POINTS}")
    if escalate and profile != Profile.quick:
        errors.append(f"--escalate with --profile {profile.value}; allowed: --profile quick "
                      "(full is the largest profile)")
    options = engine.campaign(errors, profile=profile.value, device=device.value, force=force)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in claim_id)
    out = out if out is not None else Path("maps") / safe
    note = f"{out / 'map.json'} is marked incomplete; the same command resumes from the store"
    try:
        claims = _select(None, [claim_id], claims_file)
        with _interrupt_note(note):
            doc = map_claim(claims[0], points, seed, options, out=out, figures=figures,
                            refine=refine, show=True, escalate=escalate)
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


