"""What Sagitova et al.'s claims simulate (``verification/claims/sagitova2026`` judges), one module
per section of the paper (``sec3_landscape``, ``sec3_dynamics``, ``sec3_specialization``,
``sec4_bayes``, ``sec4_expressivity``, ``sec4_trained_heads``) and ``common`` for what they
share. Every simulation gets its seeds in its item (derived by the claim from the run seed and
the setting), so all are declared unseeded; the wrong models of the claims' declared mutations
that change what is simulated are defined here too."""
