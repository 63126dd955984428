"""Generators, one package per domain."""
