"""The domain registry: each domain module exposes a `DOMAIN` spec; modules load on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from synth.pipelines.errors import ConfigError
from synth.pipelines.steps import Generator, Verifier

DOMAIN_MODULES: dict[str, str] = {
    "dasa": "synth.pipelines.dasa",
    "lob": "synth.pipelines.lob",
    "marco": "synth.pipelines.marco",
    "optiscribe": "synth.pipelines.optiscribe",
    "papyrus": "synth.pipelines.papyrus",
    "toolforge": "synth.pipelines.toolforge",
}


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


def list_domains() -> list[str]:
    """Names of all registered domains, sorted."""
    return sorted({*DOMAIN_MODULES, *_REGISTERED})


def get_domain(name: str, *, source: str = "<config>") -> DomainSpec:
    """Import and return the spec of domain `name`."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    module_name = DOMAIN_MODULES.get(name)
    if module_name is None:
        msg = f"{source}: field `domain`: unknown domain {name!r}; choose from {list_domains()}"
        raise ConfigError(msg)
    module = importlib.import_module(module_name)
    spec: DomainSpec = module.DOMAIN
    return spec
