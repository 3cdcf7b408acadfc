"""What Dohmatob's Fig. 2 claim simulates (``verification/claims/dohmatob2025/fig2.py``
judges): PGD on the empirical risk in R^d, recording the overlaps and the test risk (R̄ along
the trajectory is ``risk.rbar_values``)."""

from __future__ import annotations

from ..base import simulation

__all__ = ["fig2_pgd"]


@simulation(seeded=False)
def fig2_pgd(sim, item):
    """One PGD run on the empirical risk (``numerics.softmax_attention.pgd_empirical``) with
    the link, the statement's settings (d, L, β, γ, ε, step, n_train, n_test), the number of
    steps, the record interval and the seed of ``item``: its records (step, overlaps, train
    and test risk, test standard error) as arrays."""
    import torch

    from numerics.softmax_attention import pgd_empirical
    torch_link = {"linear": lambda t: t, "quadratic": lambda t: t**2, "relu": torch.relu}[item["link"]]
    return pgd_empirical(item["d"], item["L"], item["beta"], item["gamma"], item["eps"], torch_link,
                         item["n_train"], item["n_test"], item["step"], item["n_steps"],
                         item["record_every"], seed=item["seed"])
