"""Model-backed LLM backends behind the protocol of `core/llm.py`: local `transformers`, offline batched
`vllm` (GPU; the `[gpu]` extra) and `openai` (any OpenAI-compatible server, e.g. `vllm serve`); the last two
constrain decoding to the request's JSON schema.

All import their heavy dependencies lazily and return `schema_valid` flags like the scripted backend, so a
domain treats a model that writes invalid output exactly as it treats a failing scripted policy: the row is
rejected with the reason. `make_backend(kind, ...)` builds one from a config block and wraps it in the response cache.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PositiveInt, model_validator

from synth.core.config import StrictModel
from synth.core.errors import InputError, MissingDependencyError, SynthError
from synth.core.llm import CachedBackend, GenRequest, GenResult, LLMBackend, ResponseCache, schema_errors
from synth.core.records import stable_seed

BackendKind = Literal["scripted", "transformers", "vllm", "openai"]


class BackendError(SynthError):
    """A model backend failed (server unreachable, HTTP error, unusable answer)."""

    exit_code = 1


def _validity(texts: Sequence[str], request: GenRequest) -> tuple[bool, ...] | None:
    if request.schema is None:
        return None
    return tuple(schema_errors(text, request.schema) is None for text in texts)


class TransformersBackend:
    """A local Hugging Face causal LM (CPU or GPU); the chat template renders messages and tools.

    Requests with the same sampling settings are answered `batch_size` at a time: left-padded prompts, one
    `generate` call per batch (`num_return_sequences=n`); `generate_calls` counts them. Sampling is seeded
    from the cache keys of the batch's requests, so the same requests in the same batches give the same answers
    on the same machine and library versions (greedy answers do not depend on the batch). Structured outputs
    are not constrained here: the schema is appended to the system prompt and the answer is checked after
    decoding.
    """

    def __init__(self, model_path: str | Path, *, device: str = "cpu", batch_size: int = 8) -> None:
        path = Path(model_path)
        if not (path / "config.json").is_file():
            msg = f"{path}: transformers backend: not a local model folder (no config.json)"
            raise InputError(msg)
        if batch_size < 1:
            msg = f"`batch_size` must be at least 1, got {batch_size}"
            raise ValueError(msg)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(path).to(device).eval()
        self.device = device
        self.batch_size = batch_size
        self.generate_calls = 0
        self.name = f"transformers:{path.resolve().name}"

    def _prompt(self, request: GenRequest) -> str:
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        if request.schema is not None:
            note = "Answer with JSON valid under this schema:\n" + json.dumps(request.schema, sort_keys=True)
            messages = [{"role": "system", "content": note}, *messages]
        if getattr(self.tokenizer, "chat_template", None):
            tools = [dict(t) for t in request.tools] or None
            return self.tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
        return "\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\nassistant:"

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        groups: dict[tuple[Any, ...], list[int]] = {}
        for index, request in enumerate(requests):
            s = request.sampling
            groups.setdefault((s.max_tokens, s.temperature, s.top_p, s.n, s.stop), []).append(index)
        results: list[GenResult | None] = [None] * len(requests)
        for indices in groups.values():
            for start in range(0, len(indices), self.batch_size):
                chunk = indices[start : start + self.batch_size]
                for index, result in zip(chunk, self._generate_batch([requests[i] for i in chunk]), strict=True):
                    results[index] = result
        return [result for result in results if result is not None]

    def _generate_batch(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        """One `generate` call for requests that share their sampling settings."""
        import torch

        sampling = requests[0].sampling
        keys = [request.cache_key(self.name) for request in requests]
        encoded = self.tokenizer([self._prompt(r) for r in requests], return_tensors="pt", padding=True).to(self.device)
        sample = sampling.temperature > 0
        copies = sampling.n if sample else 1
        torch.manual_seed(stable_seed("|".join(keys)) % 2**63)
        with torch.no_grad():
            output = self.model.generate(
                **encoded,
                max_new_tokens=sampling.max_tokens,
                do_sample=sample,
                temperature=sampling.temperature if sample else None,
                top_p=sampling.top_p if sample else None,
                num_return_sequences=copies,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        self.generate_calls += 1
        width = encoded["input_ids"].shape[1]
        stops = {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id}
        results = []
        for row, (request, key) in enumerate(zip(requests, keys, strict=True)):
            texts, reasons, generated = [], [], 0
            for copy in range(sampling.n):
                new = output[row * copies + copy % copies, width:].tolist()
                ended = next((i for i, token in enumerate(new) if token in stops), None)
                generated += len(new) if ended is None else ended
                text = self.tokenizer.decode(new if ended is None else new[:ended], skip_special_tokens=True)
                for stop in sampling.stop:
                    text = text.split(stop)[0]
                texts.append(text)
                reasons.append("length" if ended is None else "stop")
            results.append(
                GenResult(
                    key=key,
                    texts=tuple(texts),
                    finish_reasons=tuple(reasons),
                    schema_valid=_validity(texts, request),
                    prompt_tokens=int(encoded["attention_mask"][row].sum()),
                    completion_tokens=generated,
                )
            )
        return results

    def close(self) -> None:
        """Drop the model."""
        del self.model


def vllm_sampling_kwargs(request: GenRequest, *, seed: int) -> dict[str, Any]:
    """Keyword arguments of `vllm.SamplingParams` for a request (JSON schema → `structured_outputs.json`)."""
    sampling = request.sampling
    kwargs: dict[str, Any] = {
        "n": sampling.n,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_tokens,
        "seed": sampling.seed if sampling.seed is not None else seed,
        "stop": list(sampling.stop) or None,
    }
    if request.schema is not None:
        kwargs["structured_outputs"] = {"json": dict(request.schema)}
    return kwargs


class VLLMBackend:
    """Offline batched generation with vLLM (needs CUDA): one `LLM.chat` call per batch of requests.

    Each request gets a seed derived from its cache key, so answers are reproducible for a given vLLM version
    and GPU; structured outputs use vLLM's `StructuredOutputsParams(json=schema)`.
    """

    def __init__(self, model: str, **engine: Any) -> None:
        from vllm import LLM

        self.llm = LLM(model=model, seed=0, **engine)
        self.name = f"vllm:{model}"

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        params = []
        for request in requests:
            seed = int(request.cache_key(self.name)[:12], 16)
            kwargs = vllm_sampling_kwargs(request, seed=seed)
            if "structured_outputs" in kwargs:
                kwargs["structured_outputs"] = StructuredOutputsParams(**kwargs["structured_outputs"])
            params.append(SamplingParams(**kwargs))
        conversations = [[{"role": m.role, "content": m.content} for m in r.messages] for r in requests]
        outputs = self.llm.chat(conversations, sampling_params=params, use_tqdm=False)
        results = []
        for request, output in zip(requests, outputs, strict=True):
            texts = [c.text for c in output.outputs]
            results.append(
                GenResult(
                    key=request.cache_key(self.name),
                    texts=tuple(texts),
                    finish_reasons=tuple(c.finish_reason or "stop" for c in output.outputs),
                    schema_valid=_validity(texts, request),
                    prompt_tokens=len(output.prompt_token_ids or ()),
                    completion_tokens=sum(len(c.token_ids) for c in output.outputs),
                )
            )
        return results

    def close(self) -> None:
        """Drop the engine (frees the GPU when nothing else holds it)."""
        del self.llm


def _json_answer(raw: bytes, url: str) -> dict[str, Any]:
    """The server's JSON object, or a one-line `BackendError` quoting the start of what it sent instead."""
    try:
        answer = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        shown = raw[:120].decode(errors="replace")
        msg = f"{url}: the server did not answer JSON ({error}): {shown!r}"
        raise BackendError(msg) from None
    if not isinstance(answer, dict):
        msg = f"{url}: the server answered a JSON {type(answer).__name__}, not an object"
        raise BackendError(msg)
    return answer


@dataclass
class OpenAIBackend:
    """Chat completions from an OpenAI-compatible server (`vllm serve`, llama.cpp, hosted APIs).

    Structured outputs go as `response_format: {"type": "json_schema", ...}`; tools as `tools`. Transient
    failures (connection errors, 429, 5xx) are retried with exponential backoff; anything else is one error line.
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0
    retries: int = 3
    concurrency: int = 1

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def _body(self, request: GenRequest) -> dict[str, Any]:
        sampling = request.sampling
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
            "n": sampling.n,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        if request.schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": dict(request.schema), "strict": True},
            }
        if request.tools:
            body["tools"] = [dict(tool) for tool in request.tools]
        return body

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        url = self.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if os.environ.get(self.api_key_env):
            headers["Authorization"] = f"Bearer {os.environ[self.api_key_env]}"
        data = json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            try:
                with urllib.request.urlopen(
                    urllib.request.Request(url, data=data, headers=headers), timeout=self.timeout
                ) as response:
                    raw = response.read()
            except urllib.error.HTTPError as error:
                if error.code not in (429, 500, 502, 503, 504) or attempt == self.retries:
                    detail = error.read().decode(errors="replace")[:200]
                    msg = f"{url}: HTTP {error.code}: {detail}"
                    raise BackendError(msg) from None
            except (urllib.error.URLError, TimeoutError) as error:
                if attempt == self.retries:
                    msg = f"{url}: cannot reach the server ({getattr(error, 'reason', error)})"
                    raise BackendError(msg) from None
            else:
                return _json_answer(raw, url)
            time.sleep(min(2.0**attempt, 30.0))
        raise AssertionError("unreachable")

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        """One chat completion per request, up to `concurrency` in flight; answers in request order."""
        if self.concurrency <= 1 or len(requests) <= 1:
            return [self._answer(request) for request in requests]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            return list(pool.map(self._answer, requests))

    def _answer(self, request: GenRequest) -> GenResult:
        answer = self._post(self._body(request))
        try:
            choices = answer["choices"]
            texts = [c["message"].get("content") or "" for c in choices]
            reasons = [c.get("finish_reason") or "stop" for c in choices]
        except (KeyError, TypeError, AttributeError):
            msg = f"{self.base_url}: the answer is not a chat completion: {json.dumps(answer)[:200]}"
            raise BackendError(msg) from None
        if not all(isinstance(t, str) for t in texts) or len(texts) != request.sampling.n:
            msg = f"{self.base_url}: the answer has {len(texts)} text choice(s), expected {request.sampling.n}"
            raise BackendError(msg)
        usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        return GenResult(
            key=request.cache_key(self.name),
            texts=tuple(texts),
            finish_reasons=tuple(reasons),
            schema_valid=_validity(texts, request),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
        )

    def close(self) -> None:
        """Nothing to release (one connection per request)."""


class LLMBackendConfig(StrictModel):
    """A config block choosing a backend: `scripted` (the domain's policy), `transformers`, `vllm` or `openai`."""

    backend: BackendKind = "scripted"
    model: str | None = Field(None, description="model folder or id (transformers, vllm), served model name (openai)")
    base_url: str | None = Field(None, description="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    cache: str | None = Field(None, description="SQLite response cache (reruns answer from it)")
    batch_size: PositiveInt = Field(8, description="transformers: requests per generate call")
    concurrency: PositiveInt = Field(1, description="openai: requests in flight")

    @model_validator(mode="after")
    def _complete(self) -> LLMBackendConfig:
        if self.backend in ("transformers", "vllm") and not self.model:
            raise ValueError(f"backend `{self.backend}` needs `model` (a local model folder or id)")
        if self.backend == "openai" and not (self.model and self.base_url):
            raise ValueError("backend `openai` needs `model` and `base_url`")
        return self

    def build(self, *, scripted: LLMBackend) -> LLMBackend:
        """The backend this block describes (cached when `cache` is set)."""
        return make_backend(
            self.backend,
            scripted=scripted,
            model=self.model,
            base_url=self.base_url,
            cache=self.cache,
            batch_size=self.batch_size,
            concurrency=self.concurrency,
        )


def make_backend(
    kind: BackendKind,
    *,
    scripted: LLMBackend,
    model: str | None = None,
    base_url: str | None = None,
    cache: str | Path | None = None,
    batch_size: int = 8,
    concurrency: int = 1,
) -> LLMBackend:
    """The backend of a config block: the domain's scripted policy, a local model, or a server; cached if asked."""
    backend: LLMBackend
    if kind == "scripted":
        backend = scripted
    elif kind in ("transformers", "vllm"):
        if not model:
            msg = f"llm backend `{kind}` needs `model` (a local model folder or model id)"
            raise InputError(msg)
        if kind == "vllm":
            if importlib.util.find_spec("vllm") is None:
                msg = "llm backend `vllm` needs the `vllm` package and a GPU: pip install 'synth[gpu]'"
                raise MissingDependencyError(msg)
            backend = VLLMBackend(model)
        else:
            backend = TransformersBackend(model, batch_size=batch_size)
    else:
        if not (model and base_url):
            msg = "llm backend `openai` needs `model` and `base_url` (e.g. http://localhost:8000/v1)"
            raise InputError(msg)
        backend = OpenAIBackend(base_url=base_url, model=model, concurrency=concurrency)
    return CachedBackend(backend, ResponseCache(cache)) if cache else backend
