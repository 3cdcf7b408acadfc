"""Dynamics claims of Sagitova, Duranthon, Zdeborová (2026): SGD → gradient flow (Prop. III.2),
the symmetric manifold (Sec. III), the unspecialized phase (Prop. III.3), the Θ(log D) escape
(Prop. III.4), sequential specialization (Result III.1) and the sharp transition (Conj. III.1).

The flow is the one SymPy derives for the multi-head model kind (``theory.multihead``),
evaluated by antithetic quasi-Monte Carlo with common random numbers through the kind's reduced
model (``numerics.reduced.HeadReduced``: integrate, per-draw right-hand sides, with_noise);
SGD runs in R^D (``numerics.sgd.multihead``). The saddle's escape rate comes from the symbolic
Hessian of Lemma III.1 (``theory.multihead.saddle_hessian``), derived from the model's own
conditional loss."""

from __future__ import annotations

import functools

import numpy as np

from numerics.multihead import HeadState, first_passage, mean_and_se
from numerics.reduced import HeadReduced
from numerics.sgd.multihead import HeadSGDConfig, simulate_heads
from numerics.sgd.multihead_gram import simulate_heads_gram
from theory.models.sagitova2026 import GaussianPrior, at_prior, flipping_spike
from theory.multihead import ACTIVATIONS, MultiHeadModel, saddle_hessian
from .. import checks
from ..registry import Outcome, claim
from ..stats import finite

PAPER = "sagitova2026"
L = 4


@functools.cache
def _saddle(H, F):
    return saddle_hessian(MultiHeadModel(H, L, F))


def saddle_rate(prior, H):
    """λ = −(most negative eigenvalue) of the symbolic saddle Hessian (Lemma III.1) for the
    prior's moments: |m| grows like e^{λτ} near m = 0, r = 0."""
    Hm, ms, mu, S = _saddle(H, prior.F)
    Hn = at_prior(Hm, prior, mu, S)
    evals, evecs = np.linalg.eigh(Hn)
    return float(-evals[0]), evals, evecs


def _flow(model, prior, n, seed, kappa=0.0) -> HeadReduced:
    return HeadReduced(model, prior, n=n, seed=seed, sgd_noise=kappa, backend="torch")


def _trajectory(rm: HeadReduced, state0, t_eval, **options):
    """The reduced model's trajectory at ``t_eval`` (RK45, rtol 1e-6, atol 1e-12) and its
    states; ``options`` (``stop(t, y)`` on packed states, ``chunk``) go to
    ``HeadReduced.integrate``. A solver that fails or a state that turns non-finite is an error:
    no verdict from a partial trajectory."""
    tr = rm.integrate(state0, t_eval, rtol=1e-6, atol=1e-12, **options)
    if not tr.ok:
        raise RuntimeError(f"{rm.name}: the flow's integration ended '{tr.status}': {tr.message}")
    return tr, rm.states(tr)


class _FastMFlow(HeadReduced):
    """A wrong reduced ODE: the m-equation 30 % too fast (prop-iii2's declared mutation)."""

    def rhs(self, y):
        d = super().rhs(y)
        d[:self.model.H * self.model.F] *= 1.3          # the m-block comes first
        return d


def _head_dependent_temperatures():
    """A wrong attention: softmax with a temperature that depends on the head, which breaks the
    heads' exchangeability (symmetric-manifold's declared mutation)."""
    import sympy as sp

    from theory.multihead import Activation
    return [Activation("softmax-heterogeneous", lambda s, v: [
        [sp.exp((1 + 0.4 * h) * x) / sum(sp.exp((1 + 0.4 * h) * y) for y in row) for x in row]
        for h, row in enumerate(s)])]


# --- Prop. III.2 ---------------------------------------------------------------------------
@claim(f"{PAPER}:prop-iii2-sgd-flow", "Prop. III.2",
       "As D → ∞, SGD converges to the gradient flow on (m, r, b, v); finite-D trajectories "
       "approach the ODE as D grows.",
       reading="softmax-v (keys, biases and sink logits all trained), H = 2, F = 2, L = 4, "
               "flipping spike (ν₁, ν₂) = (1, 2); start m = [[0.4, 0.1], [−0.2, 0.3]], r = 0.2·I, "
               "b = (0.1, −0.1), v = (0.2, 0); online SGD in R^D with batch N_b = 8 and "
               "γ = κN_b/D, κ = γD/N_b = 0.25 held fixed, so the ODE carries the SGD-noise term "
               "κ·E N in dr/dτ; τ ≤ 2. Checks: (i) at every D and record time the seed-mean "
               "of every order parameter agrees with the ODE within Bonferroni z·se + the "
               "ODE's quasi-Monte Carlo error (two independent draw sets) + an explicit "
               "finite-size term 1/D; SGD direct in R^D up to D = 800, beyond by the Gram-matrix "
               "simulator (exact in law); (ii) the RMS deviation of single runs from the ODE "
               "decreases with D (log-log slope < 0 at z, bootstrap over seeds; −½ expected), judged "
               "as a trend: > 0 at z refutes, in between inconclusive.",
       mutations={"m-equation ×1.3": lambda: {"reduced_class": _FastMFlow}})
def prop_iii2(ctx, reduced_class=HeadReduced, dims=None):
    dims = dims or ctx.pick([100, 200, 400, 800], [100, 200, 500, 1000, 2000, 4000])
    seeds = ctx.pick(32, 64)
    kappa, B, T = 0.25, 8, 2.0
    md = MultiHeadModel(2, L, 2, "softmax-v")
    prior = flipping_spike(1.0, 2.0)
    init = HeadState.make([[0.4, 0.1], [-0.2, 0.3]], 0.2 * np.eye(2), [0.1, -0.1], [0.2, 0.0])
    flows = [reduced_class(md, prior, n=2**15, seed=ctx.claim_seed(f"iii2:ode{i}"), sgd_noise=kappa)
             for i in range(2)]
    t_rec = np.linspace(0, T, 5)
    odes = [_trajectory(rm, init, t_rec)[0].y for rm in flows]        # packed states, time × comp
    rows, arrays = [], {}
    rng = ctx.rng("iii2:boot")
    for j, D in enumerate(dims):
        lr = kappa * B / D
        steps = int(round(T / lr))
        cfg = HeadSGDConfig(D=D, lr=lr, steps=steps, batch=B, seeds=seeds,
                            seed=ctx.claim_seed(f"iii2:sgd:{D}"), record_every=steps // 4,
                            init=init, device=ctx.device)
        simulate = simulate_heads if D <= 800 else simulate_heads_gram   # both exact in law
        res = simulate(md, prior, cfg)
        if not np.allclose(res.t, t_rec, atol=1e-9):
            raise RuntimeError(f"SGD record times {res.t} differ from the ODE's {t_rec}")
        sgd = np.array([[res.head_state(k, i).pack() for i in range(seeds)] for k in range(len(res.t))])
        finite(sgd, *odes)
        dev = sgd - odes[0][:, None, :]                                  # time, seed, comp
        bias, se = dev.mean(1), dev.std(1, ddof=1) / np.sqrt(seeds)
        qmc = np.abs(odes[0] - odes[1])
        rms_seed = np.sqrt((dev[1:] ** 2).mean((0, 2)))                  # per seed
        boot = [np.sqrt(np.mean(rms_seed[rng.integers(0, seeds, seeds)] ** 2)) for _ in range(200)]
        rows.append({"D": D, "lr": lr, "steps": steps, "simulator": simulate.__name__,
                     "rms_deviation": float(np.sqrt(np.mean(rms_seed**2))),
                     "rms_deviation_boot_sd": float(np.std(np.log(boot), ddof=1)),
                     "bias": bias.tolist(), "bias_se": se.tolist(), "ode_qmc_error": qmc.tolist(),
                     "tau": res.t.tolist(), "steps_per_second": res.steps_per_second})
        arrays[f"sgd_D{D}"] = sgd
        arrays[f"ode_D{D}"] = odes[0]
        ctx.tick((j + 1) / len(dims))
    # (i) one family: every (D, τ, component) seed-mean deviation against 0 with the explicit
    # allowance ODE quasi-Monte Carlo error + 1/D; resolution relative to the ODE's value there
    dev_all = np.array([r["bias"] for r in rows])
    check = checks.estimate_vs_theory(
        ctx, dev_all.ravel(), np.array([r["bias_se"] for r in rows]).ravel(), np.zeros(dev_all.size),
        bias=np.array([np.array(r["ode_qmc_error"]) + 1.0 / r["D"] for r in rows]).ravel(),
        name="SGD seed-mean − ODE", scale=np.broadcast_to(np.abs(odes[0]), dev_all.shape).ravel())
    z, passed = check.z, check.ok.reshape(dev_all.shape)
    worst = None
    for j, r in enumerate(rows):
        bias, se, q = (np.array(r[k]) for k in ("bias", "bias_se", "ode_qmc_error"))
        excess = np.abs(bias) - (z * se + q + 1.0 / r["D"])
        k = np.unravel_index(np.argmax(excess), excess.shape)
        r["worst_excess"] = float(excess[k])
        if not passed[j].all() and (worst is None or excess[k] > worst[1]):
            worst = (r, float(excess[k]), k)
    x = np.log([r["D"] for r in rows])
    y = np.log([r["rms_deviation"] for r in rows])
    w = 1 / np.array([r["rms_deviation_boot_sd"] for r in rows]) ** 2
    X = np.stack([np.ones_like(x), x], 1)
    cov = np.linalg.inv(X.T @ (X * w[:, None]))
    slope, slope_se = float((cov @ (X.T @ (w * y)))[1]), float(np.sqrt(cov[1, 1]))
    # (ii) the single-run deviation shrinks with D: a trend (refuted only if it grows at z)
    shrink = checks.trend(ctx, slope, slope_se, sign=-1, name="ln RMS deviation vs ln D")
    names = (["m"] * 4 + ["r"] * 3 + ["b"] * 2 + ["v"] * 2)
    evidence = {"rows": rows, "z": z, "kappa": kappa, "batch": B, "seeds": seeds,
                "rms_slope": slope, "rms_slope_se": slope_se, "components": names,
                "init": init.to_dict(), "mean_check": check.evidence(),
                "shrink_check": shrink.evidence()}

    def draw(fig):
        ax = fig.add_subplot(1, 1, 1)
        ax.errorbar([r["D"] for r in rows], [r["rms_deviation"] for r in rows],
                    yerr=[r["rms_deviation"] * r["rms_deviation_boot_sd"] for r in rows], fmt="o-",
                    label="RMS |SGD − ODE| per run")
        d = np.array([r["D"] for r in rows], float)
        ax.plot(d, rows[0]["rms_deviation"] * np.sqrt(d[0] / d), "k--", label="∝ D^{-1/2}")
        ax.set(xscale="log", yscale="log", xlabel="D", ylabel="deviation from the ODE",
               title=f"Prop. III.2: SGD vs reduced flow (κ = γD/N_b = {kappa}), slope {slope:.2f}")
        ax.legend()
    figs = {"deviation": draw}
    if worst is not None:
        r, ex, (ti, ci) = worst
        return Outcome("refuted", f"SGD mean departs from the ODE at D={r['D']}, τ={r['tau'][ti]:.2f}, "
                       f"{names[ci]}-component {ci}: bias {r['bias'][ti][ci]:.4g} ± "
                       f"{r['bias_se'][ti][ci]:.2g} (excess {ex:.3g} over the allowance)",
                       evidence, arrays=arrays, figures=figs)
    if shrink.decision == "refuted":
        return Outcome("refuted", f"the deviation from the ODE grows with D (log-log slope "
                       f"{slope:.3f} ± {slope_se:.3f}, z = {shrink.z:.2f})", evidence, arrays=arrays,
                       figures=figs)
    if shrink.decision == "inconclusive":
        return Outcome("inconclusive", f"SGD means agree with the ODE at every D, but the single-run "
                       f"deviation's decrease is not resolved (log-log slope {slope:.3f} ± "
                       f"{slope_se:.3f}); needs {shrink.needs}", evidence, arrays=arrays, figures=figs)
    return Outcome("confirmed", f"SGD means agree with the ODE (with the κ-noise term) at every D; "
                   f"single-run deviation ∝ D^{slope:.2f}±{slope_se:.2f} (D = {dims[0]}…{dims[-1]})",
                   evidence, arrays=arrays, figures=figs)


# --- Sec. III: the symmetric manifold --------------------------------------------------------
def _manifold_contrasts(H, F):
    """Rows of a matrix C with C·pack(dstate) = 0 exactly on the all-heads-equal manifold."""
    iu = np.triu_indices(H)
    ridx = {(int(a), int(b)): H * F + k for k, (a, b) in enumerate(zip(*iu))}
    P = H * F + len(iu[0]) + 2 * H
    rows, names = [], []

    def add(i, j, name):
        c = np.zeros(P)
        c[i], c[j] = 1, -1
        rows.append(c)
        names.append(name)
    for h in range(1, H):
        for f in range(F):
            add(h * F + f, f, f"m[{h},{f}] − m[0,{f}]")
        add(ridx[(h, h)], ridx[(0, 0)], f"r[{h},{h}] − r[0,0]")
        add(H * F + len(iu[0]) + h, H * F + len(iu[0]), f"b[{h}] − b[0]")
        add(H * F + len(iu[0]) + H + h, H * F + len(iu[0]) + H, f"v[{h}] − v[0]")
    off = [(a, b) for a in range(H) for b in range(a + 1, H)]
    for (a, b) in off[1:]:
        add(ridx[(a, b)], ridx[off[0]], f"r[{a},{b}] − r{list(off[0])}")
    return np.array(rows), names


@claim(f"{PAPER}:symmetric-manifold", "Sec. III",
       "The all-heads-equal manifold (m_h, b_h, v_h equal for all h, r_hh′ exchangeable) is "
       "invariant under the flow.",
       reading="invariance as tangency: at random points of the manifold (m_h = m̄, b_h = b̄, "
               "v_h = v̄, r = a·I + c·11ᵀ) every head contrast of the derived right-hand side "
               "(m_h − m_0, r_hh − r_00, r_hk − r_01, b_h − b_0, v_h − v_0) is zero within "
               "Bonferroni z·se (pseudo-random antithetic draws, so the standard errors are "
               "valid); H = 3, F = 2, L = 4; all four activations; flipping spike (1, 2) and "
               "N(0.5·e₁, diag(2, 0.5)); with the SGD-noise term κ = 0.5.",
       mutations={"head-dependent temperatures": lambda: {"activations": _head_dependent_temperatures()}})
def symmetric_manifold(ctx, activations=None):
    H, F = 3, 2
    acts = activations or [ACTIVATIONS[a] for a in ("softmax", "softmax-1", "softmax-v", "b-softmax")]
    priors = {"flipping-spike": flipping_spike(1.0, 2.0),
              "gaussian": GaussianPrior([0.5, 0.0], np.diag([2.0, 0.5]))}
    n = ctx.pick(2**14, 2**16)
    n_points = ctx.pick(2, 4)
    rng = ctx.rng("manifold")
    C, names = _manifold_contrasts(H, F)
    rows = []
    for i, act in enumerate(acts):
        md = MultiHeadModel(H, L, F, act)
        for pname, prior in priors.items():
            rm = HeadReduced(md, prior, n=n, seed=ctx.claim_seed(f"manifold:{act.name}:{pname}"),
                             sgd_noise=0.5, kind="random")
            for _ in range(n_points):
                a, c = rng.uniform(0.05, 0.5), rng.uniform(-0.04, 0.2)
                st = HeadState.make(np.tile(rng.normal(0, 0.7, F), (H, 1)), a * np.eye(H) + c,
                                    np.full(H, rng.normal(0, 0.3)), np.full(H, rng.normal(0, 0.5)))
                draws = rm.rhs_draws(st)
                est, se = mean_and_se(draws @ C.T)
                finite(est, se)
                scale = 0.5 * np.abs(C) @ np.abs(draws.mean(0))   # mean |rhs| of the pair
                k = int(np.argmax(np.abs(est) / np.maximum(se, 1e-300)))
                rows.append({"activation": act.name, "prior": pname, "state": st.to_dict(),
                             "contrasts": est.tolist(), "se": se.tolist(), "scale": scale.tolist(),
                             "largest": names[k], "largest_z": float(abs(est[k]) / max(se[k], 1e-300))})
        ctx.tick((i + 1) / len(acts))
    # one family: every head contrast at every point against 0 (tangency is exact), no bias;
    # resolution relative to the size of the contrasted components of the right-hand side
    check = checks.estimate_vs_theory(
        ctx, np.ravel([r["contrasts"] for r in rows]), np.ravel([r["se"] for r in rows]),
        np.zeros(len(rows) * len(names)), name="head contrasts of the flow on the manifold",
        scale=np.ravel([r["scale"] for r in rows]))
    z = check.z
    bad = [r for r, ok in zip(rows, check.ok.reshape(len(rows), -1)) if not ok.all()]
    evidence = {"rows": rows, "contrast_names": names, "z": z, "n": n, "H": H, "F": F,
                "check": check.evidence()}
    if bad:
        w = max(bad, key=lambda r: r["largest_z"])
        return Outcome("refuted", f"{w['activation']}, {w['prior']}: the flow leaves the manifold "
                       f"({w['largest']} at {w['largest_z']:.1f} se > z = {z:.2f})", evidence)
    top = max(rows, key=lambda r: r["largest_z"])
    return Outcome("confirmed", f"all head contrasts vanish on the manifold ({len(rows)} points, "
                   f"largest {top['largest_z']:.2f} se < z = {z:.2f})", evidence)


# --- small initialisation: shared runs --------------------------------------------------------
SIGMA0 = 0.02          # keys ~ N(0, σ₀²I/D): m ~ σ₀/√D, r = σ₀²I


def _small_init(g, D):
    H = g.shape[0]
    return HeadState.make(SIGMA0 * g / np.sqrt(D), SIGMA0**2 * np.eye(H))


# --- Prop. III.3 -----------------------------------------------------------------------------
@claim(f"{PAPER}:prop-iii3-unspecialized", "Prop. III.3",
       "From a small initialisation with Eθ ≠ 0, all heads first align with the mean signal "
       "direction Σ_f Eθ_f k*_f together, in τ = Θ(1) (Θ(D) samples), while their "
       "differences stay small.",
       reading="softmax, H = 2, F = 2, L = 4, flipping spike (ν₁, ν₂) = (1, 2) (Eθ = e₁); "
               "keys ~ N(0, σ₀²I/D), σ₀ = 0.02 (the same Gaussian draw at every D); "
               "alignment time τ_a = first τ with min_h m_h·Eθ/|Eθ| ≥ 0.3. ODE at "
               "D = 10²…10⁸: Θ(1) read as τ_a(D) converging: the spread of τ_a over the top "
               "decades is < 10% of τ_a, where a Θ(log D) time would change by "
               "≥ ln(10⁴)/(2λ) (λ the saddle rate); heads together: max_h,h′ |m_h − m_h′| at "
               "τ_a is < 10% of the alignment at the largest D and decreases with D. SGD "
               "(D = 200, 400; 16 seeds; κ = 0.25, N_b = 8): the seed-mean τ_a within 20% (stated "
               "tolerance) + z·se of the ODE's with the κ-noise term; SGD runs that never align "
               "are counted and make this part inconclusive.",
       mutations={"prior without mean": lambda: {"prior": GaussianPrior([0.0, 0.0], np.diag([2.0, 1.0]))}})
def prop_iii3(ctx, prior=None):
    H, F = 2, 2
    prior = prior or flipping_spike(1.0, 2.0)
    md = MultiHeadModel(H, L, F, "softmax")
    mean = prior.mean()
    e = mean / np.linalg.norm(mean) if np.linalg.norm(mean) > 0 else np.eye(F)[0]
    dims = ctx.pick([1e2, 1e4, 1e6, 1e8], [1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8])
    g = ctx.rng("iii3:init").standard_normal((H, F))
    rm = _flow(md, prior, ctx.pick(2**12, 2**14), ctx.claim_seed("iii3:ode"))
    t_eval = np.linspace(0, 30, 301)
    rows = []
    for D in dims:
        tr, states = _trajectory(rm, _small_init(g, D), t_eval)
        align = np.array([min(s.m @ e) for s in states])
        ta = first_passage(tr.t, align, 0.3)
        if np.isfinite(ta):
            k = int(np.searchsorted(tr.t, ta))
            s = states[k]
            spread = float(max(np.linalg.norm(s.m[a] - s.m[b]) for a in range(H) for b in range(H)))
            rows.append({"D": D, "tau_align": ta, "spread_at_tau": spread,
                         "alignment_at_tau": float(np.mean(s.m @ e))})
        else:
            rows.append({"D": D, "tau_align": float("nan"), "spread_at_tau": float("nan"),
                         "alignment_at_tau": float("nan")})
    ctx.tick(0.4)
    sgd_rows = []
    for D in ctx.pick([200, 400], [200, 400, 1000]):
        kappa, B = 0.25, 8
        lr = kappa * B / D
        cfg = HeadSGDConfig(D=D, lr=lr, steps=int(10 / lr), batch=B, seeds=16,
                            seed=ctx.claim_seed(f"iii3:sgd:{D}"), record_every=max(1, int(0.1 / lr)),
                            init=SIGMA0, device=ctx.device)
        res = simulate_heads(md, prior, cfg, until=lambda s: bool(np.all((s["m"] @ e).min(1) >= 0.3)))
        taus = np.array([first_passage(res.t, (res["m"][:, i] @ e).min(1), 0.3) for i in range(16)])
        ode = _trajectory(rm.with_noise(kappa), _small_init(g, D), t_eval)
        ode_ta = first_passage(ode[0].t, [min(s.m @ e) for s in ode[1]], 0.3)
        done = taus[np.isfinite(taus)]
        sgd_rows.append({"D": D, "tau_align_seeds": taus.tolist(), "never_aligned": int(16 - done.size),
                         "tau_align_mean": float(np.mean(done)) if done.size else float("nan"),
                         "tau_align_se": (float(np.std(done, ddof=1) / np.sqrt(done.size))
                                          if done.size > 1 else float("nan")),
                         "tau_align_ode_with_noise": ode_ta})
        ctx.tick(0.4 + 0.3 * len(sgd_rows))
    evidence = {"rows": rows, "sgd": sgd_rows, "sigma0": SIGMA0, "threshold": 0.3,
                "mean_direction": e.tolist()}
    taus = np.array([r["tau_align"] for r in rows])
    if not np.all(np.isfinite(taus)):
        return Outcome("refuted", f"the heads did not align with Eθ within τ = {t_eval[-1]:.0f} at "
                       f"D = {[r['D'] for r in rows if not np.isfinite(r['tau_align'])]}", evidence)
    # the Θ(log D) alternative: ln(D_max/D_mid)/(2λ) with λ the saddle rate for this prior
    lam = saddle_rate(prior, H)[0]
    top = taus[len(taus) // 2:]
    drift = float(top.max() - top.min())
    log_alt = float(np.log(rows[-1]["D"] / rows[len(rows) // 2]["D"]) / (2 * max(lam, 1e-12)))
    rel_spread = [r["spread_at_tau"] / r["alignment_at_tau"] for r in rows]
    evidence.update({"tau_drift_top_decades": drift, "log_d_alternative_change": log_alt,
                     "saddle_rate": lam, "relative_spread": rel_spread})
    if drift > 0.1 * top.mean():
        return Outcome("refuted", f"the alignment time keeps moving with D (by {drift:.2f} over the "
                       f"top decades, τ_a ≈ {top.mean():.2f}): not Θ(1)", evidence)
    if not (rel_spread[-1] < 0.1 and rel_spread[-1] <= rel_spread[0]):
        return Outcome("refuted", f"the heads are not together at alignment: relative spread "
                       f"{rel_spread[-1]:.3f} at D = {rows[-1]['D']:.0e}", evidence)
    return _sgd_alignment_outcome(ctx, sgd_rows, evidence, (
        f"all heads align with Eθ together at τ_a = {taus[-1]:.2f} for every D = 10²…{rows[-1]['D']:.0e} "
        f"(drift {drift:.3f} vs {log_alt:.1f} for a log D time; relative head spread "
        f"{rel_spread[-1]:.1e})"))


def _sgd_alignment_outcome(ctx, sgd_rows, evidence, ode_txt):
    """Prop. III.3's SGD part: the seed-mean alignment time against the κ-ODE's, |Δ| ≤ z·se +
    20 % of the ODE's time (the tolerance stated in the reading), one family over the D's.
    SGD runs that never aligned are counted; any of them makes the mean censored → inconclusive."""
    never = [s["never_aligned"] for s in sgd_rows]
    evidence["sgd_never_aligned"] = never
    if any(never) or not all(np.isfinite(s["tau_align_ode_with_noise"]) for s in sgd_rows):
        return Outcome("inconclusive", f"{ode_txt}; but SGD runs never aligned within the horizon "
                       f"(per D: {never} of 16) or the κ-ODE did not: the SGD mean is censored; needs "
                       f"a longer SGD horizon", evidence)
    ode_ta = np.array([s["tau_align_ode_with_noise"] for s in sgd_rows])
    check = checks.estimate_vs_theory(
        ctx, [s["tau_align_mean"] for s in sgd_rows], [s["tau_align_se"] for s in sgd_rows], ode_ta,
        bias=0.2 * ode_ta, name="SGD alignment time vs the κ-ODE's")
    evidence["sgd_check"] = check.evidence()
    if check.decision == "refuted":
        s = sgd_rows[int(np.argmax(check.score))]
        return Outcome("refuted", f"SGD at D = {s['D']} aligns at τ = {s['tau_align_mean']:.2f} ± "
                       f"{s['tau_align_se']:.2f} vs the κ-ODE's {s['tau_align_ode_with_noise']:.2f} "
                       f"(beyond 20 % + z·se, z = {check.z:.2f})", evidence)
    return Outcome("confirmed", f"{ode_txt}; SGD agrees with the κ-ODE within 20 % + z·se "
                   f"(z = {check.z:.2f})", evidence)


# --- Prop. III.4 and Conj. III.1: escape from the saddle --------------------------------------
ESCAPE_NU = (4.0, 1.5)
ESCAPE_THRESHOLD = 0.3           # ‖m‖_F at escape
SGD_ESCAPE_HORIZON = 40.0        # τ up to which SGD runs
MAX_NEVER_ESCAPED = 0.05         # share of SGD runs per D that may stay censored at the horizon


def _escape_prior():
    return GaussianPrior([0.0, 0.0], np.diag(ESCAPE_NU))


@functools.lru_cache(maxsize=4)
def _escape_runs(profile, seed, prior_key=ESCAPE_NU, dims=None, seeds=None, sgd_dims=None,
                 sgd_seeds=None):
    """Escape times τ_esc(seed, D) of the ODE from keys ~ N(0, σ₀²I/D) (one Gaussian draw per
    seed, reused at every D) and of online SGD (Gram-matrix simulator, exact in law);
    shared by Prop. III.4 and Conj. III.1. The keyword arguments shrink the runs for tests."""
    from ..context import Context
    ctx = Context(profile=profile, seed=seed)
    H, F = 2, 2
    prior = GaussianPrior([0.0, 0.0], np.diag(prior_key))
    md = MultiHeadModel(H, L, F, "softmax")
    dims = dims or ctx.pick([1e2, 1e4, 1e6, 1e8], [1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10])
    seeds = seeds or ctx.pick(6, 16)
    rm = _flow(md, prior, ctx.pick(2**12, 2**14), ctx.claim_seed("escape:ode"))
    G = ctx.rng("escape:init").standard_normal((seeds, H, F))
    t_eval = np.linspace(0, 60, 601)
    ode = np.full((seeds, len(dims)), np.nan)
    for i in range(seeds):
        for j, D in enumerate(dims):
            tr, states = _trajectory(rm, _small_init(G[i], D), t_eval)
            ode[i, j] = first_passage(tr.t, [np.linalg.norm(s.m) for s in states], ESCAPE_THRESHOLD)
    sgd_dims = sgd_dims or ctx.pick([100, 400, 1600], [100, 400, 1600, 6400, 25600])
    sgd_seeds = sgd_seeds or ctx.pick(64, 128)
    kappa, B = 0.25, 32
    sgd = np.full((sgd_seeds, len(sgd_dims)), np.nan)
    for j, D in enumerate(sgd_dims):
        lr = kappa * B / D
        cfg = HeadSGDConfig(D=D, lr=lr, steps=int(SGD_ESCAPE_HORIZON / lr), batch=B, seeds=sgd_seeds,
                            seed=ctx.claim_seed(f"escape:sgd:{D}"), record_every=max(1, int(0.1 / lr)),
                            init=SIGMA0, device="cpu")
        res = simulate_heads_gram(md, prior, cfg, until=lambda s: bool(
            np.all(np.sqrt((s["m"]**2).sum((1, 2))) >= ESCAPE_THRESHOLD)))
        norms = np.sqrt((res["m"]**2).sum((2, 3)))
        sgd[:, j] = [first_passage(res.t, norms[:, i], ESCAPE_THRESHOLD) for i in range(sgd_seeds)]
    # the SGD runs' own limit: the ODE with the κ-noise term, same small initialisations
    rm_k = rm.with_noise(kappa)
    ode_kappa = np.full((min(seeds, 3), len(sgd_dims)), np.nan)
    for i in range(ode_kappa.shape[0]):
        for j, D in enumerate(sgd_dims):
            tr, states = _trajectory(rm_k, _small_init(G[i], D), t_eval)
            ode_kappa[i, j] = first_passage(tr.t, [np.linalg.norm(s.m) for s in states], ESCAPE_THRESHOLD)
    return {"dims": dims, "ode": ode, "sgd_dims": sgd_dims, "sgd": sgd, "kappa": kappa, "batch": B,
            "n_qmc": rm.params["n"], "ode_kappa": ode_kappa}


def _slope(x, Y):
    """Least-squares slope of each row of Y on x, then mean and standard error over rows."""
    x = np.asarray(x, float)
    s = [np.polyfit(x, y, 1)[0] for y in Y]
    return float(np.mean(s)), float(np.std(s, ddof=1) / np.sqrt(len(s))), s


@claim(f"{PAPER}:prop-iii4-escape-logd", "Prop. III.4",
       "Escaping the unspecialized saddle takes τ = Θ(log D), i.e. Θ(D log D) samples.",
       reading="softmax, H = 2, F = 2, L = 4, θ ~ N(0, diag(4, 1.5)) (Eθ = 0: m = 0 is the "
               "saddle); keys ~ N(0, σ₀²I/D), σ₀ = 0.02; escape = first τ with ‖m‖_F ≥ 0.3. "
               "ODE at D = 10²…10⁸ (quick; 10¹⁰ full), the same initial draw per seed at every D: "
               "τ_esc must grow linearly in ln D (slope > 0 at z; linear-fit residuals < 2% of "
               "τ) with slope 1/(2λ), λ = −(smallest eigenvalue) of the symbolic saddle Hessian, "
               "within 5% (stated before running: the initial r = σ₀²I, quasi-Monte Carlo error "
               "of the rate and the threshold's nonlinearity). Online SGD (D = 100, 400, 1600; 64 "
               "seeds; κ = 0.25, N_b = 32; Gram-matrix simulator, exact in law): at fixed κ its "
               "limit is the ODE with the SGD-noise term, so SGD's escape slope in ln D is judged "
               "against that κ-ODE's slope (same ln D range and initialisations; no finite-size "
               "term), in one family with the ODE-vs-1/(2λ) comparison; SGD runs that never escape "
               "by τ = 40 are counted, and more than 5% at some D make the verdict inconclusive.",
       mutations={"saddle rate ×1.3": lambda: {"rate": 1.3 * saddle_rate(_escape_prior(), 2)[0]}})
def prop_iii4(ctx, rate=None, runs=None):
    runs = runs or _escape_runs(ctx.profile, ctx.seed)
    ctx.tick(0.8)
    lam, evals, evecs = saddle_rate(_escape_prior(), 2)
    lam = lam if rate is None else rate
    predicted = 1 / (2 * lam)
    x = np.log(runs["dims"])
    ode = runs["ode"]
    finite(ode)
    slope, slope_se, per_seed = _slope(x, ode)
    fit = [np.polyval(np.polyfit(x, y, 1), x) for y in ode]
    resid = float(np.max(np.abs(np.array(fit) - ode) / ode))
    xs = np.log(runs["sgd_dims"])
    sgd = runs["sgd"]
    # seeds that never escaped within the SGD horizon are censored, not dropped silently: they
    # are counted per D, and too many of them make the SGD comparison undecidable
    never = np.sum(~np.isfinite(sgd), axis=0)
    sgd_ok = np.all(np.isfinite(sgd), axis=1)
    sgd_mean = np.nanmean(sgd, 0)
    sgd_se = np.nanstd(sgd, 0, ddof=1) / np.sqrt(np.sum(np.isfinite(sgd), axis=0))
    sgd_slope, sgd_slope_se, _ = _slope(xs, sgd[sgd_ok]) if sgd_ok.sum() > 2 else (np.nan, np.nan, [])
    ok_k = np.all(np.isfinite(runs["ode_kappa"]), axis=1)
    k_slopes = _slope(xs, runs["ode_kappa"][ok_k])[2] if ok_k.sum() >= 1 else []
    kappa_slope = float(np.mean(k_slopes)) if len(k_slopes) else float("nan")
    kappa_slope_se = float(np.std(k_slopes, ddof=1) / np.sqrt(len(k_slopes))) if len(k_slopes) > 1 else 0.0
    evidence = {"dims": list(runs["dims"]), "ode_escape_times": ode.tolist(),
                "ode_slope": slope, "ode_slope_se": slope_se, "per_seed_slopes": per_seed,
                "predicted_slope": predicted, "saddle_rate": lam,
                "hessian_eigenvalues": evals.tolist(), "hessian_eigenvectors": evecs.T.tolist(),
                "max_relative_fit_residual": resid, "sgd_dims": list(runs["sgd_dims"]),
                "sgd_escape_times": sgd.tolist(), "sgd_mean": sgd_mean.tolist(), "sgd_se": sgd_se.tolist(),
                "sgd_slope": sgd_slope, "sgd_slope_se": sgd_slope_se,
                "sgd_never_escaped": never.tolist(), "sgd_seeds": int(sgd.shape[0]),
                "sgd_never_escaped_limit": MAX_NEVER_ESCAPED,
                "ode_with_sgd_noise_escape_times": runs["ode_kappa"].tolist(),
                "ode_with_sgd_noise_slope": kappa_slope, "ode_with_sgd_noise_slope_se": kappa_slope_se,
                "kappa": runs["kappa"], "threshold": ESCAPE_THRESHOLD, "sigma0": SIGMA0,
                "relative_tolerance": 0.05}

    def draw_escape(fig):
        ax = fig.add_subplot(1, 1, 1)
        for y in ode:
            ax.plot(runs["dims"], y, "-", color="0.75", lw=1)
        ax.plot(runs["dims"], ode.mean(0), "o-", label="ODE (mean over initial draws)")
        ax.errorbar(runs["sgd_dims"], sgd_mean, yerr=sgd_se, fmt="s", label="SGD in R^D")
        d = np.array(runs["dims"])
        ax.plot(d, ode.mean(0)[0] + predicted * (np.log(d) - np.log(d[0])), "k--",
                label=f"slope 1/(2λ) = {predicted:.3f} (saddle Hessian)")
        ax.set(xscale="log", xlabel="D", ylabel="escape time τ_esc",
               title=f"Prop. III.4: escape time vs log D (fitted slope {slope:.3f})")
        ax.legend(fontsize=8)

    def draw_spectrum(fig):
        ax = fig.add_subplot(1, 1, 1)
        ax.bar(range(len(evals)), evals)
        ax.axhline(0, color="k", lw=0.5)
        ax.set(xlabel="eigen-direction", ylabel="eigenvalue",
               title="Saddle Hessian (m = 0, r = 0) for N(0, diag(4, 1.5)), H = 2, L = 4")
    figs = {"escape": draw_escape,
            "hessian-spectrum": draw_spectrum}
    arrays = {"ode_escape_times": ode, "sgd_escape_times": sgd, "dims": np.array(runs["dims"])}
    return _escape_outcome(ctx, runs, evidence, arrays, figs)


def _escape_outcome(ctx, runs, evidence, arrays, figs):
    """Prop. III.4's verdict: one family of two comparisons (estimate vs theory): the ODE's
    slope against 1/(2λ) and SGD's slope against its own limit, the ODE with the κ-noise term
    (same ln D range). Linearity of the ODE's τ_esc in ln D is a deterministic check."""
    e = evidence
    slope, slope_se, predicted = e["ode_slope"], e["ode_slope_se"], e["predicted_slope"]
    sgd_slope, sgd_slope_se = e["sgd_slope"], e["sgd_slope_se"]
    kappa_slope, kappa_se = e["ode_with_sgd_noise_slope"], e["ode_with_sgd_noise_slope_se"]
    never, n_sgd = np.array(e["sgd_never_escaped"]), e["sgd_seeds"]
    never_txt = (f"{int(never.sum())} SGD runs never escaped within τ = {SGD_ESCAPE_HORIZON:.0f} "
                 f"(per D: {never.tolist()} of {n_sgd})")
    if e["max_relative_fit_residual"] > 0.02:
        return Outcome("refuted", f"escape time is not linear in ln D (relative residual "
                       f"{e['max_relative_fit_residual']:.3f})", evidence, arrays=arrays, figures=figs)
    censored = np.any(never > MAX_NEVER_ESCAPED * n_sgd)
    if censored or not np.isfinite(sgd_slope) or not np.isfinite(kappa_slope):
        return Outcome("inconclusive", f"{never_txt}: more than {MAX_NEVER_ESCAPED:.0%} at some D, so "
                       f"SGD's escape slope is censored; needs a longer SGD horizon", evidence,
                       arrays=arrays, figures=figs)
    # Biases stated before running: the ODE slope within 5 % of 1/(2λ) (initial r = σ₀²I, the
    # rate's quasi-Monte Carlo error and the threshold's nonlinearity, see the reading). SGD vs
    # the κ-ODE: no finite-size term is added. Both slopes are fitted over the same ln D range,
    # so the range's curvature is shared; the remaining difference (SGD's O(1/√D) noise in m,
    # which grows with the instability for the same time as the initial O(σ₀/√D) signal) has no
    # derived size here, so it is not allowed for: the verdict falls where it falls.
    check = checks.estimate_vs_theory(
        ctx, [slope, sgd_slope], [slope_se, float(np.hypot(sgd_slope_se, kappa_se))],
        [predicted, kappa_slope], bias=[0.05 * predicted, 0.0],
        name="escape slopes: ODE vs 1/(2λ), SGD vs κ-ODE")
    evidence["check"] = check.evidence()
    evidence["z"] = check.z
    ode_txt = f"ODE slope {slope:.4f} ± {slope_se:.1g} vs 1/(2λ) = {predicted:.4f}"
    sgd_txt = (f"SGD slope {sgd_slope:.2f} ± {sgd_slope_se:.2f} over D = {runs['sgd_dims'][0]}…"
               f"{runs['sgd_dims'][-1]} vs its own limit, the ODE with the κ-noise term, "
               f"{kappa_slope:.2f} ± {kappa_se:.1g}")
    if not check.ok[0]:
        return Outcome("refuted", f"escape slope differs from 1/(2λ) of the saddle Hessian: {ode_txt} "
                       f"({check.score[0]:.1f} se beyond the 5 % allowance, z = {check.z:.2f}); "
                       f"{never_txt}", evidence, arrays=arrays, figures=figs)
    if not check.ok[1]:
        return Outcome("refuted", f"SGD's escape slope departs from its κ-ODE limit: {sgd_txt} "
                       f"({check.score[1]:.1f} se, z = {check.z:.2f}); {ode_txt}; {never_txt}",
                       evidence, arrays=arrays, figures=figs)
    return Outcome("confirmed", f"τ_esc linear in ln D over D = {runs['dims'][0]:.0e}…"
                   f"{runs['dims'][-1]:.0e}: {ode_txt}; {sgd_txt} (z = {check.z:.2f}); {never_txt}",
                   evidence, arrays=arrays, figures=figs)


def _fresh_escape_times(ctx, dims, n_draws, escape_time=None):
    """τ_esc of the ODE from a FRESH Gaussian initial direction for every (D, draw): the seed of
    draw i at D is ``ctx.claim_seed(f"conj:init:{D:g}:{i}")``, so the spread over draws at each
    D is measured across independent initial conditions (reusing one direction at every D would
    make sd(τ/ln D) ∝ 1/ln D by arithmetic). ``escape_time(g, D)`` replaces the flow (tests,
    mutations); by default the reduced flow is integrated until ‖m‖_F ≥ ESCAPE_THRESHOLD."""
    if escape_time is None:
        md = MultiHeadModel(2, L, 2, "softmax")
        rm = _flow(md, _escape_prior(), ctx.pick(2**12, 2**14), ctx.claim_seed("escape:ode"))
        t_eval = np.linspace(0, 60, 601)

        def escape_time(g, D):
            tr, states = _trajectory(rm, _small_init(g, D), t_eval, chunk=100, stop=lambda t, y: bool(
                np.linalg.norm(rm.unpack(y).m) >= ESCAPE_THRESHOLD))
            return first_passage(tr.t, [np.linalg.norm(s.m) for s in states], ESCAPE_THRESHOLD)
    out = np.full((n_draws, len(dims)), np.nan)
    for j, D in enumerate(dims):
        for i in range(n_draws):
            g = np.random.default_rng(ctx.claim_seed(f"conj:init:{D:g}:{i}")).standard_normal((2, 2))
            out[i, j] = escape_time(g, D)
        ctx.tick(0.8 * (j + 1) / len(dims))
    return out


def _spread_slope(times, dims, rng, n_boot=400):
    """sd over independent draws of τ/ln D at each D (runs that never escaped left out and
    counted), and the least-squares slope of ln sd against ln ln D with its standard error
    from per-D bootstrap variances (the D columns are independent). Concentration ∝ 1/ln D
    gives slope −1; a spread that does not shrink gives 0."""
    lnd = np.log(np.asarray(dims, float))
    x = np.log(lnd)
    sd, var, never = [], [], []
    for j in range(len(lnd)):
        r = times[:, j][np.isfinite(times[:, j])] / lnd[j]
        never.append(int(times.shape[0] - r.size))
        if r.size < 3:
            raise ValueError(f"only {r.size} escaped runs at D = {dims[j]:g}; need ≥ 3")
        sd.append(float(r.std(ddof=1)))
        boot = [np.log(r[rng.integers(0, r.size, r.size)].std(ddof=1)) for _ in range(n_boot)]
        var.append(float(np.var(boot, ddof=1)))
    w = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
    return (np.array(sd), float(w @ np.log(sd)), float(np.sqrt(w**2 @ np.array(var))), never)


def _spreading_escape(g, D):
    """A flow for which Conj. III.1 is false: τ/ln D = 0.75 + 0.05·g₀₀·ln D, so the spread of
    τ/ln D grows with ln D (declared as the claim's mutation)."""
    lnd = np.log(D)
    return lnd * (0.75 + 0.05 * g[0, 0] * lnd)


@claim(f"{PAPER}:conj-iii1-sharp-transition", "Conj. III.1",
       "The specialization time, in units of log D, concentrates as D → ∞ (a sharp dynamical "
       "transition).",
       reading="the escape set-up of Prop. III.4 (softmax, H = F = 2, θ ~ N(0, diag(4, 1.5)), "
               "keys ~ N(0, σ₀²I/D), escape at ‖m‖_F = 0.3). ODE at D = 10²…10⁸ from a FRESH "
               "random initial direction for every D and draw (16 draws per D quick, 32 full; "
               "independent seeds), and online SGD at D = 100…1600 (independent seeds per D): "
               "the spread over draws of τ_esc/ln D at each D. Its shrinking is the slope of "
               "ln sd against ln ln D (−1 for a spread ∝ 1/ln D; per-D bootstrap errors), "
               "judged as a trend: confirmed when the ODE's slope is < 0 at z and SGD's is not "
               "> 0 at z; refuted when either spread grows at z; otherwise inconclusive.",
       mutations={"spread of τ/ln D grows with ln D": lambda: {"escape_time": _spreading_escape}})
def conj_iii1(ctx, runs=None, escape_time=None):
    """``runs``: {"dims", "ode" (draw × D, independent draws per D), "sgd_dims", "sgd"} instead
    of simulating (tests); ``escape_time(g, D)`` replaces the ODE (tests, mutations)."""
    if runs is None:
        dims = ctx.pick([1e2, 1e4, 1e6, 1e8], [1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10])
        shared = _escape_runs(ctx.profile, ctx.seed)       # SGD: fresh seeds per D already
        runs = {"dims": dims, "ode": _fresh_escape_times(ctx, dims, ctx.pick(16, 32), escape_time),
                "sgd_dims": shared["sgd_dims"], "sgd": shared["sgd"]}
    rng = ctx.rng("conj:boot")
    ode_sd, ode_slope, ode_se, ode_never = _spread_slope(runs["ode"], runs["dims"], rng)
    sgd_sd, sgd_slope, sgd_se, sgd_never = _spread_slope(runs["sgd"], runs["sgd_dims"], rng)
    ode_check = checks.trend(ctx, ode_slope, ode_se, sign=-1, name="ODE: ln sd(τ/ln D) vs ln ln D")
    sgd_check = checks.trend(ctx, sgd_slope, sgd_se, sign=-1, name="SGD: ln sd(τ/ln D) vs ln ln D")
    evidence = {"dims": list(runs["dims"]), "ode_escape_times": np.asarray(runs["ode"]).tolist(),
                "ode_spread": ode_sd.tolist(), "ode_spread_slope": ode_slope,
                "ode_spread_slope_se": ode_se, "ode_never_escaped": ode_never,
                "sgd_dims": list(runs["sgd_dims"]), "sgd_spread": sgd_sd.tolist(),
                "sgd_spread_slope": sgd_slope, "sgd_spread_slope_se": sgd_se,
                "sgd_never_escaped": sgd_never, "draws_per_D": int(np.shape(runs["ode"])[0]),
                "ode_check": ode_check.evidence(), "sgd_check": sgd_check.evidence(),
                "z": ode_check.z}

    def draw(fig):
        ax = fig.add_subplot(1, 1, 1)
        ax.plot(runs["dims"], ode_sd, "o-", label="ODE, fresh initial draw at every D")
        ax.plot(runs["sgd_dims"], sgd_sd, "s-", label="SGD in R^D")
        ax.set(xscale="log", yscale="log", xlabel="D", ylabel="sd over draws of τ_esc / ln D",
               title="Conj. III.1: concentration of the escape time in units of ln D")
        ax.legend()
    figs = {"spread": draw}
    txt = (f"slope of ln sd(τ/ln D) vs ln ln D: ODE {ode_slope:.2f} ± {ode_se:.2f} (D = "
           f"{runs['dims'][0]:.0e}…{runs['dims'][-1]:.0e}, {evidence['draws_per_D']} fresh draws per D), "
           f"SGD {sgd_slope:.2f} ± {sgd_se:.2f} (D = {runs['sgd_dims'][0]}…{runs['sgd_dims'][-1]}); "
           f"z = {ode_check.z:.2f}; never escaped: ODE {ode_never}, SGD {sgd_never}")
    if "refuted" in (ode_check.decision, sgd_check.decision):
        return Outcome("refuted", f"the spread of τ/ln D grows with D: {txt}", evidence, figures=figs)
    if ode_check.decision == "confirmed":
        return Outcome("confirmed", f"sd(τ_esc/ln D) shrinks ×{ode_sd[-1] / ode_sd[0]:.2f} across "
                       f"independent initial draws: {txt}", evidence, figures=figs)
    return Outcome("inconclusive", f"no significant shrinking of the spread: {txt}; needs "
                   f"{ode_check.needs}", evidence, figures=figs)


# --- Result III.1 ------------------------------------------------------------------------------
@claim(f"{PAPER}:result-iii1-sequential", "Result III.1",
       "Heads specialize sequentially: along the eigenvectors of Cov θ, largest eigenvalue "
       "first. With N(0, diag(ν_1, ν_2)), ν_1 > ν_2, the f = 1 alignment grows first and f = 2 "
       "follows after a delay of order log D.",
       reading="softmax, H = 4, F = 2, L = 4, θ ~ N(0, diag(6, 3)); keys ~ N(0, σ₀²I/D), "
               "σ₀ = 0.02; τ_f = first τ with max_h |m_hf| ≥ 0.5. ODE at D = 10², 10³, 10⁴ "
               "(quick; 10²…10⁸ full), integrated until both features are specialized or "
               "τ = 800 (2000 full), 3 initial draws (6 full): τ₁ < τ₂ in every run and the "
               "delay τ₂ − τ₁ grows linearly in ln D, judged as a trend over draws: slope > 0 at z "
               "confirms, slope < 0 at z refutes, in between inconclusive. Online SGD "
               "(Gram-matrix simulator, exact in law; D = 100, 400 quick, to 6400 full; 8 seeds "
               "quick, 32 full; κ = 1, N_b = 16): f = 1 first on average at every D, and its "
               "delay's slope in ln D reported; the staircase figure overlays SGD at the "
               "smallest D with the ODE carrying the same κ-noise term.",
       mutations={"variances swapped": lambda: {"nu": (3.0, 6.0)}})
def result_iii1(ctx, nu=(6.0, 3.0), dims=None, seeds=None, sgd_dims=None):
    H, F = 4, 2
    prior = GaussianPrior([0.0, 0.0], np.diag(nu))
    md = MultiHeadModel(H, L, F, "softmax")
    dims = dims or ctx.pick([1e2, 1e3, 1e4], [1e2, 1e4, 1e6, 1e8])
    seeds = seeds or ctx.pick(3, 6)
    t_max = ctx.pick(800.0, 2000.0)
    rm = _flow(md, prior, ctx.pick(2**11, 2**13), ctx.claim_seed("iii1:ode"))
    G = ctx.rng("iii1:init").standard_normal((seeds, H, F))
    times, curves = _specialization_times(ctx, rm, G, dims, t_max)
    t_eval = np.linspace(0, min(float(np.nanmax(times[:, 0, 1]) * 1.3) if np.isfinite(times[:, 0, 1]).any()
                                else 200.0, t_max), 401)
    # SGD (Gram simulator, exact in law) at several D; the staircase figure shows the smallest
    kappa, B, sgd_seeds = 1.0, 16, ctx.pick(8, 32)
    sgd_dims = sgd_dims or ctx.pick([100, 400], [100, 400, 1600, 6400])
    sgd_times, sgd_runs = np.full((sgd_seeds, len(sgd_dims), 2), np.nan), {}
    t_sgd = ctx.pick(400.0, 1000.0)
    for j, D in enumerate(sgd_dims):
        lr = kappa * B / D
        res_D = simulate_heads_gram(md, prior, HeadSGDConfig(
            D=D, lr=lr, steps=int(t_sgd / lr), batch=B, seeds=sgd_seeds,
            seed=ctx.claim_seed(f"iii1:sgd:{D}"), record_every=max(1, int(1 / lr)), init=SIGMA0,
            device=ctx.device), until=lambda s: bool(np.all(np.abs(s["m"]).max(1) >= 0.5)))
        A_D = np.abs(res_D["m"]).max(2)                                  # τ × seed × F
        sgd_times[:, j] = [[first_passage(res_D.t, A_D[:, i, f], 0.5) for f in range(F)]
                           for i in range(sgd_seeds)]
        sgd_runs[D] = res_D
    res = sgd_runs[sgd_dims[0]]
    D_sgd = sgd_dims[0]
    sgdA = np.abs(res["m"]).max(2)
    ode_noise = _trajectory(rm.with_noise(kappa), _small_init(G[0], D_sgd), t_eval)
    ok = np.all(np.isfinite(sgd_times), axis=(1, 2))
    sgd_delay = sgd_times[ok, :, 1] - sgd_times[ok, :, 0]
    sgd_fit = _slope(np.log(sgd_dims), sgd_delay) if ok.sum() > 2 else (np.nan, np.nan, [])
    ctx.tick(0.95)
    evidence = {"dims": dims, "nu": list(nu), "tau_1_tau_2": times.tolist(),
                "sgd_dims": list(sgd_dims), "sgd_kappa": kappa, "sgd_batch": B,
                "sgd_tau_1_tau_2": sgd_times.tolist(), "sgd_seeds_specialized": int(ok.sum()),
                "sgd_delay_slope": sgd_fit[0], "sgd_delay_slope_se": sgd_fit[1],
                "threshold": 0.5, "sigma0": SIGMA0}

    def draw(fig):
        ax = fig.add_subplot(1, 1, 1)
        tt = ode_noise[0].t
        mo = np.array([s.m for s in ode_noise[1]])
        for f, c in zip(range(F), ("C0", "C1")):
            ax.plot(tt, np.abs(mo[:, :, f]).max(1), color=c, lw=2, label=f"ODE max_h |m_h{f + 1}|")
            for s in range(sgdA.shape[1]):
                ax.plot(res.t, sgdA[:, s, f], color=c, lw=0.6, alpha=0.5)
        ax.set(xlabel="τ", ylabel="head–feature alignment",
               title=f"Result III.1: specialization staircase, D = {D_sgd} (thin: SGD seeds)")
        ax.legend()
    figs = {"staircase": draw}
    arrays = {"ode_times": times, "sgd_times": sgd_times,
              **{f"ode_m_D{int(D)}": c for D, c in curves.items()}, "sgd_tau": res.t, "sgd_m": res["m"]}
    return _sequential_outcome(ctx, times, sgd_times, sgd_fit, dims, sgd_dims, t_max, evidence, arrays,
                               figs)


def _specialized(state, threshold=0.5):
    """Every feature f has a head with |m_hf| ≥ threshold."""
    return bool(np.all(np.abs(state.m).max(0) >= threshold))


def _specialization_times(ctx, rm, G, dims, t_max, threshold=0.5, chunk=50.0, dt=0.5):
    """τ_f = first τ with max_h |m_hf| ≥ threshold, for each initial draw G[i] and D (states
    sampled every ``dt``): the flow from ``_small_init(G[i], D)`` until every feature is
    specialized or τ = t_max, the solver restarted every ``chunk`` time units. Returns the
    times (draw × D × F) and the first draw's m(τ) per D."""
    seeds, F = G.shape[0], G.shape[2]
    times = np.full((seeds, len(dims), F), np.nan)
    curves = {}
    t_eval = np.linspace(0.0, t_max, int(round(t_max / dt)) + 1)
    for i in range(seeds):
        for j, D in enumerate(dims):
            tr, states = _trajectory(rm, _small_init(G[i], D), t_eval, chunk=int(round(chunk / dt)),
                                     stop=lambda t, y: _specialized(rm.unpack(y), threshold))
            A = np.array([np.abs(s.m).max(0) for s in states])          # τ × F
            times[i, j] = [first_passage(tr.t, A[:, f], threshold) for f in range(F)]
            if i == 0:
                curves[D] = np.array([s.m for s in states])
        ctx.tick(0.7 * (i + 1) / seeds)
    return times, curves


def _sequential_outcome(ctx, times, sgd_times, sgd_fit, dims, sgd_dims, t_max, evidence, arrays, figs):
    """Result III.1's verdict from the ODE's (τ₁, τ₂) and SGD's, see the claim's reading."""
    if not np.all(np.isfinite(times)):
        return Outcome("refuted", f"a feature was never specialized on within τ = {t_max:.0f} "
                       f"(τ₁, τ₂ = {times.tolist()})", evidence, arrays=arrays, figures=figs)
    order_ok = bool(np.all(times[..., 0] < times[..., 1]))
    slope, slope_se, per = _slope(np.log(dims), times[..., 1] - times[..., 0])
    evidence.update({"delay_slope": slope, "delay_slope_se": slope_se, "per_seed_delay_slopes": per,
                     "order_ok": order_ok})
    if not order_ok:
        return Outcome("refuted", "the smaller-variance feature specialized first in some run "
                       f"(τ₁, τ₂ = {times.tolist()})", evidence, arrays=arrays, figures=figs)
    sgd_mean = (np.nanmean(sgd_times, 0) if np.isfinite(sgd_times).any()
                else np.full((len(sgd_dims), 2), np.nan))
    if not np.all(sgd_mean[:, 0] < sgd_mean[:, 1]):
        return Outcome("refuted", f"in SGD the order is not f = 1 first on average (mean τ₁, τ₂ per D: "
                       f"{np.round(sgd_mean, 1).tolist()})", evidence, arrays=arrays, figures=figs)
    # the delay's growth in ln D: refuted only on evidence of a shrinking delay (slope < 0 at z);
    # a positive slope short of z decides nothing
    check = checks.trend(ctx, slope, slope_se, sign=+1, name="ODE delay τ₂ − τ₁ vs ln D")
    evidence["delay_check"] = check.evidence()
    evidence["z"] = check.z
    tail = (f"slope {slope:.3f} ± {slope_se:.3f} per unit ln D over {len(per)} initial draws, "
            f"z = {check.z:.2f}")
    if check.decision == "refuted":
        return Outcome("refuted", f"the delay τ₂ − τ₁ shrinks with ln D ({tail})", evidence,
                       arrays=arrays, figures=figs)
    if check.decision == "inconclusive":
        return Outcome("inconclusive", f"f = 1 first in every run, but the delay's growth with ln D is "
                       f"not resolved ({tail}); needs {check.needs}", evidence, arrays=arrays,
                       figures=figs)
    return Outcome("confirmed", f"f = 1 first in every run; the delay grows by {slope:.2f} ± "
                   f"{slope_se:.2f} per unit ln D (ODE, D = {dims[0]:.0e}…{dims[-1]:.0e}); SGD "
                   f"(D = {sgd_dims[0]}…{sgd_dims[-1]}): f = 1 first on average, delay slope "
                   f"{sgd_fit[0]:.1f} ± {sgd_fit[1]:.1f}", evidence, arrays=arrays, figures=figs)
