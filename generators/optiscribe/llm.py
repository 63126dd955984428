"""Challengers behind the LLM backend protocol: the request they get, and validation of what they answer.

A challenger answers an instruction with either a JSON instance spec (see `SPEC_SCHEMA`) or a model in LP
format following the families' naming conventions. `read_challenger_answer` validates either before anything
is solved: a spec must build and stay inside the instruction; LP text must parse, and a parse failure is
reported with SCIP's parser message. `scripted_challenger_policy` is the `scripted` backend's policy for this
domain: it parses the instruction with the grammar and answers with a spec drawn around the standard knobs.
`ChallengerLLMSettings` is the self-play `llm` challenger: its backend block, sampling and provenance.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synth.core.llm import GenRequest, LLMBackend, Message, SamplingParams, ScriptedBackend
from synth.core.llm_backends import LLMBackendConfig
from synth.generators.optiscribe.policy import CemPolicy
from synth.validators.optiscribe.difficulty import DIFFICULTY_BANDS
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.spec import DIFFICULTIES, FAMILIES, InstanceSpec, SpecError

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "family": {"enum": list(FAMILIES)},
        "sizes": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
        "density": {"type": ["number", "null"]},
        "difficulty": {"enum": [*DIFFICULTIES, None]},
        "knobs": {"type": "object"},
    },
    "required": ["family", "sizes"],
    "additionalProperties": False,
}
SYSTEM_PROMPT = (
    "You write mixed-integer linear programs that are feasible but hard for SCIP. Answer the instruction with a "
    "JSON instance spec (family, sizes, density, difficulty, knobs), or with the model itself in LP format using "
    "the family's names: facility location open_j, serve_i_j; max-cut x_i, cut_i_j; set cover x_j and rows "
    "cover_i; combinatorial auction bid_b and rows item_k; independent set x_v; knapsack x_i_k. Difficulty is SCIP's "
    "branch-and-bound node count at the asked size: "
    + ", ".join(
        f"{word} {low}-{high} nodes" if high else f"{word} {low}+ nodes"
        for word, (low, high) in DIFFICULTY_BANDS.items()
    )
    + "; 'needs about N nodes' means N/3 to 3N."
)


@dataclass(frozen=True)
class ChallengerAnswer:
    """A validated answer: a spec or LP text, or the reason it was refused with its stable `code`
    (`malformed_spec`, `challenger_refused`, `ignores_instruction`, `malformed_lp`, or the spec error's code)."""

    spec: InstanceSpec | None = None
    model_text: str | None = None
    reason: str | None = None
    code: str | None = None


def challenger_request(
    instruction: str,
    *,
    model: str = "scripted",
    sampling: SamplingParams | None = None,
    schema: dict[str, Any] | None = SPEC_SCHEMA,
) -> GenRequest:
    """The generation request that asks a challenger for an instance (`schema` None: no structured-output note)."""
    return GenRequest(
        model=model,
        messages=(Message("system", SYSTEM_PROMPT), Message("user", instruction)),
        sampling=sampling or SamplingParams(),
        schema=schema,
    )


def seeded_challenger_requests(
    instruction: str, seeds: Sequence[int], *, model: str, temperature: float, max_tokens: int
) -> list[GenRequest]:
    """One request per instance seed, the seed as the sampling seed, with the system prompt and the instruction only
    (no schema note), as SFT and GRPO saw them."""
    return [
        challenger_request(
            instruction,
            model=model,
            sampling=SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed),
            schema=None,
        )
        for seed in seeds
    ]


def _read_spec(text: str, request: InstanceRequest) -> ChallengerAnswer:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        reason = f"spec: not JSON ({error.msg} at char {error.pos})"
        return ChallengerAnswer(reason=reason, code="malformed_spec")
    if isinstance(data, dict) and "error" in data:
        return ChallengerAnswer(reason=f"challenger refused: {data['error']}", code="challenger_refused")
    try:
        spec = InstanceSpec.from_dict(data) if isinstance(data, dict) else InstanceSpec.from_json(text)
    except SpecError as error:
        message = str(error)
        return ChallengerAnswer(reason=message if message.startswith("spec:") else f"spec: {message}", code=error.code)
    outside = request.violations(spec)
    if outside:
        return ChallengerAnswer(
            spec=spec, reason=f"spec ignores the instruction: {outside[0]}", code="ignores_instruction"
        )
    return ChallengerAnswer(spec=spec)


def read_challenger_answer(text: str, *, instruction: str) -> ChallengerAnswer:
    """Validate a challenger's answer to `instruction` before solving (bad instructions raise `SpecError`): a spec
    must build inside the instruction, LP text must parse and have the asked sizes and density."""
    from synth.validators.optiscribe.reading import ModelTextError, read_model_text
    from synth.validators.optiscribe.structure import instruction_violations, measure_structure

    request = parse_instruction(instruction)
    stripped = text.strip()
    if stripped.startswith("{"):
        return _read_spec(stripped, request)
    try:
        model = read_model_text(text)
    except ModelTextError as error:
        return ChallengerAnswer(reason=f"malformed LP: {error}", code="malformed_lp")
    outside = instruction_violations(measure_structure(model, request.family), request.asked())
    if outside:
        return ChallengerAnswer(reason=f"LP ignores the instruction: {outside[0]}", code="ignores_instruction")
    return ChallengerAnswer(model_text=text)


def scripted_challenger_policy(request: GenRequest, rng: np.random.Generator) -> str:
    """Parse the last user message with the grammar and answer with a spec drawn around the standard knobs."""
    instruction = next(m.content for m in reversed(request.messages) if m.role == "user")
    try:
        spec = CemPolicy().sample(parse_instruction(instruction), rng).spec
    except SpecError as error:
        return json.dumps({"error": str(error), "code": error.code})
    return spec.to_json()


def scripted_challenger_backend() -> ScriptedBackend:
    """A `ScriptedBackend` running `scripted_challenger_policy`."""
    return ScriptedBackend(scripted_challenger_policy, name="scripted-optiscribe")


@dataclass(frozen=True, kw_only=True)
class ChallengerLLMSettings:
    """The self-play `llm` challenger: the backend block and the sampling of each proposal.

    Requests carry the system prompt and the instruction only (no schema note), as in SFT, GRPO and the
    challenger bench; each proposal's instance seed is its sampling seed, so the proposals of a round are distinct
    requests (the scripted backend and the cache key on it; vLLM and OpenAI servers seed with it).
    """

    backend: LLMBackendConfig = field(default_factory=LLMBackendConfig)
    temperature: float = 1.0
    max_tokens: int = 256

    @property
    def model(self) -> str:
        """The model named in each request: the configured model, or `scripted`."""
        return self.backend.model or "scripted"

    def provenance(self) -> str:
        """Canonical JSON of what generated the proposals: backend kind, model, sampling."""
        data = {
            "backend": self.backend.backend,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    def build(self) -> LLMBackend:
        """The backend (the scripted grammar policy for `scripted`; cached when the block sets `cache`)."""
        return self.backend.build(scripted=scripted_challenger_backend())

    def requests(self, instruction: str, seeds: Sequence[int]) -> list[GenRequest]:
        """One request per instance seed (`seeded_challenger_requests`)."""
        return seeded_challenger_requests(
            instruction, seeds, model=self.model, temperature=self.temperature, max_tokens=self.max_tokens
        )


def ask_challenger(
    backend: LLMBackend, settings: ChallengerLLMSettings, instruction: str, seeds: Sequence[int]
) -> list[ChallengerAnswer]:
    """Ask the backend for one instance per seed in one batched call, and read each first answer."""
    results = backend.generate(settings.requests(instruction, seeds))
    return [read_challenger_answer(result.texts[0], instruction=instruction) for result in results]
