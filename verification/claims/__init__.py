"""Claim checks: one module (or, by paper section, one package) per paper."""
from . import dohmatob2025, marion2025, sagitova2026  # noqa: F401
