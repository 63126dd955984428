"""Downstream trainers that read synth datasets (arrive with the domains that need them)."""
