import json

import pytest

from synth.core.llm import (
    CachedBackend,
    GenRequest,
    LLMBackend,
    Message,
    ResponseCache,
    SamplingParams,
    ScriptedBackend,
    schema_errors,
)

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


def add_policy(request, rng):
    """Answer `a+b` questions; with temperature > 0 sometimes answer off by one (a noisy 'model')."""
    a, b = (int(x) for x in request.messages[-1].content.split("+"))
    noise = int(rng.integers(-1, 2)) if request.sampling.temperature > 0 else 0
    return json.dumps({"answer": a + b + noise})


def request(text="2+3", **sampling):
    return GenRequest(model="m", messages=(Message("user", text),), sampling=SamplingParams(**sampling), schema=SCHEMA)


def test_cache_key_covers_every_field_that_changes_the_answer():
    base = request()
    assert base.cache_key("scripted") == request().cache_key("scripted")
    variants = [
        request("2+4"),
        request(temperature=0.5),
        request(max_tokens=10),
        request(seed=1),
        GenRequest(model="other", messages=base.messages, schema=SCHEMA),
        GenRequest(model="m", messages=base.messages, schema=None),
    ]
    keys = {v.cache_key("scripted") for v in variants} | {base.cache_key("scripted"), base.cache_key("vllm")}
    assert len(keys) == len(variants) + 2


def test_scripted_backend_is_deterministic_and_samples_differ():
    backend = ScriptedBackend(add_policy)
    assert isinstance(backend, LLMBackend)
    [greedy] = backend.generate([request()])
    assert json.loads(greedy.texts[0]) == {"answer": 5} and greedy.schema_valid == (True,)
    [sampled] = backend.generate([request(temperature=1.0, n=16)])
    assert sampled.texts == backend.generate([request(temperature=1.0, n=16)])[0].texts
    assert len(set(sampled.texts)) > 1


def test_schema_validation_flags_bad_outputs_without_hiding_them():
    backend = ScriptedBackend(lambda req, rng: '{"answer": "five"}')
    [result] = backend.generate([request()])
    assert result.texts == ('{"answer": "five"}',) and result.schema_valid == (False,)
    assert "answer" in schema_errors(result.texts[0], SCHEMA)
    assert schema_errors("{not json", SCHEMA).startswith("not JSON")


def test_cached_backend_answers_each_distinct_request_once(tmp_path):
    calls = []

    def counting(req, rng):
        calls.append(req.messages[-1].content)
        return add_policy(req, rng)

    cache = ResponseCache(tmp_path / "cache.sqlite")
    backend = CachedBackend(ScriptedBackend(counting), cache)
    first = backend.generate([request("1+1"), request("2+2"), request("1+1")])
    assert [json.loads(r.texts[0])["answer"] for r in first] == [2, 4, 2]
    assert calls == ["1+1", "2+2"]  # a request repeated within a batch is answered once
    again = CachedBackend(ScriptedBackend(counting), ResponseCache(tmp_path / "cache.sqlite"))
    second = again.generate([request("1+1"), request("2+2")])
    assert [r.texts for r in second] == [first[0].texts, first[1].texts]
    assert all(r.cached for r in second) and again.hits == 2 and len(calls) == 2
    assert len(cache) == 2


def test_sampling_params_are_checked():
    with pytest.raises(ValueError, match="`n` must be at least 1"):
        SamplingParams(n=0)
