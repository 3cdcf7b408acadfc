"""Fill the generated blocks of the model pages (``docs/models/*.md``) from the code.

    python docs/models/generate.py             # rewrite the generated blocks of every page
    python docs/models/generate.py --check     # write nothing; exit 1 naming every stale block
    python docs/models/generate.py marion2025  # one page (README: the index)

A page's generated parts sit between a line ``<!-- generated: NAME -->`` and the next line
``<!-- end generated -->``; everything else on the page is hand-written and left as it is. What
goes into a block comes from the code only: the parameters' ranges from their ``Param``
declarations, the order parameters from the models' geometries and ``head_state_names``, the
equations from ``numerics.reduced.reduced(...).equations()`` and ``theory`` (the same SymPy
expressions ``python -m verification derive`` prints), the claims from the claim registry
(``verification.catalogue.claims_for``). ``tests/cli/test_model_pages.py`` fails when a page's
blocks differ from what this module produces now, so a page cannot drift from the code silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
import sys

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:                 # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:                 # its sibling page_blocks.py
    sys.path.insert(0, str(HERE))

import sympy as sp  # noqa: E402
from page_blocks import (md as _md, math as _math, page_path, parse_blocks,  # noqa: E402
                         render, table as _table, tex as _tex, vector as _vector,
                         vector_tex as _vector_tex)

PAPERS = ("marion2025", "dohmatob2025", "sagitova2026")

__all__ = ["PAPERS", "PAGES", "page_path", "parse_blocks", "render", "generate", "stale", "write",
           "main"]


# --- tables from declarations ----------------------------------------------------------------
def _param_rows(params, defaults: Mapping, symbols: Mapping[str, str] | None = None) -> list[tuple]:
    """One row per ``Param``; ``symbols`` overrides a symbol's LaTeX ('' for none)."""
    symbols = symbols or {}

    def symbol(p):
        tex = symbols.get(p.name, _tex(p.symbol))
        return f"${tex}$" if tex else "—"
    return [(f"`{p.name}`", symbol(p), f"`{p.describe()}`", p.doc,
             f"`{defaults[p.name]}`" if p.name in defaults else "—") for p in params]


_PARAM_HEADER = ("name (`--param`)", "symbol", "allowed (`Param`)", "meaning", "default")


def _overlap_table(geometry, defaults: Mapping, manifold: Mapping) -> str:
    """One row per order parameter of a geometry: state name, symbol, definition, range,
    default, value on the invariant manifold."""
    fixed = {q.name: v for q, v in manifold.items()}
    rows = []
    for (a, b), q in geometry.overlaps.items():
        unit = geometry.is_unit(a) and geometry.is_unit(b)
        rows.append((f"`{q.name}`", f"${_tex(q)}$", f"{_vector(a)}ᵀ{_vector(b)}",
                     "[−1, 1]" if unit else "finite real", f"`{defaults[q.name]}`",
                     f"{fixed[q.name]}" if q.name in fixed else "free"))
    return _table(("state name", "symbol", "definition", "allowed", "default (`DEFAULT_STATE`)",
                   "on M"), rows)


def _chain_rule_flow(geometry, risk: str, risk_tex: str, time: str = "t",
                     fixed: Mapping | None = None) -> str:
    """The overlap flow of an unspecified risk R(q) on ``geometry`` (``theory.dynamics.
    overlap_flow``), written in the partial derivatives R_q = ∂R/∂q, as one aligned LaTeX
    block; ``fixed`` order parameters are substituted and their rows left out."""
    from theory.dynamics import overlap_flow
    qs = geometry.order_parameters
    R = sp.Function(risk)(*qs)
    partial = {q: sp.Symbol(f"d{risk}_{q.name}") for q in qs}
    names = {s.name: rf"{risk_tex}_{{{_tex(q)}}}" for q, s in partial.items()}
    flow = overlap_flow(geometry, R)
    rows = []
    for q, rhs in zip(flow.state, flow.rhs):
        if fixed and q in fixed:
            continue
        rhs = rhs.replace(lambda e: isinstance(e, sp.Derivative),
                          lambda e: partial[e.variables[0]])
        if fixed:
            rhs = rhs.subs(fixed)
        rhs = sp.collect(sp.expand(rhs), list(partial.values()))
        rows.append(rf"\frac{{d{_tex(q)}}}{{d{time}}} &= {_tex(rhs, **names)}")
    return _math(r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}")


def _simplified(expr):
    """``sp.simplify(expr)`` when it is not longer (what ``derive --on`` prints)."""
    s = sp.simplify(expr)
    return s if sp.count_ops(s) <= sp.count_ops(expr) else expr


def _equation_tex(eq) -> str:
    """One ``numerics.reduced.Equation`` as LaTeX (a Matrix right-hand side printed as a matrix)."""
    from sympy.matrices import MatrixBase
    rhs = _tex(eq.rhs) if isinstance(eq.rhs, MatrixBase) else eq.latex_rhs()
    return f"{eq.lhs_latex} = {rhs}"


# --- claims ----------------------------------------------------------------------------------
def _builtin_claims(paper: str) -> list:
    """The paper's built-in claims (plugins' left out), in registry order."""
    from verification.catalogue import claims_for
    return [c for c in claims_for(paper) if c.module.startswith("verification.claims.")]


def _claim_groups(paper: str) -> list[list]:
    """The paper's built-in claims, consecutive sub-claims of one claim (same id stem and
    label, e.g. ``prop1-risk[link=linear]``, ``[link=relu]``) grouped."""
    groups: list[list] = []
    for c in _builtin_claims(paper):
        last = groups[-1][0] if groups else None
        if last is not None and (last.id.split("[")[0], last.label) == (c.id.split("[")[0], c.label):
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def _shared_text(texts: list[str]) -> str:
    """One text for several sub-claims: the text when they agree, else their common part up to
    its last '; ' or '. ' followed by what each adds."""
    if len(set(texts)) == 1:
        return _md(texts[0])
    common = texts[0]
    for t in texts[1:]:
        while not t.startswith(common):
            common = common[:-1]
    cut = max(common.rfind("; "), common.rfind(". "))
    if cut < len(common) // 2:
        return " / ".join(_md(t) for t in texts)
    tails = "; ".join(_md(t[cut + 2:].rstrip(".")) for t in texts)
    return f"{_md(texts[0][:cut])} (per sub-claim: {tails})."


def _domain(c) -> str:
    """What the claim quantifies over, its reference and how many settings each profile judges
    (``python -m verification map`` judges the rest)."""
    dom = c.domain
    if not dom.coordinates:
        return ""
    ref = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                    for k, v in dom.reference.items())
    counts = ", ".join(f"{p} {len(c.settings(p))}" for p in ("quick", "full"))
    return f"{dom.describe()}; reference {ref}; settings judged per profile: {counts}."


def _claims(paper: str) -> str:
    """The claims block: per claim (or claim with sub-claims) its label, id(s), statement and
    the reading the check chose."""
    out = []
    groups = _claim_groups(paper)
    for group in groups:
        ids = ", ".join(f"`{c.id}`" for c in group)
        out.append(f"- **{_md(group[0].label)}** {ids}: {_shared_text([c.statement for c in group])}")
        readings = [c.reading for c in group if c.reading]
        if readings:
            out.append(f"  *Reading:* {_shared_text(readings)}")
        domains = [_domain(c) for c in group]
        if any(domains):
            out.append(f"  *Domain:* {_shared_text(domains)}")
    n = sum(len(g) for g in groups)
    head = (f"{n} claims (`python -m verification list --paper {paper}`), in the registry's "
            "order; the id is what `run --claim` takes, the label the paper's own numbering.")
    return head + "\n\n" + "\n".join(out)


# --- Marion et al. 2025: the token-sum kind --------------------------------------------------
def _token_law(token, vectors) -> str:
    mean = sum((c * sp.Symbol(_vector_tex(a)) for a, c in token.mean.items()), sp.S.Zero)
    names = {_vector_tex(a): _vector_tex(a) for a in vectors}
    var = token.scale ** 2
    cov = "I_d" if var == 1 else rf"{_tex(var)}\, I_d"
    return rf"\mathcal{{N}}\left({_tex(mean, **names)},\ {cov}\right)"


def _token_sum_declaration(model) -> str:
    """The data model of a ``theory.Model``, read off the declaration."""
    from theory.model import projection
    proj = {projection(n).name: rf"x^\top {_vector_tex(n)}" for n in model.vectors}
    signal = {projection(n).name: rf"x_J^\top {_vector_tex(n)}" for n in model.vectors}
    data = model.data
    rows = [
        ("number of tokens", "`data.L`", f"${_tex(data.L)}$"),
        ("signal token x_J (J uniform)", "`data.signal`", f"${_token_law(data.signal, model.vectors)}$"),
        ("other tokens x_ℓ, ℓ ≠ J", "`data.noise`", f"${_token_law(data.noise, model.vectors)}$"),
        ("student, per token", "`student`", f"$t(x) = {_tex(model.student, **proj)}$"),
        ("prediction", "—", r"$\hat y = \sum_{\ell=1}^{L} t(x_\ell)$"),
        ("label", "`label`, `label_noise`",
         rf"$y = {_tex(model.label, **signal)} + {_tex(model.label_noise)}\,\xi,\ "
         r"\xi \sim \mathcal{N}(0, 1)$"),
        ("risk", "`risk_offset`", r"$R = \mathbb{E}(\hat y - y)^2" + (
            f" - {_tex(model.risk_offset)}$" if model.risk_offset != 0
            else "$ (no ½; `risk_offset` = 0, so the label noise is included)")),
        ("hidden vectors (orthonormal)", "`hidden`", ", ".join(f"{_vector(h)}" for h in model.hidden)),
        ("trainable vectors", "`trainable`",
         ", ".join(f"{v.name} ({'unit sphere' if v.constraint == 'sphere' else 'free'})"
                   for v in model.trainable)),
    ]
    return _table(("part", "field of `Model`", "value"), rows)


def _marion_equations() -> str:
    from numerics.reduced import reduced
    from theory.models import marion2025 as mm
    rm = reduced("marion2025")
    risk = rm.equations()[0]
    on_m = rm.restrict(mm.MANIFOLD).equations()
    return "\n\n".join([
        "The reduced risk, `theory.derive(MODEL).risk` (what `python -m verification derive "
        "marion2025` prints; `OwensT(h, a)` is Owen's T function, `theory.special.OwensT`):",
        _math(_equation_tex(risk)),
        "On M = {θ = η = ρ = 0}, the risk and the flow of (κ, ν), simplified (what `derive "
        "marion2025 --on theta=0,eta=0,rho=0` prints):",
        *[_math(f"{eq.lhs_latex} = {_tex(_simplified(eq.rhs))}") for eq in on_m],
        "The projected gradient flow of the overlaps for any risk R(κ, ν, θ, η, ρ) on this "
        "geometry (`theory.dynamics.overlap_flow`, the Gram-matrix chain rule; R_q = ∂R/∂q). "
        "With the risk above it is the full flow `derive marion2025` prints, whose right-hand "
        "sides run to tens of thousands of characters:",
        _chain_rule_flow(mm.GEOMETRY, "R", "R"),
    ])


def _marion_blocks() -> dict[str, str]:
    from theory.models import marion2025 as mm
    model = mm.MODEL
    return {"declaration": _token_sum_declaration(model),
            "parameters": _table(_PARAM_HEADER, _param_rows(model.params, mm.DEFAULT_PARAMS)),
            "order-parameters": _overlap_table(model.geometry, mm.DEFAULT_STATE, mm.MANIFOLD),
            "equations": _marion_equations(),
            "claims": _claims("marion2025")}


# --- Dohmatob 2025: a risk stated in the overlaps --------------------------------------------
def _dohmatob_notation():
    """(p, ψ, r, c) as symbols, and a function writing R̄ (or any expression of the module) in
    them: p(µ) → p, √(1 − γ²) → c."""
    from theory.models import dohmatob2025 as dm
    psi, r, p, c = sp.symbols("psi r p c", real=True)
    p_expr = dm.paper_localisation(psi)

    def short(expr):
        out = expr.subs(p_expr, p).subs(sp.sqrt(1 - dm.gamma**2), c)
        left = out.free_symbols & {dm.mu, psi, dm.alpha, dm.beta}
        if left:
            raise RuntimeError(f"R̄ in (p, r, c): {sorted(map(str, left))} left over")
        return sp.collect(sp.expand(out), p)
    return psi, r, short


def _dohmatob_links() -> str:
    from theory.models import dohmatob2025 as dm
    t = sp.Symbol("t", real=True)
    rows = [(f"`{name}`", f"$\\sigma(t) = {_tex(lam(t))}$",
             f"$\\bar\\sigma_\\gamma(\\nu) = {_tex(dm.dual_kernel(name, dm.nu))}$")
            for name, lam in dm.LINKS.items()]
    return _table(("link (`--param link=`)", "σ", "dual kernel (`dual_kernel(link, nu)`)"), rows)


def _dohmatob_equations() -> str:
    from theory.models import dohmatob2025 as dm
    from theory.rem import rem_constants
    psi, r, short = _dohmatob_notation()
    derived = rem_constants()
    p_mu, c = dm.paper_localisation(), sp.sqrt(1 - dm.gamma**2)
    if sp.simplify(sp.diff(p_mu, dm.mu) - dm.beta * dm.d * c * p_mu * (1 - p_mu)) != 0:
        raise RuntimeError("∂p/∂µ is no longer βd·c·p(1 − p): update the page's text")
    parts = [
        "The REM constants as the paper states them (`PAPER_PSI`, `PAPER_R`, `PAPER_BETA_C`) and "
        "the secret token's softmax weight (`paper_localisation()`):",
        _math(r"\begin{aligned}"
              rf"\psi &= {_tex(dm.PAPER_PSI)} \\ r &= {_tex(dm.PAPER_R)} \\ "
              rf"\beta_c &= {_tex(dm.PAPER_BETA_C)} \\ p(\mu) &= {_tex(dm.paper_localisation())}"
              r"\end{aligned}"),
        "The same constants derived by Laplace's method (`theory.rem.rem_constants()`; the "
        "claim `rem-constants` compares both with extreme-value sampling):",
        _math(r"\begin{aligned}"
              rf"\psi &= {_tex(derived['psi'])} \\ r &= {_tex(derived['r'])} \\ "
              rf"\beta_c &= {_tex(derived['beta_c'])}\end{{aligned}}"),
        "R̄ of Prop. 1 for each built-in link (`paper_risk(link)`, the risk `derive dohmatob2025` "
        "prints and every claim uses), written here with p = p(µ), c = √(1 − γ²) and r = r(β, α) "
        "(ψ enters only through p). An expectation without a closed form stays an explicit "
        "𝔼 over standard Gaussians z₁, z₂ and is integrated by Gauss–Hermite in the generated code:",
    ]
    for name in dm.LINKS:
        parts.append(f"`{name}`:")
        parts.append(_math(rf"\bar R = {_tex(short(dm.paper_risk(name, psi=psi, r=r)))}"))
    parts += [
        "Cor. 1 as the paper states it (`paper_cor1_linear()`, checked against R̄ for the linear "
        "link by the claim `cor1-linear`):",
        _math(rf"\bar R_{{\mathrm{{Cor.\,1}}}} = {_tex(short(dm.paper_cor1_linear(psi, r)))}"),
        "The projected gradient flow of the overlaps for any R̄(µ, ν, ζ, η, ρ) on the geometry "
        "of (u, v; u*, v*) (`theory.dynamics.overlap_flow`; R̄_q = ∂R̄/∂q, and "
        "∂p/∂µ = βd·c·p(1 − p)); `derive dohmatob2025` prints it with R̄ substituted:",
        _chain_rule_flow(dm.OVERLAP_STRUCTURE, "Rbar", r"\bar R"),
        "On M = {ζ = η = ρ = 0}, the flow of (µ, ν) (the rows above with those overlaps at 0; M "
        "is invariant only if dζ/dt, dη/dt and dρ/dt vanish on it, which the claims "
        "`prop5-invariance` check per link):",
        _chain_rule_flow(dm.OVERLAP_STRUCTURE, "Rbar", r"\bar R", fixed=dm.MANIFOLD),
    ]
    return "\n\n".join(parts)


def _dohmatob_blocks() -> dict[str, str]:
    from theory.models import dohmatob2025 as dm
    rows = _param_rows(dm.PARAMS, dm.DEFAULT_PARAMS)
    rows.append(("`link`", r"$\sigma$", f"one of `{sorted(dm.LINKS)}` or `PATH.py:NAME`",
                 "the link σ (table below)", f"`{dm.DEFAULT_LINK}`"))
    return {"parameters": _table(_PARAM_HEADER, rows),
            "order-parameters": _overlap_table(dm.OVERLAP_STRUCTURE, dm.DEFAULT_STATE, dm.MANIFOLD),
            "links": _dohmatob_links(),
            "equations": _dohmatob_equations(),
            "claims": _claims("dohmatob2025")}


# --- Sagitova et al. 2026: the multi-head kind -----------------------------------------------
def _head_coordinate(name: str) -> tuple[str, str]:
    """(definition, allowed values) of a multi-head state coordinate m[h,f], r[h,k], b[h], v[h]."""
    kind, idx = name[0], name[2:-1].split(",")
    if kind == "m":
        return f"k_{idx[0]}ᵀk*_{idx[1]}: head {idx[0]} on spike {idx[1]}", "finite real"
    if kind == "r":
        h, k = idx
        what = f"k_{h}ᵀk_{k} − m_{h}·m_{k} (m_h: row h of m)"
        allowed = ("≥ 0" if h == k else f"\\|r[{h},{k}]\\| ≤ √(r[{h},{h}]·r[{k},{k}])") + "; r PSD"
        return what, allowed
    return (f"bias of head {idx[0]}" if kind == "b" else f"sink logit of head {idx[0]}"), "finite real"


def _sagitova_parameters() -> str:
    from theory.models import sagitova2026 as sm
    from theory.multihead import ACTIVATIONS
    rows = _param_rows(sm.PARAMS, sm.DEFAULT_PARAMS, {"delta": r"\Delta", "sgd_noise": r"\kappa",
                                                      "nu1": r"\nu_1", "nu2": r"\nu_2", "seed": ""})
    rows.append(("`activation`", "—", f"one of `{sorted(ACTIVATIONS)}` or `PATH.py:NAME`",
                 "attention weights of each head (table below)",
                 f"`{sm.DEFAULT_PARAMS['activation']}`"))
    rows.append(("`output`", "—", "`mean` or `sum`", "ŷ = (1/H)Σ_h (mean) or Σ_h (sum)",
                 f"`{sm.DEFAULT_PARAMS['output']}`"))
    return _table(_PARAM_HEADER, rows)


def _sagitova_activations() -> str:
    from theory.derived import derive
    from theory.multihead import ACTIVATIONS, MultiHeadModel
    rows = []
    for name, act in ACTIVATIONS.items():
        md = derive(MultiHeadModel(2, 2, 1, act))
        rows.append((f"`{name}`", "yes" if act.sinks else "no", f"`{act.shift_invariance}`",
                     f"$A_{{00}} = {_tex(md.head_weights[0][0])}$"))
    s01, v0 = md.logits[0][1], md.sinks[0]
    return ("Head 0's weight on token 0 with H = 2 heads and L = 2 tokens (`derive(MultiHeadModel"
            f"(2, 2, 1, name)).head_weights[0][0]`; the logit of head 0 on token 1 is `{s01.name}`, "
            f"printed ${_tex(s01)}$, head 0's sink logit `{v0.name}`, printed ${_tex(v0)}$):\n\n"
            + _table(("activation", "trains sinks v", "`shift_invariance`", "weight"), rows))


def _sagitova_state() -> str:
    from numerics.reduced import reduced
    rm = reduced("sagitova2026")
    default = rm.as_dict(rm.default_state())
    free = {rm.state_names[i] for i in rm.free}
    rows = []
    p = rm.params
    for name in rm.state_names:
        what, allowed = _head_coordinate(name)
        rows.append((f"`{name}`", what, allowed, f"`{default[name]}`",
                     "yes" if name in free else f"no ({p['activation']} has no sinks)"))
    return (f"The state of the command line's model (`reduced(\"sagitova2026\")`: H = {p['H']}, "
            f"F = {p['F']}, activation {p['activation']}), named by `head_state_names(H, F)`:\n\n"
            + _table(("state name", "definition", "allowed", "default", "moves under the flow"),
                     rows))


def _names(symbols) -> str:
    return ", ".join(f"`{x.name}`" for x in symbols)


def _sagitova_names(model, rm, saddle) -> str:
    """How the example's indexed objects are named in the code and printed."""
    from theory.derived import derive
    md = derive(model)
    Hm, ms, mu, S = saddle
    weights = [eq for eq in rm.equations(saddle=False) if eq.lhs.startswith("w_")]
    uniq = list(dict.fromkeys(S))
    rows = [("state coordinates (`state_names`)", _names(sp.Symbol(n) for n in rm.state_names), "—"),
            ("logits s_hℓ (`derive(model).logits`)", _names(x for row in md.logits for x in row),
             f"`{md.logits[0][1].name}` → ${_tex(md.logits[0][1])}$"),
            ("sink logits (`derive(model).sinks`)", _names(md.sinks),
             f"`{md.sinks[0].name}` → ${_tex(md.sinks[0])}$"),
            ("token weights (equations)", ", ".join(f"`{eq.lhs}`" for eq in weights),
             f"`{weights[0].lhs}` → ${weights[0].lhs_latex}$"),
            ("saddle Hessian rows and columns (`saddle_hessian`)", _names(ms),
             f"`{ms[1].name}` → ${_tex(ms[1])}$"),
            ("θ's mean in the saddle Hessian", _names(mu), f"`{mu[0].name}` → ${_tex(mu[0])}$"),
            ("θ's second moment 𝔼θθᵀ in the saddle Hessian", _names(uniq),
             f"`{uniq[-1].name}` → ${_tex(uniq[-1])}$")]
    return _table(("object", "names in the code", "printed"), rows)


def _sagitova_equations() -> str:
    from numerics.reduced import KINDS
    from theory.models.sagitova2026 import at_prior
    from theory.multihead import head_difference_block, saddle_hessian
    model, _, kw = KINDS["multi-head"].example()
    rm = KINDS["multi-head"].reduce(model, None, default_state=kw.get("default_state"))
    Hm, ms, mu, S = saddle = saddle_hessian(model)
    prior = kw["prior"]
    eqs = rm.equations(saddle=False)
    loss = [eq for eq in eqs if eq.lhs.startswith("w_") or eq.lhs == "phi"]
    flow = [eq for eq in eqs if eq not in loss]
    second = sp.Matrix(at_prior(S, prior, mu, S))
    parts = [
        f"For the small example `numerics.reduced.KINDS['multi-head'].example()`: H = {model.H}, "
        f"L = {model.L}, F = {model.F}, activation {model.activation.name}, output "
        f"{model.output!r} (`python -m verification derive sagitova2026` prints the same for the "
        "command line's L = 4). Token weights and the conditional loss φ = Σ_ℓ([ℓ = 0] − w_ℓ)²:",
        *[_math(_equation_tex(eq)) for eq in loss],
        "The flow on (m, r, b, v) (`HeadReduced.equations()`; κ = `sgd_noise` > 0 adds κ·𝔼N to "
        "dr/dτ, N the SGD-noise integrand of `theory.multihead`):",
        *[_math(_equation_tex(eq)) for eq in flow],
        "The saddle Hessian of Lemma III.1 (`theory.multihead.saddle_hessian(model)`): the "
        f"Hessian of the reduced loss in m (rows and columns {_names(ms)}) at m = r = b = 0, "
        f"v = 0, in θ's mean ({_names(mu)}) and **second moment 𝔼θθᵀ "
        f"({_names(dict.fromkeys(S))}), not its covariance**:",
        _math(rf"\left.\frac{{\partial^2 L}}{{\partial m^2}}\right|_{{m = r = b = 0}} = {_tex(Hm)}"),
        "Restricted to the unit head-difference directions (m of head 0 − m of head 1)/√2, one "
        "per feature (`head_difference_block(Hm, H, F)`):",
        _math(rf"P^\top \frac{{\partial^2 L}}{{\partial m^2}} P = "
              rf"{_tex(head_difference_block(Hm, model.H, model.F))}"),
        "At the example's prior, the flipping spike θ = (√ν₁, ±√ν₂) with ν = (4, 1.5): its "
        "second moment (`at_prior`) and the Hessian there:",
        _math(rf"\mathbb{{E}}\,\theta\theta^\top = {_tex(second)},\qquad "
              rf"\left.\frac{{\partial^2 L}}{{\partial m^2}}\right|_0 = "
              rf"{_tex(sp.Matrix(at_prior(Hm, prior, mu, S)))}"),
        "The names of the example's indexed objects, as the code spells and prints them:",
        _sagitova_names(model, rm, saddle)]
    return "\n\n".join(parts)


def _sagitova_blocks() -> dict[str, str]:
    return {"parameters": _sagitova_parameters(),
            "activations": _sagitova_activations(),
            "order-parameters": _sagitova_state(),
            "equations": _sagitova_equations(),
            "claims": _claims("sagitova2026")}


# --- the index ---------------------------------------------------------------------------------
_KIND_PAGES = {"token-sum": "marion2025", "dohmatob-student": "dohmatob2025",
               "multi-head": "sagitova2026"}


def _index_blocks() -> dict[str, str]:
    from numerics.reduced import KINDS
    rows = []
    for name, kind in KINDS.items():
        page = _KIND_PAGES.get(name)
        n = len(_builtin_claims(page)) if page else 0
        rows.append((f"`{name}`", f"`{kind.declaration.__module__}.{kind.declaration.__qualname__}`",
                     _md(kind.doc), f"[{page}.md]({page}.md) ({n} claims)" if page else "—"))
    return {"kinds": _table(("kind (`KINDS`)", "declaration", "what it is", "page"), rows)}


PAGES: dict[str, Callable[[], dict[str, str]]] = {
    "marion2025": _marion_blocks, "dohmatob2025": _dohmatob_blocks,
    "sagitova2026": _sagitova_blocks, "README": _index_blocks}
"""Each page (its file stem under docs/models/) and the builder of its generated blocks."""


# --- entry points ------------------------------------------------------------------------------
def generate(stem: str) -> dict[str, str]:
    """{block name: content} of the page ``stem`` as the code gives it now."""
    if stem not in PAGES:
        raise ValueError(f"page {stem!r}; allowed: {sorted(PAGES)}")
    return {name: text.strip("\n") for name, text in PAGES[stem]().items()}


def stale(stem: str, blocks: Mapping[str, str] | None = None) -> list[str]:
    """Names of the page's blocks whose content differs from ``generate(stem)`` (missing or
    extra blocks included)."""
    blocks = generate(stem) if blocks is None else blocks
    have = parse_blocks(page_path(stem).read_text(encoding="utf-8"))
    return sorted(n for n in set(have) | set(blocks) if have.get(n) != blocks.get(n))


def write(stem: str) -> list[str]:
    """Rewrite the page's generated blocks; the names of those that changed."""
    path = page_path(stem)
    text = path.read_text(encoding="utf-8")
    blocks = generate(stem)
    changed = stale(stem, blocks)
    if changed:
        path.write_text(render(text, blocks), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    stems = [a for a in args if a != "--check"] or list(PAGES)
    status = 0
    for stem in stems:
        changed = stale(stem) if check else write(stem)
        if changed:
            status = 1 if check else status
            verb = "stale" if check else "updated"
            print(f"docs/models/{stem}.md: {verb} blocks {', '.join(changed)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
