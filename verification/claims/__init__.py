"""Claim checks, one module per paper."""
from . import marion2025  # noqa: F401
