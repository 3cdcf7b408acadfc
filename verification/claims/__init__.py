"""Claim checks, one module per paper."""
from . import (dohmatob2025, marion2025, sagitova2026, sagitova2026_dynamics,  # noqa: F401
               sagitova2026_sec4)
