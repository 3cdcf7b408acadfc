"""What Dohmatob's claims simulate (``verification/claims/dohmatob2025`` judges)."""
