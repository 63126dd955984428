"""Verifiers (score rows, never drop) and generic filters (drop rows with a reason)."""
