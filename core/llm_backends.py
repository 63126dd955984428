"""Model-backed LLM backends behind the protocol of `pipelines/llm.py`: local `transformers`, offline batched
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

    Sampling is seeded per request and completion (from the request's cache key), so answers are reproducible
    on the same machine and library versions. Structured outputs are not constrained here: the schema is
    appended to the system prompt and the answer is checked after decoding.
    """

    def __init__(self, model_path: str | Path, *, device: str = "cpu") -> None:
        path = Path(model_path)
        if not path.is_dir():
            msg = f"{path}: transformers backend: model folder does not exist"
            raise InputError(msg)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path).to(device).eval()
        self.device = device
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
        import torch

        results = []
        for request in requests:
            key = request.cache_key(self.name)
            encoded = self.tokenizer(self._prompt(request), return_tensors="pt").to(self.device)
            texts, reasons, generated = [], [], 0
            for index in range(request.sampling.n):
                torch.manual_seed(stable_seed(f"{key}|{index}") % 2**63)
                sample = request.sampling.temperature > 0
                with torch.no_grad():
                    output = self.model.generate(
                        **encoded,
                        max_new_tokens=request.sampling.max_tokens,
                        do_sample=sample,
                        temperature=request.sampling.temperature if sample else None,
                        top_p=request.sampling.top_p if sample else None,
                        pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                    )
                new = output[0, encoded["input_ids"].shape[1] :]
                generated += len(new)
                text = self.tokenizer.decode(new, skip_special_tokens=True)
                for stop in request.sampling.stop:
                    text = text.split(stop)[0]
                texts.append(text)
                reasons.append("length" if len(new) >= request.sampling.max_tokens else "stop")
            results.append(
                GenResult(
                    key=key,
                    texts=tuple(texts),
                    finish_reasons=tuple(reasons),
                    schema_valid=_validity(texts, request),
                    prompt_tokens=int(encoded["input_ids"].shape[1]),
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
                    return json.loads(response.read())
            except urllib.error.HTTPError as error:
                if error.code not in (429, 500, 502, 503, 504) or attempt == self.retries:
                    detail = error.read().decode(errors="replace")[:200]
                    msg = f"{url}: HTTP {error.code}: {detail}"
                    raise BackendError(msg) from None
            except (urllib.error.URLError, TimeoutError) as error:
                if attempt == self.retries:
                    msg = f"{url}: cannot reach the server ({getattr(error, 'reason', error)})"
                    raise BackendError(msg) from None
            time.sleep(min(2.0**attempt, 30.0))
        raise AssertionError("unreachable")

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        results = []
        for request in requests:
            answer = self._post(self._body(request))
            try:
                choices = answer["choices"]
                texts = [c["message"].get("content") or "" for c in choices]
                reasons = [c.get("finish_reason") or "stop" for c in choices]
            except (KeyError, TypeError, AttributeError):
                msg = f"{self.base_url}: the answer is not a chat completion: {json.dumps(answer)[:200]}"
                raise BackendError(msg) from None
            usage = answer.get("usage") or {}
            results.append(
                GenResult(
                    key=request.cache_key(self.name),
                    texts=tuple(texts),
                    finish_reasons=tuple(reasons),
                    schema_valid=_validity(texts, request),
                    prompt_tokens=int(usage.get("prompt_tokens", 0)),
                    completion_tokens=int(usage.get("completion_tokens", 0)),
                )
            )
        return results

    def close(self) -> None:
        """Nothing to release (one connection per request)."""


def make_backend(
    kind: BackendKind,
    *,
    scripted: LLMBackend,
    model: str | None = None,
    base_url: str | None = None,
    cache: str | Path | None = None,
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
            backend = TransformersBackend(model)
    else:
        if not (model and base_url):
            msg = "llm backend `openai` needs `model` and `base_url` (e.g. http://localhost:8000/v1)"
            raise InputError(msg)
        backend = OpenAIBackend(base_url=base_url, model=model)
    return CachedBackend(backend, ResponseCache(cache)) if cache else backend
