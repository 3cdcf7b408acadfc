"""What Sagitova et al.'s claims simulate (``verification/claims/sagitova2026`` judges)."""
