"""Fuzz of the command line: every command and its options given hostile values (empty, 'nan',
'inf', '1e400', 10**30, negative numbers, non-ASCII and bidi text, '=' and ',' in odd places,
paths that are a file, a folder, missing or inside a file). Whatever it is given, the CLI exits
0, 1 or 2, raises nothing but SystemExit, prints no traceback, writes each error as one line
(``error: ...``, or ``FILE[:LINE]: ErrorType: message`` for a file of the user's that fails
on import) and answers within seconds (LIMIT_S). Work is kept cheap: run, sweep and calibrate
run a one-claim file in this process (``--workers 0``); heads gets the smallest sizes or hostile
ones; derive and evaluate get hostile specs, or a built-in model with values that mostly fail
before any work (what passes derives or evaluates in about a second); a few explicit examples
do real work on the built-in models. The regression tests at the end pin what the fuzz found
(`pytest --hypothesis-show-statistics` shows the exit codes each fuzz test saw)."""

import contextlib
import itertools
import json
import re
import textwrap
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
import typer
from typer.testing import CliRunner

from verification.cli import app

runner = CliRunner()

LIMIT_S = 20.0
"""Seconds any one invocation may take (the slowest here, a built-in model's first derivation
in a fresh process, takes about 5 s on 2 shared cores)."""

EXAMPLES = max(settings.default.max_examples, 40)
"""Examples per fuzz test: the profile's, at least 40 (most examples fail validation in
milliseconds; a whole test takes a few seconds)."""

PAPER = "fuzz2099"
TINY_CLAIMS = f'''
from verification.registry import Outcome, claim


@claim("{PAPER}:instant", "Thm. 0", "Returns at once.", statistical=False)
def instant(ctx):
    return Outcome("confirmed", "nothing to refute")


@claim("{PAPER}:half", "Thm. 1", "x ≤ 1/2 on [0, 1].", statistical=False,
       domain={{"x": (0.0, 1.0)}}, points=[{{"x": 0.25}}])
def half(ctx, x):
    return Outcome("confirmed" if x <= 0.5 else "refuted", f"x = {{x}}")
'''

HOSTILE = ["", " ", "nan", "NaN", "inf", "-inf", "+inf", "1e400", "-1e400", "1e-400", str(10**30),
           str(-10**30), "-1", "-0", "0", "-2.5", "0x10", "1_000", "θ", "λ=0.7", "\u202e", "\u202egnp.",
           "😀", "=", ",", "==", ",,", "=1", "1=", "a=", "=a", "a=1,b=2", "a==b", "a=b=c", ",a=1,",
           "[0,0]=1", "m[0,0]", "m[0,0]=", "x:y", ":", "a b", "--", "-", "*", "?", "%s", "{}",
           "'", '"', "\\", "\t", "a\nb", "x" * 300]
"""Hostile values for any option: numbers out of range or not finite, text that is no number,
separators where they do not belong."""

NUMBERS = ["", "nan", "inf", "-inf", "1e400", "-1e400", str(10**30), str(-10**30), "-1", "-0",
           "0", "0.5", "-2.5", "1e-400", "θ", "1,2", "=", "1=2", "0x10", "1_0", "\u202e1"]
"""Hostile values where a number is expected."""

PATHS = ["<file>", "<folder>", "<missing>", "<inside-file>", "<missing-parent>", "<py-folder>",
         "<empty.py>", "<null-bytes.py>", "<syntax.py>", "<raises.py>", "<tiny.py>", "", ".",
         "θ/😀", "\u202e.py", "a=b,c.py", "x.py:y", "with space.py",
         "<exits.py>", "<os-exit.py>", "<interrupts.py>", "<loops.py>", "<huge-link.py>",
         "<deep.json>", "<nan.json>", "<link-to-file>"]
"""Path tokens (``Workspace.path``): a file, a folder, a missing path, a path inside a file,
Python files that are empty, binary, broken or that raise, hostile files (``HOSTILE_FILES``: one
that ends the process, loops, holds a huge link; JSON nested too deep or holding NaN), a link,
and hostile relative names (the command runs in a folder of its own, so a relative path lands
there)."""

HOSTILE_FILES = {
    "exits.py": "import sys\nsys.exit(0)\n",
    "os-exit.py": "import os\nos._exit(0)\n",
    "interrupts.py": "raise KeyboardInterrupt\n",
    "loops.py": "while True:\n    pass\n",             # stopped by ATTNV_USER_BUDGET (2 s here)
    "huge-link.py": "LINK = lambda t: t**100000\nMODEL = None\n",
    "deep.json": "[" * 3000 + "]" * 3000,
    "nan.json": '{"claims": [{"id": "a", "verdict": "confirmed", "seconds": NaN}], "seeds": 1}',
}
"""What the author of a hostile file hands the suite (the second hostile review's cases)."""

text = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=12)
"""Arbitrary short text (a shell cannot pass NUL bytes, nor lone surrogates as UTF-8)."""
value = st.one_of(st.sampled_from(HOSTILE), text)
number = st.one_of(st.sampled_from(NUMBERS), st.integers(-10**40, 10**40).map(str),
                   st.floats().map(repr))
path = st.one_of(st.sampled_from(PATHS), st.sampled_from(PATHS[:5]).map(lambda t: t + "/a\nb"),
                 text)
"""A path token, a path with a line break in it, or any text (a relative path)."""


class Workspace:
    """A folder of hostile paths for one module (hypothesis examples share it): ``path(token)``
    resolves a ``PATHS`` token; ``<missing>`` is a new name every time."""

    def __init__(self, root: Path):
        self.root, self.cwd = root, root / "cwd"
        self._n = itertools.count()
        self.cwd.mkdir()
        (root / "folder").mkdir()
        (root / "folder.py").mkdir()
        (root / "file.txt").write_text("not python, not json\n")
        (root / "empty.py").write_text("")
        (root / "null.py").write_bytes(b"x = 1\x00\n")
        (root / "syntax.py").write_text("def f(:\n    pass\n")
        (root / "raises.py").write_text("raise RuntimeError('boom')\n")
        for name, content in HOSTILE_FILES.items():
            (root / name).write_text(content)
        (root / "link-to-file").symlink_to(root / "file.txt")
        self.scratch = root / "scratch.txt"
        self.scratch.write_text("a file to overwrite\n")
        self.tiny = self.new_tiny()
        self.report = root / "report.json"            # never written by a command here
        self.report.write_text(json.dumps({"complete": True, "claims": [
            {"id": "a:b", "verdict": "confirmed", "summary": ""}]}))
        self.calibration = self._calibration()
        self.export = root / "store-export.tar"
        res = _invoke(["store", "export", str(self.export), "--store", str(root / "cal" / "store")],
                      self)
        assert res.exit_code == 0, res.output

    def _calibration(self) -> Path:
        res = _invoke(["calibrate", "--claims", str(self.tiny), "--workers", "0", "--seeds", "1",
                       "--out", str(self.root / "cal")], self)
        assert res.exit_code == 0, res.output
        return self.root / "cal" / "calibration.json"

    def new_tiny(self) -> Path:
        """A new one-claim file for an example (a file is imported once per process, and the
        claims an example registers are forgotten after it)."""
        self.tiny = self.fresh("tiny")
        self.tiny = self.tiny.with_name(self.tiny.name + "_claims.py")
        self.tiny.write_text(TINY_CLAIMS)
        return self.tiny

    def fresh(self, stem: str = "missing") -> Path:
        return self.root / f"{stem}{next(self._n)}"

    def path(self, token: str) -> str:
        files = {"<file>": "file.txt", "<folder>": "folder", "<py-folder>": "folder.py",
                 "<empty.py>": "empty.py", "<null-bytes.py>": "null.py", "<syntax.py>": "syntax.py",
                 "<raises.py>": "raises.py", **{f"<{name}>": name for name in HOSTILE_FILES},
                 "<link-to-file>": "link-to-file"}
        if token.endswith("/a\nb"):
            return self.path(token[:-4]) + "/a\nb"
        if token == "<tiny.py>":
            return str(self.tiny)
        if token in files:
            return str(self.root / files[token])
        if token == "<missing>":
            return str(self.fresh())
        if token == "<inside-file>":
            return str(self.root / "file.txt" / "sub")
        if token == "<missing-parent>":
            return str(self.fresh() / "deeper" / "x.json")
        return token


@contextlib.contextmanager
def _claims_restored():
    """Claims a command registers (a --claims file, a model file that declares claims) are
    forgotten after it, as conftest's fixture does after each test: hypothesis runs many
    examples in one test (the built-in ones are loaded by then: conftest's fixture)."""
    from verification.registry import REGISTRY
    before = dict(REGISTRY)
    try:
        yield
    finally:
        REGISTRY.clear()
        REGISTRY.update(before)


def _invoke(args: list[str], ws: Workspace):
    with contextlib.chdir(ws.cwd), _claims_restored():
        return runner.invoke(app, args, env={"ATTNV_USER_BUDGET": "2"})


ESCAPED = str.maketrans({c: repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"})
"""A line break in a value the user gave is written escaped in its error line (``\\n``)."""


def _is_error_line(line: str, args: list[str]) -> bool:
    """``error: ...``, or a user's file that failed on import: ``FILE[:LINE]: ...`` with FILE
    as given (an argument, or the PATH of a NAME=PATH.py or PATH.py:NAME argument)."""
    if line.startswith("error: "):
        return True
    files = set()
    for a in args:
        for part in (a, a.split("=", 1)[-1]):
            files |= {part, part.rsplit(":", 1)[0]}
    return any(f and line.startswith(f.translate(ESCAPED) + ":") for f in files)


PROGRESS = (f"{PAPER}:instant: seed ", f"{PAPER}:half: seed ", "damaged store entry recomputed: ")
"""Lines on stderr that are not errors: calibrate's progress, a store entry recomputed."""


def check(args: list[str], ws: Workspace, limit: float = LIMIT_S):
    """Invoke the CLI; assert the promises every invocation keeps; return the result."""
    start = time.monotonic()
    res = _invoke(args, ws)
    took = time.monotonic() - start
    shown = f"{args!r} -> exit {res.exit_code} in {took:.1f} s:\n{res.output}"
    assert took < limit, shown
    assert res.exit_code in (0, 1, 2), shown
    assert res.exception is None or isinstance(res.exception, SystemExit), (shown, res.exception)
    assert "Traceback" not in res.output, shown
    err = [x for x in res.stderr.splitlines() if x.strip() and not x.startswith(PROGRESS)]
    errors = [x for x in err if _is_error_line(x, args)]
    if res.exit_code == 0:
        assert not errors, shown
    else:
        assert errors == err, shown                # every line on stderr an error, one each
        assert errors or "difference(s) from baseline" in res.stdout, shown
    if res.exit_code == 2:
        assert errors, shown
    return res


def fuzz(args: list[str], ws: Workspace):
    """``check`` in a hypothesis example; the exit codes seen are in its statistics
    (``pytest --hypothesis-show-statistics``)."""
    res = check(args, ws)
    event(f"exit {res.exit_code}")
    return res


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    from verification.catalogue import load_all
    load_all()          # before the first command: what it registers is forgotten after it
    return Workspace(tmp_path_factory.mktemp("cli_fuzz"))


def _options(draw, choices: dict) -> list[str]:
    """A few of ``choices`` ({flag: strategy, or None for a bare flag}), each with a value."""
    flags = draw(st.lists(st.sampled_from(sorted(choices)), max_size=4, unique=True))
    out = []
    for flag in flags:
        out.append(flag)
        if choices[flag] is not None:
            out.append(draw(choices[flag]))
    return out


def _resolve(args: list[str], ws: Workspace) -> list[str]:
    return [ws.path(a) for a in args]


# --- list, run, sweep, calibrate: a one-claim file, in this process ----------------------------
CLAIM_IDS = st.one_of(st.sampled_from([f"{PAPER}:instant", PAPER]), value)
PAPERS = st.one_of(st.just(PAPER), value)
SCHEDULERS = value.filter(lambda s: "://" not in s)      # an address would be dialled
RUN_LIKE = {
    "--paper": PAPERS, "--claim": CLAIM_IDS, "--claims": path, "--profile":
    st.one_of(st.sampled_from(["quick", "full"]), value), "--device":
    st.one_of(st.sampled_from(["auto", "cpu", "cuda"]), value), "--workers":
    st.one_of(st.sampled_from(["-1", str(-10**30), "0"]), number.filter(lambda s: s.startswith("-"))),
    "--scheduler": SCHEDULERS, "--dashboard": None, "--tls-ca-file": path, "--tls-cert": path,
    "--tls-key": path, "--store": path, "--force": None, "--out": path}


def _run_like(command: str, draw, ws: Workspace, extra: dict) -> list[str]:
    base = [command, "--claims", str(ws.tiny), "--workers", "0", "--out", str(ws.fresh("out"))]
    return _resolve(base + _options(draw, {**RUN_LIKE, **extra}), ws)


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_list(ws, data):
    ws.new_tiny()
    args = ["list"] + _options(data.draw, {"--paper": PAPERS, "--claims": path})
    fuzz(_resolve(args, ws), ws)


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_run(ws, data):
    ws.new_tiny()
    extra = {"--seed": number, "--baseline": st.one_of(path, st.just("<baseline>")),
             "--fail-on-refuted": None, "--figures": None, "--no-figures": None}
    args = _run_like("run", data.draw, ws, extra)
    args = [args[0], "--no-figures"] + [str(ws.report) if a == "<baseline>" else a for a in args[1:]]
    fuzz(args, ws)


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_sweep(ws, data):
    ws.new_tiny()
    seeds = st.one_of(number, value, st.lists(st.sampled_from(["0", "1", "-1", " ", "", "1e400",
                                                               "θ", str(10**30)]),
                                              max_size=3).map(",".join))
    fuzz(_run_like("sweep", data.draw, ws, {"--seeds": seeds}), ws)


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_calibrate(ws, data):
    ws.new_tiny()
    seeds = st.one_of(st.sampled_from(["1", "2"]), number.filter(lambda s: not s.isdigit() or
                                                                 int(s) == 0 or int(s) > 1000))
    merge = st.one_of(path, st.just("<calibration>"))
    rejudge = st.one_of(path, st.just("<calibration-copy>"))
    args = _run_like("calibrate", data.draw, ws, {"--seeds": seeds, "--merge": merge,
                                                  "--rejudge": rejudge})
    if ("--merge" in args or "--rejudge" in args) and data.draw(st.booleans()):
        args = args[:1] + args[3:]                 # they take no --claims: drop the file

    def calibration(token: str) -> str:
        if token == "<calibration-copy>":          # --rejudge may rewrite the file it is given
            copy = ws.fresh("calibration")
            copy.write_text(ws.calibration.read_text())
            return str(copy)
        return str(ws.calibration) if token == "<calibration>" else token
    fuzz([calibration(a) for a in args], ws)


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_map(ws, data):
    ws.new_tiny()
    points = st.one_of(st.sampled_from(["0", "-1", "1", "3", "nan", "1e400", str(10**30),
                                        "100001"]), value)
    opts = {k: v for k, v in RUN_LIKE.items()
            if k not in ("--paper", "--claim", "--dashboard", "--tls-ca-file", "--tls-cert",
                         "--tls-key")}
    extra = {"--points": points, "--seed": number, "--refine": None, "--no-refine": None,
             "--figures": None, "--no-figures": None}
    claim = data.draw(st.one_of(st.sampled_from([f"{PAPER}:half", f"{PAPER}:instant"]), value))
    base = ["map", claim, "--claims", str(ws.tiny), "--workers", "0", "--points", "3",
            "--no-figures", "--out", str(ws.fresh("out"))]
    fuzz(_resolve(base + _options(data.draw, {**opts, **extra}), ws), ws)


# --- store --------------------------------------------------------------------------------------
@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_store(ws, data):
    """The store commands on the workspace's store (a calibration's), a hostile path, or an
    export of it; a second store to import into."""
    what = data.draw(st.sampled_from(["size", "prune", "export", "import"]))
    args = ["store", what]
    if what == "import":
        args.append(data.draw(st.one_of(path, st.just("<export>"), st.just("<new>"))))
    elif what == "export":                 # never over one of the workspace's files
        args.append(data.draw(st.one_of(st.sampled_from(["<new>", "<folder>", "<inside-file>",
                                                         "<missing-parent>", ""]), text)))
    args += _options(data.draw, {"--store": st.one_of(path, st.just("<store>"), st.just("<new>")),
                                 "--top": number, "--dry-run": None, "--claim": value,
                                 "--simulations-only": None})
    tokens = {"<store>": str(ws.root / "cal" / "store"), "<export>": str(ws.export),
              "<new>": str(ws.fresh("store"))}
    fuzz([tokens.get(a) or ws.path(a) for a in args], ws)


# --- guard --------------------------------------------------------------------------------------
@settings(max_examples=EXAMPLES)
@given(st.sampled_from(["save", "compare"]), st.one_of(path, st.just("<report>"), value),
       st.one_of(path, st.just("<report>"), st.just("<new>"), value))
def test_fuzz_guard(ws, what, first, second):
    ws.new_tiny()

    def resolve(token, written=False):
        if token == "<report>" and not written:
            return str(ws.report)
        if token == "<new>":
            return f"{ws.fresh('baseline')}.json"
        if written and token in ("<report>", "<file>", "<empty.py>", "<null-bytes.py>",
                                 "<syntax.py>", "<raises.py>", "<tiny.py>"):
            return str(ws.scratch)                 # a file that `guard save` may overwrite
        return ws.path(token)
    fuzz(["guard", what, resolve(first), resolve(second, written=what == "save")], ws)


# --- derive, heads, evaluate: cheap sizes or values that fail before any work ----------------
MODELS = st.one_of(path, value, st.sampled_from(["marion2025", "dohmatob2025", "theory.models",
                                                 "marion2025:MODEL", "sagitova2026.py"]))
OUT_OF_RANGE = ["nan", "inf", "-inf", "1e400", str(10**30), "-2", "2", "θ", "", "1,2", "=1"]
ON = st.one_of(value, st.builds("{}={}".format, st.sampled_from(["theta", "eta", "rho", "kappa",
                                                                 "nu", "zeta", "mu", "θ", ""]),
                                st.sampled_from(OUT_OF_RANGE)))
"""--on values that fail before a derivation: hostile text, order parameters out of [-1, 1]."""


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_derive(ws, data):
    ws.new_tiny()
    model = data.draw(MODELS)
    # marion2025 and dohmatob2025 derive in about a second; --on is drawn so that it fails
    args = ["derive", model] + _options(data.draw, {"--latex": None, "--simplify": None})
    if model in ("marion2025", "dohmatob2025") or data.draw(st.booleans()):
        args += ["--on", data.draw(ON)]
    if data.draw(st.booleans()):                   # --param as for evaluate, out of range
        names = PARAMS.get(model, ["d", "x", ""])
        args += ["--param", data.draw(st.one_of(st.builds(
            "{}={}".format, st.sampled_from(names), st.sampled_from(OUT_OF_RANGE)), value))]
    fuzz(_resolve(args, ws), ws)


SMALL = {"--H": "1", "--L": "2", "--F": "1"}
ACTIVATIONS = st.one_of(st.sampled_from(["softmax", "softmax-1", "softmax-v", "b-softmax",
                                         "<tiny.py>:instant", "<raises.py>:ACT", "<syntax.py>:X",
                                         "<null-bytes.py>:X", "<file>:X", "<folder>:X",
                                         "<missing>:X", "<inside-file>:X", "<tiny.py>:"]), value)


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_heads(ws, data):
    ws.new_tiny()
    args = ["heads"]
    for flag, small in SMALL.items():             # each size hostile or the smallest one
        args += [flag, data.draw(st.sampled_from([small, *NUMBERS]))]
    act = data.draw(ACTIVATIONS)
    token, sep, name = act.partition(":")
    args += ["--activation", ws.path(token) + sep + name if token in PATHS else act]
    args += _options(data.draw, {"--output": st.one_of(st.sampled_from(["mean", "sum"]), value),
                                 "--latex": None})
    fuzz(args, ws)


PARAMS = {"marion2025": ["d", "L", "lam", "gamma", "eps", "lambda", "λ"],
          "dohmatob2025": ["d", "link", "lam", "nu"],
          "sagitova2026": ["H", "L", "n", "seed", "delta", "sgd_noise", "nu1", "nu2", "F",
                           "activation"]}
STATES = {"marion2025": ["kappa", "nu", "theta", "eta", "rho", "zeta"],
          "dohmatob2025": ["mu", "nu", "zeta", "eta", "rho"],
          "sagitova2026": ["m[0,0]", "m[1,1]", "r[0,0]", "b[0]", "v[1]", "m[9,9]", "m[,]", "m"]}


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_fuzz_evaluate(ws, data):
    """A built-in model with values mostly out of range (failing before any work; those in
    range evaluate at the default sizes, in about a second), or a model spec that names
    nothing."""
    ws.new_tiny()
    model = data.draw(st.one_of(st.sampled_from(sorted(PARAMS)), MODELS))
    names = PARAMS.get(model, ["d", "x", ""])
    pairs = st.one_of(st.builds("{}={}".format, st.sampled_from(names), st.sampled_from(OUT_OF_RANGE)),
                      value)
    args = ["evaluate", model]
    for _ in range(data.draw(st.integers(1, 3))):
        args += ["--param", data.draw(pairs)]
    states = st.builds("{}={}".format, st.sampled_from(STATES.get(model, ["kappa", "x", ""])),
                       st.one_of(st.sampled_from(OUT_OF_RANGE), number))
    for _ in range(data.draw(st.integers(0, 2))):
        args += [data.draw(st.sampled_from(["--state", "--overlap"])), data.draw(states)]
    if data.draw(st.booleans()):
        args += ["--tol", data.draw(st.sampled_from(NUMBERS))]
    fuzz(_resolve(args, ws), ws)


@settings(max_examples=EXAMPLES)
@given(st.lists(st.one_of(value, st.sampled_from(["--debug", "--help", "--bogus", "-x"])),
                min_size=1, max_size=4))
def test_fuzz_no_such_command(ws, argv):
    """Anything that is not a command: a usage error, one line (or the help)."""
    commands = {"list", "run", "calibrate", "sweep", "derive", "heads", "evaluate", "guard", "map",
                "store"}
    fuzz(["nocommand" if a in commands else a for a in argv], ws)


# --- a handful of explicit examples on the built-in models -----------------------------------
@pytest.mark.parametrize("args", [
    ["derive", "marion2025", "--on", "theta=0,eta=0,rho=0", "--latex"],
    ["derive", "dohmatob2025", "--on", "zeta=1e400"],
    ["derive", "sagitova2026", "--on", "m[0,0]=0"],
    ["evaluate", "marion2025", "--param", "d=" + str(10**30)],
    ["evaluate", "marion2025", "--param", "eps=-0", "--state", "kappa=-1"],
    ["evaluate", "dohmatob2025", "--param", "link=θ", "--state", "mu=nan"],
    ["evaluate", "sagitova2026", "--param", "H=" + str(10**30), "--param", "n=1e400"],
    ["evaluate", "sagitova2026", "--state", "m[0,0]=1e308", "--param", "seed=" + str(10**30)],
    ["heads", "--H", "1", "--L", "2", "--F", "1", "--activation", "b-softmax", "--output", "sum"],
])
def test_built_in_models_with_hostile_values(ws, args):
    check(args, ws)


FUZZED = {"list", "run", "sweep", "calibrate", "guard save", "guard compare", "derive", "heads",
          "evaluate", "map", "store size", "store prune", "store export", "store import"}


def test_every_command_is_fuzzed():
    """A command added later fails this test until the fuzz above covers it."""
    group, names = typer.main.get_command(app), set()
    for name, cmd in group.commands.items():
        subs = getattr(cmd, "commands", None)
        names |= {f"{name} {sub}" for sub in subs} if subs else {name}
    assert names == FUZZED


def test_a_difference_from_the_baseline_is_exit_1_without_an_error_line(ws):
    """Exit 1 is also a verdict (a run that differs from its baseline), not only an error."""
    out, other = ws.fresh("out"), ws.fresh("report")
    other.write_text(ws.report.read_text())
    res = check(["run", "--claims", str(ws.new_tiny()), "--workers", "0", "--no-figures", "--out",
                 str(out), "--baseline", str(other)], ws)
    assert res.exit_code == 1 and "difference(s) from baseline" in res.stdout, res.output
    res = check(["guard", "compare", str(other), str(out)], ws)
    assert res.exit_code == 1 and "difference(s) from baseline" in res.stdout, res.output
    res = check(["guard", "save", str(out), str(ws.fresh("baseline")) + ".json"], ws)
    assert res.exit_code == 0, res.output


def test_a_claims_file_of_hostile_name_runs(ws):
    """A claims file whose name holds '=', ',', non-ASCII and bidi text runs like any other."""
    odd = ws.root / "we=ird,θ\u202e😀 claims.py"
    odd.write_text(TINY_CLAIMS.replace(PAPER, "fuzzodd2099"))
    res = check(["run", "--claims", str(odd), "--workers", "0", "--no-figures", "--out",
                 str(ws.fresh("out"))], ws)
    assert res.exit_code == 0 and "confirmed" in res.stdout, res.output


# --- regressions: what the fuzz found ----------------------------------------------------------
def _one_error(args, ws, *fragments, limit=LIMIT_S):
    res = check(args, ws, limit)
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.output
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def test_derive_refuses_to_simplify_what_would_take_minutes(ws):
    """``derive marion2025 --on theta=0`` simplified for over 400 s, ``--simplify`` on the full
    flows longer: each expression to simplify is bounded (the manifold M's stay well within)."""
    size = r"d\w+/dt has \d+ operations to simplify; allowed: ≤ 400 per equation"
    line = _one_error(["derive", "marion2025", "--on", "theta=0"], ws, "fix more order parameters")
    assert re.match(rf"error: --on theta=0: {size}", line), line
    for model in ("marion2025", "dohmatob2025"):
        line = _one_error(["derive", model, "--simplify", "--latex"], ws, "restrict with --on")
        assert re.match(rf"error: --simplify: {size}", line), line


def test_derive_names_an_order_parameter_fixed_twice(ws):
    """``--on theta=-0.5,theta=0.5`` silently took the last (and then simplified for minutes)."""
    _one_error(["derive", "marion2025", "--on", "theta=-0.5,theta=0.5"], ws,
               "--on theta given twice (theta=-0.5, theta=0.5); allowed: once")


def test_derive_bounds_a_users_multi_head_model_like_heads(ws):
    """A MultiHeadModel of the user's beyond heads' sizes derived for minutes (H = 4, L = 8,
    F = 3: over 90 s); now the limits of ``heads``, one line."""
    big = ws.root / "big_heads.py"
    big.write_text(textwrap.dedent('''
        from theory.models.sagitova2026 import GaussianPrior
        from theory.multihead import MultiHeadModel
        MODEL = MultiHeadModel(4, 8, 3, "softmax")
        PRIOR = GaussianPrior([0.3, 0.1, 0.2], [[2.0, 0, 0], [0, 2.0, 0], [0, 0, 2.0]])
        '''))
    _one_error(["derive", str(big)], ws, f"model {big}: H = 4, L = 8, F = 3", "H·F = 12",
               "H·L·F = 96", "allowed: H·F ≤ 6 and H·L·F ≤ 18")


def test_a_line_break_in_a_value_is_escaped_in_its_one_line(ws):
    """A path or value holding a line break ($'a\\nb' in a shell) split its error in two lines:
    every error line now writes it escaped, as Python does."""
    res = check(["guard", "compare", "a\nb", "c\u2028d"], ws)
    assert res.exit_code == 2 and res.stderr.splitlines() == [
        "error: baseline: no report at a\\nb; " + ALLOWED_REPORT,
        "error: report: no report at c\\u2028d; " + ALLOWED_REPORT], res.output
    _one_error(["list", "--claims", "a\nb.py"], ws, "error: --claims a\\nb.py: no such file")
    _one_error(["derive", "marion2025", "--on", "theta=0\n"], ws, "error: --on theta=0\\n: ")
    broken = ws.root / "rai\nses.py"
    broken.write_text("raise RuntimeError('boom')\n")
    res = check(["list", "--claims", str(broken)], ws)
    assert res.exit_code == 2 and res.stderr.splitlines() == [
        f"{ws.root}/rai\\nses.py:1: RuntimeError: boom"], res.output


def test_an_overflow_in_evaluate_names_the_values_without_a_warning(ws):
    """``evaluate sagitova2026 --state m[0,0]=1e308`` printed numpy's two-line RuntimeWarning
    before ``error: FloatingPointError: ...``, which named no value."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _one_error(["evaluate", "sagitova2026", "--state", "m[0,0]=1e308"], ws,
                   "error: FloatingPointError: ", "at --state m[0,0]=1e308; allowed: values at "
                   "which the model's formulas stay finite")
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], caught


ALLOWED_REPORT = ("allowed: a report.json written by `run` (or its folder), or a baseline written "
                  "by `guard save`")
