"""Triton kernels, each beside its numpy/torch reference (arrive with the domains that need them)."""
