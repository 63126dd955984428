"""Verifiers of the Papyrus CER corpus."""

from synth.validators.papyrus.cer import CERVerifier

__all__ = ["CERVerifier"]
