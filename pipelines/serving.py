"""`synth serve`: an OpenAI-compatible chat server (`/v1/chat/completions`, `/v1/models`) over any LLM backend.

Requests are read whole up to `max_body_bytes` (413 beyond), validated (400 with one line otherwise), and queued;
one worker drains the queue into batches of up to `batch_size` requests, each answered by one backend call (the
transformers backend then runs one `generate` per batch), so concurrent clients share forward passes without a
batching timer. At most `max_pending` requests wait; more get 429. Tool calls in an answer (`<tool_call>` JSON
blocks) come back as OpenAI `tool_calls` with JSON-string arguments. Bound to 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import Request

from synth.core.llm import GenRequest, GenResult, LLMBackend, Message, SamplingParams

TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
ROLES = ("system", "user", "assistant", "tool")


class RequestError(ValueError):
    """A request the server refuses with 400 (the message says which field)."""


@dataclass(frozen=True)
class ServeSettings:
    """Limits of one server."""

    model_name: str
    max_body_bytes: int = 1_000_000
    max_pending: int = 64
    batch_size: int = 8
    max_tokens: int = 256


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: keep the text ones
        return "".join(str(p.get("text", "")) for p in value if isinstance(p, Mapping))
    if value is None:
        return ""
    msg = f"message content must be a string or a list of parts, got {type(value).__name__}"
    raise RequestError(msg)


def parse_request(body: Any, settings: ServeSettings) -> GenRequest:
    """The `GenRequest` of a chat-completions body; a `RequestError` names the first bad field."""
    if not isinstance(body, Mapping):
        raise RequestError("the body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("`messages` must be a non-empty list")
    parsed = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ROLES:
            msg = f"messages[{index}]: needs a `role` among {list(ROLES)}"
            raise RequestError(msg)
        parsed.append(Message(message["role"], _content(message.get("content"))))
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or settings.max_tokens
    stop = body.get("stop") or ()
    try:
        sampling = SamplingParams(
            temperature=float(body.get("temperature") if body.get("temperature") is not None else 1.0),
            top_p=float(body.get("top_p") if body.get("top_p") is not None else 1.0),
            max_tokens=min(int(limit), settings.max_tokens),
            n=int(body.get("n") or 1),
            seed=int(body["seed"]) if body.get("seed") is not None else None,
            stop=(stop,) if isinstance(stop, str) else tuple(str(s) for s in stop),
        )
    except (TypeError, ValueError) as error:
        raise RequestError(f"sampling: {error}") from None
    schema = None
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
    tools = tuple(t for t in body.get("tools") or () if isinstance(t, Mapping))
    return GenRequest(model=settings.model_name, messages=tuple(parsed), sampling=sampling, schema=schema, tools=tools)


def _message(text: str) -> tuple[dict[str, Any], bool]:
    """The assistant message of one completion: `tool_calls` parsed from `<tool_call>` blocks, the rest content."""
    calls = []
    for block in TOOL_CALL_BLOCK.findall(text):
        try:
            value = json.loads(block)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            arguments = value.get("arguments", {})
            calls.append(
                {
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {
                        "name": value["name"],
                        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                    },
                }
            )
    if not calls:
        return {"role": "assistant", "content": text}, False
    rest = TOOL_CALL_BLOCK.sub("", text).strip()
    return {"role": "assistant", "content": rest or None, "tool_calls": calls}, True


def completion_body(result: GenResult, settings: ServeSettings) -> dict[str, Any]:
    """The `chat.completion` object of a backend result."""
    choices = []
    for index, (text, reason) in enumerate(zip(result.texts, result.finish_reasons, strict=True)):
        message, called = _message(text)
        finish = "tool_calls" if called else ("length" if reason == "length" else "stop")
        choices.append({"index": index, "message": message, "finish_reason": finish})
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": settings.model_name,
        "choices": choices,
        "usage": {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
        },
    }


class _Batcher:
    """One worker answering queued requests in batches (module docstring)."""

    def __init__(self, backend: LLMBackend, settings: ServeSettings) -> None:
        self.backend = backend
        self.settings = settings
        self.queue: asyncio.Queue[tuple[GenRequest, asyncio.Future[GenResult]]] = asyncio.Queue(settings.max_pending)
        self.task: asyncio.Task[None] | None = None
        self.batches = 0

    def submit(self, request: GenRequest) -> asyncio.Future[GenResult]:
        """Queue `request`; raises `asyncio.QueueFull` when `max_pending` already wait."""
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._work())
        future: asyncio.Future[GenResult] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((request, future))
        return future

    async def _work(self) -> None:
        while True:
            batch = [await self.queue.get()]
            while len(batch) < self.settings.batch_size and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            try:
                results = await asyncio.to_thread(self.backend.generate, [request for request, _ in batch])
            except Exception as error:  # a backend failure answers every request of its batch with 500
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
            else:
                for (_, future), result in zip(batch, results, strict=True):
                    if not future.done():
                        future.set_result(result)
            self.batches += 1


def _error(status: int, message: str, kind: str) -> Any:
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def create_app(backend: LLMBackend, settings: ServeSettings) -> Any:
    """The FastAPI app serving `backend` under `settings.model_name`."""
    from fastapi import FastAPI

    app = FastAPI(title="synth serve", docs_url=None, redoc_url=None)
    batcher = _Batcher(backend, settings)
    app.state.batcher = batcher

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": settings.model_name, "object": "model", "owned_by": "synth"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > settings.max_body_bytes:
            return _error(413, f"request body over {settings.max_body_bytes} bytes", "request_too_large")
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > settings.max_body_bytes:
                return _error(413, f"request body over {settings.max_body_bytes} bytes", "request_too_large")
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            return _error(400, f"the body is not JSON: {error}", "invalid_request_error")
        try:
            parsed = parse_request(body, settings)
        except RequestError as error:
            return _error(400, str(error), "invalid_request_error")
        if body.get("stream"):
            return _error(400, "`stream` is not supported by synth serve", "invalid_request_error")
        try:
            future = batcher.submit(parsed)
        except asyncio.QueueFull:
            return _error(429, f"{settings.max_pending} requests already waiting; retry later", "rate_limit")
        try:
            result = await future
        except Exception as error:  # the backend failed: one line to the client
            return _error(500, f"backend error: {str(error)[:200]}", "server_error")
        return completion_body(result, settings)

    return app


def run_server(app: Any, *, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve `app` with uvicorn until interrupted."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)).run()


@contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """Serve `app` on a free loopback port in a background thread; yields the base URL (`http://…/v1`).

    The socket is bound and listening before the thread starts, so clients can connect at once (the kernel queues them).
    """
    import socket
    import threading

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
