"""Hypothesis profiles, chosen by HYPOTHESIS_PROFILE (default: 'ci' when CI is set, else
'dev'). 'ci' is derandomised (deterministic) with few examples; 'thorough' explores more."""

import os

from hypothesis import HealthCheck, settings
import pytest

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=8,
                          suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=15,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", deadline=None, max_examples=200,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def forget_claims():
    """Claims a test registers (a user's claims file, a plugin) are unregistered after it, so
    that no later test sees them; the built-in ones are registered first, so that they stay."""
    from verification.catalogue import load_all
    from verification.declare import REGISTRY
    load_all()
    before = dict(REGISTRY)
    yield
    REGISTRY.clear()
    REGISTRY.update(before)


def pytest_configure(config):
    """Under pytest-xdist each worker has about one core: one thread each for torch and the
    BLAS, so that the workers do not oversubscribe the cores (the claims' own tasks already run
    on one torch thread: ``verification.engine.single_thread``)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        import torch
        torch.set_num_threads(1)
