"""Symbolic gradients, Hessians and the Gram-matrix flow against torch autograd."""

import numpy as np
import torch
from hypothesis import given

from numerics import autograd_flow, compiled
from theory.models.marion2025 import MODEL
from tests.helpers import marion_params, q_of, unit_overlaps


@given(marion_params(), unit_overlaps())
def test_symbolic_gradient_and_hessian_match_autograd(p, ov):
    cmt = compiled(MODEL, "torch")
    q = torch.tensor(q_of(ov), requires_grad=True)
    g_auto = torch.autograd.grad(cmt.risk(p, q), q, create_graph=True)[0]
    H_auto = torch.stack([torch.autograd.grad(g_auto[i], q, retain_graph=True)[0]
                          for i in range(len(q))])
    cm = compiled(MODEL)
    np.testing.assert_allclose(cm.gradient(p, q_of(ov)), g_auto.detach().numpy(),
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(cm.hessian(p, q_of(ov)), H_auto.detach().numpy(),
                               rtol=1e-7, atol=1e-9)


@given(marion_params(), unit_overlaps())
def test_gram_chain_rule_flow_equals_projected_autograd_flow(p, ov):
    """The derived overlap flow = −(projected gradient) in R^d computed by autograd."""
    np.testing.assert_allclose(compiled(MODEL).rhs(p, q_of(ov)), autograd_flow(MODEL, p, ov),
                               rtol=1e-8, atol=1e-10)


def test_flow_jacobian_matches_finite_differences():
    cm = compiled(MODEL)
    p = dict(d=12, L=3, lam=0.6, gamma=0.9, eps=0.2)
    q = np.array([0.3, -0.2, 0.1, 0.05, -0.1])
    J = cm.jacobian(p, q)
    h = 1e-6
    fd = np.stack([(cm.rhs(p, q + h * e) - cm.rhs(p, q - h * e)) / (2 * h) for e in np.eye(5)], 1)
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-7)
