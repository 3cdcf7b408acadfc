"""Claim checks, one module per paper."""
from . import dohmatob2025, marion2025  # noqa: F401
