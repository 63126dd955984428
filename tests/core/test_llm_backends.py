"""The model-backed backends: the OpenAI-compatible client against a local server speaking the protocol, and the
transformers backend on a tiny local model; both flag schema-invalid answers instead of hiding them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from synth.core.llm import GenRequest, Message, SamplingParams
from synth.core.llm_backends import BackendError, LLMBackendConfig, OpenAIBackend, TransformersBackend
from synth.core.steps import ShardContext
from synth.generators.toolforge.generator import LLMSettings, ToolForgeGenerator
from synth.generators.toolforge.llm_writer import scripted_writer_backend

SCRIPTED = scripted_writer_backend()


class _ChatServer(BaseHTTPRequestHandler):
    """`POST /v1/chat/completions` answered by the scripted writer policy; records each request body."""

    bodies: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        if body["model"] == "garbage":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"<html>not json</html>")
            return
        if body["model"] == "missing":
            self.send_response(404)
            self.end_headers()
            self.wfile.write(b'{"error": "model not found"}')
            return
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
        request = GenRequest(
            model=body["model"],
            messages=tuple(Message(m["role"], m["content"]) for m in body["messages"]),
            sampling=SamplingParams(temperature=body["temperature"], max_tokens=body["max_tokens"], n=body["n"]),
            schema=schema,
        )
        (result,) = SCRIPTED.generate([request])
        answer = {
            "choices": [
                {"message": {"role": "assistant", "content": t}, "finish_reason": "stop"} for t in result.texts
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 11},
        }
        payload = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def _rows(**settings: object) -> list[dict]:
    generator = ToolForgeGenerator(name="t", limit=4, **settings)  # type: ignore[arg-type]
    ctx = ShardContext(seed=2, shard_index=0, num_shards=1, config_hash="x")
    return [row for batch in generator.generate(ctx) for row in batch.rows]


def test_toolforge_llm_writer_through_an_openai_server_matches_the_scripted_writer(server: str) -> None:
    _ChatServer.bodies.clear()
    llm = LLMSettings(LLMBackendConfig(backend="openai", model="writer-model", base_url=server))
    served = _rows(writer="llm", llm=llm)
    scripted = _rows()
    assert len(served) == len(scripted) == 8
    assert [r["messages"] for r in served] == [r["messages"] for r in scripted]
    assert all(r["llm_calls"] == 1 for r in served)
    body = _ChatServer.bodies[0]
    assert body["model"] == "writer-model" and body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["messages"]


def test_http_errors_are_one_line_backend_errors(server: str) -> None:
    backend = OpenAIBackend(base_url=server, model="missing", retries=0)
    with pytest.raises(BackendError, match=r"/chat/completions: HTTP 404: .*model not found"):
        backend.generate([GenRequest(model="missing", messages=(Message("user", "hi"),))])
    garbage = OpenAIBackend(base_url=server, model="garbage", retries=0)
    with pytest.raises(BackendError, match=r"/chat/completions: the server did not answer JSON .*<html>not json"):
        garbage.generate([GenRequest(model="garbage", messages=(Message("user", "hi"),))])
    closed = OpenAIBackend(base_url="http://127.0.0.1:9/v1", model="m", retries=0, timeout=2)
    with pytest.raises(BackendError, match="cannot reach the server"):
        closed.generate([GenRequest(model="m", messages=(Message("user", "hi"),))])


@pytest.fixture(scope="module")
def tiny_chat_model(tmp_path_factory: pytest.TempPathFactory):
    """A tiny random Llama with a local BPE tokenizer and the tool chat template, saved like any HF model."""
    pytest.importorskip("transformers")
    from synth.trainers.sft.tiny import build_tiny_model, build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer(["What is 12 plus 3? The answer is 15."] * 20, vocab_size=300)
    model = build_tiny_model(tokenizer, seed=0, hidden=32, layers=1, heads=2)
    path = tmp_path_factory.mktemp("tiny-chat")
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path


def test_transformers_backend_is_seeded_and_flags_invalid_json(tiny_chat_model) -> None:
    backend = TransformersBackend(tiny_chat_model)
    request = GenRequest(
        model="tiny",
        messages=(Message("user", "What is 12 plus 3?"),),
        sampling=SamplingParams(temperature=0.8, max_tokens=8, n=2),
        schema={"type": "object", "required": ["answer"]},
    )
    first, again = backend.generate([request])[0], backend.generate([request])[0]
    assert first.texts == again.texts and len(first.texts) == 2
    assert first.schema_valid == (False, False)  # a random tiny model does not write this JSON object
    assert first.finish_reasons[0] in ("stop", "length") and first.prompt_tokens > 0


def test_toolforge_rejects_what_a_model_writer_gets_wrong(tiny_chat_model) -> None:
    generator = ToolForgeGenerator(
        name="t",
        limit=1,
        writer="llm",
        llm=LLMSettings(LLMBackendConfig(backend="transformers", model=str(tiny_chat_model)), max_tokens=16),
    )
    ctx = ShardContext(seed=2, shard_index=0, num_shards=1, config_hash="x")
    batches = list(generator.generate(ctx))
    rejections = [r for b in batches for r in b.rejections]
    assert not any(b.rows for b in batches) and len(rejections) == 2
    assert {r.reason for r in rejections} == {"writer:invalid_output"}
    assert all(r.detail.startswith(f"transformers:{tiny_chat_model.name}: ") for r in rejections), rejections


def test_vllm_adapter_maps_sampling_and_schema_without_a_gpu() -> None:
    from synth.core.llm_backends import vllm_sampling_kwargs

    schema = {"type": "object", "required": ["messages"]}
    request = GenRequest(
        model="m",
        messages=(Message("user", "hi"),),
        sampling=SamplingParams(temperature=0.7, top_p=0.9, max_tokens=64, n=3, stop=("</s>",)),
        schema=schema,
    )
    kwargs = vllm_sampling_kwargs(request, seed=11)
    assert kwargs == {
        "n": 3,
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 64,
        "seed": 11,
        "stop": ["</s>"],
        "structured_outputs": {"json": schema},
    }
    plain = vllm_sampling_kwargs(GenRequest(model="m", messages=(), sampling=SamplingParams(seed=5)), seed=11)
    assert plain["seed"] == 5 and plain["stop"] is None and "structured_outputs" not in plain
