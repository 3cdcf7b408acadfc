"""The check library: one statistical policy for each kind of comparison a claim makes, and
the error contract each claim's verdict carries.

Every policy records what it spent in the claim's :class:`Ledger` (``ctx.ledger``): its number
of comparisons and its resolution. The claim's contract (a top-level field of its report
entry) is

- ``alpha``: the claim's false-refutation probability. A family of n comparisons is judged at
  the two-sided Bonferroni z = Φ⁻¹(1 − α/(2n)) with the claim's own α (``Context.alpha``),
  never shared with other claims of the run; a claim with k families spends k·α (union bound)
  and says so. 0 for exact (symbolic or high-precision) checks. A standard error estimated
  from few replicates (``dof`` = replicates − 1: randomised-QMC replicates, seeds, initial
  draws) is judged at the Student-t quantile of the same tail probability instead of z: for
  one comparison at α = 10⁻⁴ the normal z = 3.89 rejects a true value about 60 times as often
  as α with 8 replicates (t₇ = 7.88), 5 times with 32.
- ``resolution``: the smallest relative deviation δ of the checked quantity that the check
  refutes with probability ≥ 95 % at the run's sample sizes. For |Δ| ≤ z·se + bias, where the
  estimate may carry any systematic error within ±bias (that is what the allowance is for), a
  true deviation δ·|θ| is refuted with probability ≥ 95 % once δ·|θ| ≥ (z + z₀.₉₅)·se + 2·bias:
  the systematic error can take one bias off the deviation, the allowance the other. With
  ``dof`` the standard error is itself random, and the power term is the non-central t one:
  z + p with P(T′_dof(z + p) > z) = 95 % (p = 3.6 instead of t₀.₉₅ = 1.9 at 7 dof and
  α = 10⁻⁴; → z₀.₉₅ as dof → ∞). A family's resolution is the smallest over its points (any
  refuted point refutes), the claim's the largest over its families (each checked quantity
  must be resolved). None when exact.
- ``comparisons``: the total number of comparisons.

Policies:

- :func:`estimate_vs_theory`: |estimate − theory| ≤ z·se + bias, bias an explicit finite-size
  term.
- :func:`limit`: the d → ∞ limit by a weighted least-squares fit in the given finite-size
  basis, with a χ² goodness-of-fit test. A poor fit is reported (``poor_fit``), so that the claim
  adds dimensions or samples or says ``inconclusive``; the error bar is never widened.
- :func:`extrapolate`: the d → ∞ limit judged by its finite-size behaviour: several declared
  correction models, each tested (χ², leave-largest-out); the admissible ones' spread a
  systematic; larger d added until they agree on the verdict; ``refuted`` only when every
  admissible model refutes.
- :func:`trend`: the sign of a slope (or any estimate with a standard error): ``confirmed`` when
  it has the claimed sign at z, ``refuted`` only when it has the opposite sign at z, otherwise
  ``inconclusive`` with the standard error that would decide.
- :func:`sequential`: batches are added until an anytime-valid confidence sequence (normal
  mixture, valid however often it is looked at) decides the comparison, or the budget is spent
  (``inconclusive``).
- :func:`exact`: values computed exactly or to high precision (SymPy, mpmath) against the
  claimed ones within a tolerance the caller states (|Δ| ≤ atol + rtol·|θ|): α = 0, resolution
  None, its comparisons counted; ``refuted`` when any value is outside, never ``inconclusive``.

Evidence: a :class:`Check`'s ``evidence()`` keeps the worst comparison's numbers (``worst_score``,
the policy's ``worst_*`` details) and lists every comparison under ``comparisons`` ({"columns",
"rows", "count", "shown"}: index, label when given, what was compared, score, passed; all rows
up to :data:`MAX_EVIDENCE_ROWS`, else the worst ones). The ledger keeps each family's check, and
the runner writes their full columns to the claim's report.npz (``<claim>/checks/<k>/<column>``,
k the family's index in the order spent).

The page docs/check_library.md documents every policy, its assumptions, decision rule,
contract and calibration, with an example claim.

Families and legs: one policy call is one family, named by ``name=``: give each checked
quantity its own, so that its resolution is its own (the contract lists every family: name, α,
resolution, comparisons, policy and the resolution it must reach). ``resolve=`` states the
resolution a leg must reach to show what the claim says: a leg that passes without it is
``inconclusive``, never ``confirmed``. :func:`combine` composes a claim's verdict from its legs and
:func:`legs_summary` says each leg's state.

Calibration (``python -m verification calibrate``, ``verification.calibrate``) measures each
claim's record: runs under the true model count false refutations and give the pulls
(estimate − claim)/se of every comparison (``Ledger.family_data``); runs with one family's claimed
values moved by 0.5× and 1× its own resolution measure that family's power. Both act through
``ctx.perturbation`` on the claimed side: ``("relative", δ, family)`` moves each claimed θ of
``family`` by δ·s away from 0, s the magnitude the comparison's resolution is relative to
(``scale``, default |θ|), so a claimed 0 moves too; for a direction (:func:`trend`, a directional
:func:`sequential`) ``("relative", δ, family, m)`` judges "the effect is m(1 + δ)", m the true
effect measured under the true model; ``("sign",)`` negates every claimed value (or claimed
direction). A perturbation that changes nothing (a sign flip of a claimed 0) is recorded as not
applied (``Ledger.perturbation_applied``), and calibration counts the run as not applicable rather
than as a mutation the check missed. Claims declare formula mutations (a dropped term, a wrong
factor) as overrides, every one they were tried against, caught or not
(``verification.declare.missed``).

SGD against its reduced flow: :func:`sgd_vs_flow` integrates the flow on the SGD's record
times (or takes a stored flow's values) and judges the seed means by
:func:`estimate_vs_theory` at one dimension, and over several by :func:`extrapolate` (the d → ∞
limit of the deviation, growing d where allowed), at every dimension, or by :func:`limit` in a
fixed basis (``flow``).

Validity: :func:`realisable` raises :class:`OutsideRealisableSet` for a state that is not
realisable (non-finite values, norms, |overlaps| > 1, a Gram matrix that is not PSD); the runner
turns it into ``error`` naming what failed, never ``confirmed`` or ``refuted``.
"""

from .conclude import conclude
from .exact_kinds import bound, identity, not_judged, signs
from .flow import SGD_CORRECTIONS, FlowComparison, Tracks, draw_sgd_vs_flow, sgd_states, sgd_vs_flow
from .policies import *  # noqa: F403 - the policies' index
from .policies import __all__ as _policies

__all__ = [*_policies, "POLICIES", "FlowComparison", "Tracks", "SGD_CORRECTIONS", "sgd_vs_flow",
           "sgd_states",
           "draw_sgd_vs_flow", "identity", "signs", "bound", "not_judged", "conclude"]

POLICIES = ("estimate_vs_theory", "limit", "extrapolate", "trend", "panel_trend", "sequential",
            "exact", "identity", "signs", "bound", "not_judged", "realisable", "sgd_vs_flow")
"""The public policies: each decides one kind of comparison (or, ``realisable``, guards the states
a verdict rests on). docs/check_library.md documents each (a test keeps it so). A claim closes
with :func:`conclude`, which builds its Outcome from the legs the policies judged."""
