"""What Marion et al.'s claims simulate (``verification/claims/marion2025`` judges)."""
