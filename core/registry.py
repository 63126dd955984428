"""The domain registry: domains are entry points of the `synth.domains` group, loaded on first use.

A domain package declares `[project.entry-points."synth.domains"] NAME = "module:DOMAIN"` in its pyproject, so
spawned worker processes and third-party packages see it; `register_domain` adds one in this process only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import BaseModel

from synth.core.errors import ConfigError
from synth.core.steps import Generator, Verifier

ENTRY_POINT_GROUP = "synth.domains"


@dataclass(frozen=True)
class DomainSpec:
    """What a domain contributes: its generator config model, builders, and dataset-card defaults."""

    name: str
    summary: str
    config_model: type[BaseModel]
    build_generator: Callable[[Any], Generator]
    build_verifiers: Callable[[Any], Mapping[str, Verifier]]
    verifier_names: tuple[str, ...]
    card_defaults: Mapping[str, Any] = field(default_factory=dict)
    attribution: str = ""


_REGISTERED: dict[str, DomainSpec] = {}


def register_domain(spec: DomainSpec) -> None:
    """Register a domain defined outside synth (in this process only; process pools will not see it)."""
    _REGISTERED[spec.name] = spec


@functools.cache
def _entry_points() -> dict[str, EntryPoint]:
    return {point.name: point for point in entry_points(group=ENTRY_POINT_GROUP)}


def list_domains() -> list[str]:
    """Names of all registered domains, sorted."""
    return sorted({*_entry_points(), *_REGISTERED})


def get_domain(name: str, *, source: str = "<config>", field: str = "domain") -> DomainSpec:
    """Import and return the spec of domain `name`."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    point = _entry_points().get(name)
    if point is None:
        msg = f"{source}: field `{field}`: unknown domain {name!r}; choose from {list_domains()}"
        raise ConfigError(msg)
    spec = point.load()
    if not isinstance(spec, DomainSpec):
        msg = f"entry point {ENTRY_POINT_GROUP}:{name} ({point.value}) is not a DomainSpec"
        raise ConfigError(msg)
    return spec
