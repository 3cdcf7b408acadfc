"""One index convention (issue 28): the saddle Hessian of Lemma III.1 (``theory.multihead.
saddle_hessian``) names its symbols 0-based, as the reduced model names its state — the
overlaps m[h,f] are HeadReduced.state_names' first H·F names, θ's moments mu[f] and S[f,g] —
and LaTeX prints them with their indices unchanged (m_{0,1}, \\mu_{0}, S_{0,1}). The Hessian
at a prior's moments (``at_moments``) is ``at_prior``'s; a derivation is kept once per model
and every call gets its own Matrices."""

import re

import numpy as np
import pytest
import sympy as sp

from numerics.reduced import HeadReduced
from numerics.reduced.base import Equation
from theory.models.sagitova2026 import GaussianPrior, at_moments, at_prior
from theory.multihead import Activation, MultiHeadModel, saddle_hessian, saddle_symbols
from theory.printing import latex


@pytest.mark.parametrize("H, L, F", [(1, 2, 1), (2, 2, 2), (3, 2, 1), (1, 3, 3)])
def test_saddle_symbols_are_named_as_the_state(H, L, F):
    md = MultiHeadModel(H, L, F)
    Hm, ms, mu, S = saddle_hessian(md)
    assert [str(x) for x in ms] == list(HeadReduced(md).state_names[:H * F])
    assert [str(x) for x in mu] == [f"mu[{f}]" for f in range(F)]
    assert [[str(S[f, g]) for g in range(F)] for f in range(F)] == [
        [f"S[{min(f, g)},{max(f, g)}]" for g in range(F)] for f in range(F)]
    assert (ms, mu, S) == saddle_symbols(H, F)
    names = {s.name for s in Hm.free_symbols}
    assert names <= {str(x) for x in [*mu, *S]}
    assert not any(re.search(r"_\d", n) for n in names)             # no 1-based S_11, mu_1


def test_latex_prints_indexed_names_with_their_indices():
    m, mu, S = saddle_symbols(2, 2)
    assert latex(m[1]) == "m_{0,1}" and latex(mu[0]) == r"\mu_{0}" and latex(S[0, 1]) == "S_{0,1}"
    assert latex(sp.Symbol("lam[2]") * m[0]) == r"\lambda_{2} m_{0,0}"
    tex = Equation("H", "H", sp.Matrix([[S[0, 0], m[3]]])).latex_rhs()
    assert tex.startswith(r"\left[\begin{matrix}") and "S_{0,0}" in tex and "m_{1,1}" in tex
    assert latex(sp.Symbol("m[0,0]x")) == sp.latex(sp.Symbol("m[0,0]x"))    # not an index form


def test_heads_saddle_equations_print_0_based_names():
    rm = HeadReduced(MultiHeadModel(2, 3, 1))
    text = "\n".join(eq.text() for eq in rm.saddle_equations())
    assert "m order ['m[0,0]', 'm[1,0]']" in text and "S[0,0]/27" in text
    tex = "\n".join(eq.text(latex=True) for eq in rm.saddle_equations())
    assert r"\frac{S_{0,0}}{27}" in tex and "Matrix(" not in tex


def test_at_moments_is_at_prior_and_checks_shapes():
    Hm, ms, mu, S = saddle_hessian(MultiHeadModel(2, 3, 2, "softmax-1"))
    mean, cov = np.array([0.7, -0.4]), np.array([[1.1, 0.3], [0.3, 0.5]])
    by_prior = at_prior(Hm, GaussianPrior(mean, cov), mu, S)
    assert np.allclose(at_moments(Hm, mean, cov + np.outer(mean, mean), mu, S), by_prior,
                       rtol=1e-14, atol=1e-15)
    assert not np.allclose(at_moments(Hm, mean, cov, mu, S), by_prior)     # Cov is not S
    with pytest.raises(ValueError, match=r"allowed: \(2,\) and \(2, 2\)"):
        at_moments(Hm, [0.0], cov, mu, S)


def test_saddle_hessian_is_derived_once_and_each_call_gets_its_own_matrix():
    md = MultiHeadModel(2, 2, 1)
    first, ms, _, S = saddle_hessian(md)
    kept = first.copy()
    first[0, 0] = 123
    ms.append("x")
    S[0, 0] = 0
    again, ms2, _, S2 = saddle_hessian(MultiHeadModel(2, 2, 1))           # an equal model
    assert again == kept and len(ms2) == 2 and str(S2[0, 0]) == "S[0,0]"


class _Weights:
    """Softmax weights as a callable that cannot be hashed (it defines __eq__ only)."""

    def __eq__(self, other):
        return isinstance(other, _Weights)

    def __call__(self, s, v):
        return [[sp.exp(x) / sum(sp.exp(y) for y in row) for x in row] for row in s]


def test_an_unhashable_activation_still_gets_its_saddle_hessian():
    md = MultiHeadModel(2, 2, 1, Activation("softmax-unhashable", _Weights()))
    with pytest.raises(TypeError):
        hash(md)
    assert saddle_hessian(md)[0] == saddle_hessian(MultiHeadModel(2, 2, 1))[0]
