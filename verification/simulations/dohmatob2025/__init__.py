"""What Dohmatob's claims simulate (``verification/claims/dohmatob2025`` judges): one module per
claim module (``risk``, ``rem_constants``, ``flow_on_M``, ``stationary_points``,
``sec5_convergence``, ``fig2``), shared derivations in ``common``. Every simulation is unseeded
(``simulation(seeded=False)``): the exact ones draw nothing, the Monte Carlo ones take their
seeds from the item."""
