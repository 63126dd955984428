"""The LLM backend protocol, a content-keyed response cache, and the deterministic `scripted` backend.

A request carries everything that decides its answer (model, messages, sampling params, structured-output
schema, tools), so `GenRequest.cache_key` identifies a response across runs and processes. Backends that
need a GPU or a server (`vllm`, `transformers`, `openai`) implement the same protocol and import their
packages lazily.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from synth.core.records import canonical_json, stable_seed

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class SamplingParams:
    """Decoding settings; part of every cache key."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 512
    n: int = 1
    seed: int | None = None
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.n < 1:
            msg = f"`n` must be at least 1, got {self.n}"
            raise ValueError(msg)
        if self.temperature < 0:
            msg = f"`temperature` must be >= 0, got {self.temperature}"
            raise ValueError(msg)


@dataclass(frozen=True, slots=True)
class GenRequest:
    """A generation request: the model, the conversation, sampling, and an optional JSON schema for the output."""

    model: str
    messages: tuple[Message, ...]
    sampling: SamplingParams = field(default_factory=SamplingParams)
    schema: Mapping[str, Any] | None = None
    tools: tuple[Mapping[str, Any], ...] = ()

    def cache_key(self, backend: str) -> str:
        """sha256 over backend, model, messages, sampling, schema and tools (key order never matters)."""
        payload = {
            "backend": backend,
            "model": self.model,
            "messages": [asdict(m) for m in self.messages],
            "sampling": asdict(self.sampling),
            "schema": self.schema,
            "tools": list(self.tools),
        }
        return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class GenResult:
    """The `n` completions of one request."""

    key: str
    texts: tuple[str, ...]
    finish_reasons: tuple[str, ...]
    schema_valid: tuple[bool, ...] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False

    def to_json(self) -> str:
        """Serialise for the cache."""
        return json.dumps(asdict(self) | {"cached": False}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> GenResult:
        """Rebuild a result read from the cache."""
        data = json.loads(text)
        valid = data["schema_valid"]
        return cls(
            key=data["key"],
            texts=tuple(data["texts"]),
            finish_reasons=tuple(data["finish_reasons"]),
            schema_valid=tuple(valid) if valid is not None else None,
            prompt_tokens=data["prompt_tokens"],
            completion_tokens=data["completion_tokens"],
            cached=True,
        )


@runtime_checkable
class LLMBackend(Protocol):
    """What every backend provides: a name and batched generation."""

    name: str

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        """Answer `requests` in order."""
        ...

    def close(self) -> None:
        """Release models, processes or connections."""
        ...


class ResponseCache:
    """A SQLite table of results by cache key; safe to share between threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, result TEXT NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=30)
            connection.execute("PRAGMA journal_mode=WAL")
            self._local.connection = connection
        return connection

    def get(self, key: str) -> GenResult | None:
        """The cached result for `key`, if any."""
        row = self._connect().execute("SELECT result FROM responses WHERE key = ?", (key,)).fetchone()
        return GenResult.from_json(row[0]) if row else None

    def put(self, result: GenResult) -> None:
        """Store `result` under its key (first writer wins)."""
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO responses (key, result) VALUES (?, ?)", (result.key, result.to_json()))

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0]


class CachedBackend:
    """Wrap a backend so each distinct request is answered once and then served from the cache."""

    def __init__(self, backend: LLMBackend, cache: ResponseCache) -> None:
        self.backend = backend
        self.cache = cache
        self.name = backend.name
        self.hits = 0
        self.misses = 0

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        keys = [request.cache_key(self.name) for request in requests]
        results: list[GenResult | None] = [self.cache.get(key) for key in keys]
        missing: dict[str, list[int]] = {}
        for index, result in enumerate(results):
            if result is None:
                missing.setdefault(keys[index], []).append(index)
        self.hits += len(requests) - sum(len(indices) for indices in missing.values())
        self.misses += len(missing)
        if missing:
            fresh = self.backend.generate([requests[indices[0]] for indices in missing.values()])
            for indices, result in zip(missing.values(), fresh, strict=True):
                self.cache.put(result)
                for index in indices:
                    results[index] = result
        return [result for result in results if result is not None]

    def close(self) -> None:
        self.backend.close()


def schema_errors(text: str, schema: Mapping[str, Any]) -> str | None:
    """None if `text` is JSON valid under `schema`, else a one-line reason."""
    import jsonschema

    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return f"not JSON: {error.msg} at char {error.pos}"
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        return f"{where}: {error.message}"
    return None


ScriptedPolicy = Callable[[GenRequest, np.random.Generator], str]


class ScriptedBackend:
    """A deterministic programmatic policy standing in for a model (the default backend in tests and on CPU).

    The policy is a real algorithm of its domain (e.g. a heuristic solver writing its answer), called once per
    completion with a generator seeded from the request's cache key and the completion index, so the same
    request always gets the same answers, and `n > 1` gets distinct samples. Outputs are returned as the
    policy wrote them, valid or not, with `schema_valid` flags, so verifiers see real failures.
    """

    def __init__(self, policy: ScriptedPolicy, *, name: str = "scripted") -> None:
        self.policy = policy
        self.name = name

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        return [self._answer(request) for request in requests]

    def _answer(self, request: GenRequest) -> GenResult:
        key = request.cache_key(self.name)
        texts, reasons, valid = [], [], []
        for index in range(request.sampling.n):
            text = self.policy(request, np.random.Generator(np.random.PCG64(stable_seed(f"{key}|{index}"))))
            reason = "stop"
            if len(text.split()) > request.sampling.max_tokens:
                text = " ".join(text.split()[: request.sampling.max_tokens])
                reason = "length"
            texts.append(text)
            reasons.append(reason)
            valid.append(schema_errors(text, request.schema) is None if request.schema is not None else True)
        prompt_tokens = sum(len(m.content.split()) for m in request.messages)
        return GenResult(
            key=key,
            texts=tuple(texts),
            finish_reasons=tuple(reasons),
            schema_valid=tuple(valid) if request.schema is not None else None,
            prompt_tokens=prompt_tokens,
            completion_tokens=sum(len(t.split()) for t in texts),
        )

    def close(self) -> None:
        """Nothing to release."""
