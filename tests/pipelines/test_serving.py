"""`synth serve`'s app on loopback with uvicorn: the `openai` backend and a plain HTTP client against a tiny model;
size limit (413), bad requests (400), bounded queue (429), tool calls, and a cached rerun that calls nothing."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator, Sequence

import httpx
import pytest
from tiny_models import save_tiny_chat_model

from synth.core.llm import CachedBackend, GenRequest, GenResult, Message, ResponseCache, SamplingParams
from synth.core.llm_backends import OpenAIBackend, TransformersBackend
from synth.pipelines.serving import ServeSettings, create_app, serve_in_thread

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TransformersBackend:
    return TransformersBackend(save_tiny_chat_model(tmp_path_factory.mktemp("tiny")), batch_size=4)


@pytest.fixture(scope="module")
def served(tiny: TransformersBackend) -> Iterator[str]:
    with serve_in_thread(
        create_app(tiny, ServeSettings(model_name="tiny", max_body_bytes=20_000, max_tokens=16))
    ) as url:
        yield url


def _request(text: str, *, seed: int = 1) -> GenRequest:
    sampling = SamplingParams(temperature=1.0, max_tokens=8, seed=seed)
    return GenRequest(model="tiny", messages=(Message("user", text),), sampling=sampling)


def test_models_and_chat_completions_speak_openai(served: str) -> None:
    listed = httpx.get(f"{served}/models", timeout=30).json()
    assert listed["data"][0]["id"] == "tiny" and listed["object"] == "list"
    body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 6, "n": 2}
    answer = httpx.post(f"{served}/chat/completions", json=body, timeout=60).json()
    assert answer["object"] == "chat.completion" and len(answer["choices"]) == 2
    assert all(c["message"]["role"] == "assistant" for c in answer["choices"])
    assert answer["usage"]["prompt_tokens"] > 0


def test_openai_backend_against_the_server_and_a_cached_rerun_makes_no_call(served: str, tiny, tmp_path) -> None:
    client = OpenAIBackend(base_url=served, model="tiny", retries=0, concurrency=4)
    requests = [_request(f"molecule {i}", seed=i) for i in range(6)]
    before = tiny.generate_calls
    results = client.generate(requests)
    assert len(results) == 6 and all(r.texts for r in results)
    assert 1 <= tiny.generate_calls - before <= 6  # concurrent requests may share a batch
    cached = CachedBackend(client, ResponseCache(tmp_path / "cache.sqlite"))
    first = cached.generate(requests)
    calls = tiny.generate_calls
    again = CachedBackend(OpenAIBackend(base_url=served, model="tiny"), ResponseCache(tmp_path / "cache.sqlite"))
    assert [r.texts for r in again.generate(requests)] == [r.texts for r in first]
    assert tiny.generate_calls == calls and again.misses == 0 and again.hits == 6


def test_oversized_and_malformed_requests_are_refused_with_one_line(served: str) -> None:
    big = {"model": "tiny", "messages": [{"role": "user", "content": "x" * 30_000}]}
    response = httpx.post(f"{served}/chat/completions", json=big, timeout=30)
    assert response.status_code == 413 and "over 20000 bytes" in response.json()["error"]["message"]
    chunked = httpx.post(f"{served}/chat/completions", content=iter([b"{" * 15_000] * 2), timeout=30)
    assert chunked.status_code == 413  # no Content-Length: the streamed body is counted
    bad = httpx.post(f"{served}/chat/completions", content=b"{not json", timeout=30)
    assert bad.status_code == 400 and "not JSON" in bad.json()["error"]["message"]
    empty = httpx.post(f"{served}/chat/completions", json={"messages": []}, timeout=30)
    assert empty.status_code == 400 and "`messages`" in empty.json()["error"]["message"]
    role = httpx.post(f"{served}/chat/completions", json={"messages": [{"role": "robot"}]}, timeout=30)
    assert role.status_code == 400 and "messages[0]" in role.json()["error"]["message"]


class _Blocking:
    """A backend that answers only once released, answering with a tool call."""

    name = "blocking"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()

    def generate(self, requests: Sequence[GenRequest]) -> list[GenResult]:
        self.entered.set()
        self.release.wait(timeout=60)
        text = '<tool_call>\n{"name": "lookup", "arguments": {"q": "x"}}\n</tool_call>'
        return [GenResult(key=r.cache_key(self.name), texts=(text,), finish_reasons=("stop",)) for r in requests]

    def close(self) -> None:
        pass


def test_a_full_queue_answers_429_and_tool_calls_come_back_as_openai_tool_calls() -> None:
    backend = _Blocking()
    app = create_app(backend, ServeSettings(model_name="b", max_pending=1, batch_size=1))
    statuses: queue.Queue[httpx.Response] = queue.Queue()
    body = {"model": "b", "messages": [{"role": "user", "content": "hi"}]}

    urls: list[str] = []

    def post() -> None:
        statuses.put(httpx.post(f"{urls[0]}/chat/completions", json=body, timeout=60))

    threads = [threading.Thread(target=post) for _ in range(4)]
    with serve_in_thread(app) as url:
        urls.append(url)
        try:
            threads[0].start()
            assert backend.entered.wait(timeout=60)  # the first request is in the (blocked) backend
            for thread in threads[1:]:
                thread.start()
            # one of the other three waits in the queue (nothing can answer it yet); two are refused at once
            refused = [statuses.get(timeout=60) for _ in range(2)]
            for response in refused:
                assert response.status_code == 429 and "retry later" in response.json()["error"]["message"]
            backend.release.set()
            for thread in threads:
                thread.join(timeout=60)
            done = [*refused, *(statuses.get_nowait() for _ in range(2))]
        finally:
            backend.release.set()
    answered = [r.json() for r in done if r.status_code == 200]
    assert len(answered) == 2 and sorted(r.status_code for r in done) == [200, 200, 429, 429]
    choice = answered[0]["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    call = choice["message"]["tool_calls"][0]["function"]
    assert call["name"] == "lookup" and json.loads(call["arguments"]) == {"q": "x"}
