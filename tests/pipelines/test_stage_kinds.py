"""The train and export stage kinds: settings that mirror their CLI commands, and the checks run at build time."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from synth.cli import lob as lob_cli
from synth.cli import sft as sft_cli
from synth.cli import toolforge as toolforge_cli
from synth.cli import train as train_cli
from synth.core.errors import ConfigError
from synth.pipelines.stage_kinds import STAGE_KINDS
from synth.pipelines.stage_kinds.export import FORMATS_BY_DOMAIN
from synth.pipelines.stages import parse_stages


def generate(domain: str) -> dict[str, Any]:
    return {"kind": "generate", "domain": domain}


def option_defaults(command: Callable[..., Any]) -> dict[str, Any]:
    """A typer command's option defaults by parameter name."""
    return {name: p.default.default for name, p in inspect.signature(command).parameters.items()}


def settings_of(kind: str, **fields: Any) -> dict[str, Any]:
    return STAGE_KINDS[kind].parse_settings(fields).model_dump()


def refusal(stages: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_stages({"stages": stages}, source="p.yaml")
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_the_registry_holds_train_and_export() -> None:
    assert {"train", "export"} <= set(STAGE_KINDS)
    assert all(STAGE_KINDS[name].kind == name for name in ("train", "export"))
    assert FORMATS_BY_DOMAIN == {
        "lob": ("lobster",),
        "optiscribe": ("mps", "lp"),
        "toolforge": ("openai", "hermes", "xlam", "bfcl"),
    }


def test_trainer_settings_default_to_their_cli_commands() -> None:
    sft = option_defaults(sft_cli.sft_command)
    assert settings_of("train", trainer="sft") == {
        "trainer": "sft",
        "seed": None,
        **{name: sft[name] for name in ("model", "steps", "lr", "lora_rank", "max_length", "eval_rows")},
        **{name: sft[name] for name in ("batch_size", "max_new_tokens")},
    }
    fit = option_defaults(train_cli.fit_command)
    papyrus = settings_of("train", trainer="papyrus", task="dating")
    assert papyrus["eval_cers"] == train_cli.parse_cers(fit["eval_cers"]) and papyrus["params"] == {}
    assert {k: papyrus[k] for k in ("model", "train_cer", "variant", "min_class_count")} == {
        k: fit[k] for k in ("model", "train_cer", "variant", "min_class_count")
    }
    lora = option_defaults(train_cli.lora_embeds_command)
    embeds = settings_of("train", trainer="lora-embeds")
    assert embeds["train_on"] == lora["inputs"] and embeds["model"] is None
    assert {k: embeds[k] for k in ("task", "test_rows", "eval_seed", "steps", "rank")} == {
        k: lora[k] for k in ("task", "test_rows", "eval_seed", "steps", "rank")
    }
    lob = option_defaults(train_cli.lob_command)
    fitted = settings_of("train", trainer="lob")
    names = ("messages", "orderbook", "train_fraction", "levels", "tick", "pointer")
    assert {k: fitted[k] for k in names} == {k: lob[k] for k in names} and fitted["rollout"] is None


def test_export_settings_default_to_their_cli_commands() -> None:
    toolforge = option_defaults(toolforge_cli.export_command)
    assert settings_of("export", format="openai") == {
        "format": "openai",
        "arguments": toolforge["arguments"],
        "reasoning": toolforge["reasoning"],
    }
    assert settings_of("export", format="hermes") == {"format": "hermes", "tool_role": toolforge["tool_role"]}
    assert settings_of("export", format="bfcl") == {"format": "bfcl"}
    assert settings_of("export", format="mps") == {"format": "mps"}
    lob = option_defaults(lob_cli.export_command)
    assert settings_of("export", format="lobster") == {"format": "lobster", "limit": lob["limit"], "check": True}


def test_settings_errors_name_the_field_without_the_tag() -> None:
    assert refusal({"fit": {"kind": "train", "trainer": "grpo"}}) == (
        "p.yaml: field `stages.fit.trainer`: Input should be 'sft', 'papyrus', 'lora-embeds' or 'lob' (got 'grpo')"
    )
    assert refusal({"fit": {"kind": "train"}}) == "p.yaml: field `stages.fit.trainer`: Field required"
    dialogues = {"dialogues": generate("toolforge")}
    assert refusal({**dialogues, "x": {"kind": "export", "inputs": ["dialogues"], "format": "csv"}}) == (
        "p.yaml: field `stages.x.format`: Input should be 'lobster', 'mps', 'lp', 'openai', 'hermes', 'xlam' or "
        "'bfcl' (got 'csv')"
    )
    hermes = {"kind": "export", "inputs": ["dialogues"], "format": "hermes", "reasoning": "field"}
    assert refusal({**dialogues, "x": hermes}) == "p.yaml: field `stages.x.reasoning`: unknown field"
    sft = {"kind": "train", "inputs": ["dialogues"], "trainer": "sft", "steps": 0}
    assert refusal({**dialogues, "fit": sft}) == (
        "p.yaml: field `stages.fit.steps`: Input should be greater than 0 (got 0)"
    )
    papyrus = {"corpus": generate("papyrus"), "fit": {"kind": "train", "inputs": ["corpus"], "trainer": "papyrus"}}
    assert refusal(papyrus) == "p.yaml: field `stages.fit.task`: Field required"


def test_train_refuses_inputs_of_the_wrong_domain_or_number() -> None:
    sft = {"kind": "train", "inputs": ["corpus"], "trainer": "sft"}
    assert refusal({"corpus": generate("papyrus"), "sft": sft}) == (
        "p.yaml: field `stages.sft`: `inputs`: trainer `sft` needs a 'toolforge' dataset, but `corpus` "
        "(a generate stage, 'papyrus' rows) is not one"
    )
    two = {"a": generate("toolforge"), "b": generate("toolforge")}
    assert refusal({**two, "sft": {**sft, "inputs": ["a", "b"]}}) == (
        "p.yaml: field `stages.sft`: `inputs`: trainer `sft` reads exactly 1 input (a 'toolforge' dataset), "
        "got 2: ['a', 'b']"
    )
    assert refusal({"sft": {"kind": "train", "trainer": "papyrus", "task": "dating"}}) == (
        "p.yaml: field `stages.sft`: `inputs`: trainer `papyrus` reads exactly 1 input (a 'papyrus' dataset), got none"
    )
    lora = {"kind": "train", "inputs": ["dialogues"], "trainer": "lora-embeds"}
    assert refusal({"dialogues": generate("toolforge"), "fit": lora}) == (
        "p.yaml: field `stages.fit`: `inputs`: trainer `lora-embeds` needs a 'dasa' dataset, but `dialogues` "
        "(a generate stage, 'toolforge' rows) is not one"
    )


def test_lob_training_reads_a_lobster_export_or_explicit_files(tmp_path) -> None:
    rollouts = {"rollouts": generate("lob")}
    fit = {"kind": "train", "inputs": ["rollouts"], "trainer": "lob"}
    assert refusal({**rollouts, "fit": fit}) == (
        "p.yaml: field `stages.fit`: `inputs`: trainer `lob` needs an export stage with `format: lobster`, but "
        "`rollouts` (a generate stage, 'lob' rows) is not one"
    )
    openai = {"dialogues": generate("toolforge"), "o": {"kind": "export", "inputs": ["dialogues"], "format": "openai"}}
    assert refusal({**openai, "fit": {**fit, "inputs": ["o"]}}).endswith(
        "but `o` (an export stage, openai files) is not one"
    )
    assert refusal({"fit": {"kind": "train", "trainer": "lob"}}) == (
        "p.yaml: field `stages.fit`: `messages`: trainer `lob` with no inputs fits on LOBSTER files; set `messages` "
        "or read an export stage with `format: lobster`"
    )
    lobster = {**rollouts, "l": {"kind": "export", "inputs": ["rollouts"], "format": "lobster"}}
    both = {**fit, "inputs": ["l"], "messages": "day_message_1.csv"}
    assert refusal({**lobster, "fit": both}) == (
        "p.yaml: field `stages.fit`: `messages`: trainer `lob` fits either its input `l` or explicit files, not both"
    )
    missing = tmp_path / "X_message_1.csv"
    assert refusal({"fit": {"kind": "train", "trainer": "lob", "messages": str(missing)}}) == (
        f"p.yaml: field `stages.fit`: `messages`: {missing}: LOBSTER message file not found"
    )
    missing.write_text("")
    assert refusal({"fit": {"kind": "train", "trainer": "lob", "messages": str(missing)}}) == (
        f"p.yaml: field `stages.fit`: `orderbook`: {tmp_path / 'X_orderbook_1.csv'}: LOBSTER orderbook file not found"
    )
    plan = parse_stages({"stages": {**lobster, "fit": {**fit, "inputs": ["l"]}}})
    assert [s.name for s in plan.stages] == ["rollouts", "l", "fit"]


def test_export_refuses_a_format_that_does_not_fit_its_input() -> None:
    dialogues = {"dialogues": generate("toolforge")}
    assert refusal({**dialogues, "x": {"kind": "export", "inputs": ["dialogues"], "format": "mps"}}) == (
        "p.yaml: field `stages.x`: `format`: 'mps' does not fit `dialogues` (a generate stage, 'toolforge' rows); "
        "choose openai, hermes, xlam, bfcl"
    )
    assert refusal({"corpus": generate("papyrus"), "x": {"kind": "export", "inputs": ["corpus"], "format": "lp"}}) == (
        "p.yaml: field `stages.x`: `format`: `corpus` (a generate stage, 'papyrus' rows) has no export format; "
        "formats exist for lob, optiscribe, toolforge rows"
    )
    chained = {
        **dialogues,
        "o": {"kind": "export", "inputs": ["dialogues"], "format": "openai"},
        "x": {"kind": "export", "inputs": ["o"], "format": "hermes"},
    }
    assert refusal(chained) == (
        "p.yaml: field `stages.x`: `inputs`: an export stage reads a synth dataset, but `o` "
        "(an export stage, openai files) is not one"
    )
    assert refusal({**dialogues, "x": {"kind": "export", "inputs": [], "format": "openai"}}) == (
        "p.yaml: field `stages.x`: `inputs`: an export stage reads exactly 1 input (a synth dataset), got none"
    )


def test_the_issue_example_pipeline_is_valid_and_export_options_change_the_fingerprint() -> None:
    def plan(arguments: str) -> dict[str, str]:
        stages = {
            "dialogues": {"kind": "generate", "domain": "toolforge", "shards": 4},
            "sft": {"kind": "train", "inputs": ["dialogues"], "trainer": "sft", "steps": 20, "eval_rows": 4},
            "openai": {"kind": "export", "inputs": ["dialogues"], "format": "openai", "arguments": arguments},
        }
        return {s.name: s.fingerprint for s in parse_stages({"seed": 7, "stages": stages}).stages}

    string, dicts = plan("string"), plan("dict")
    assert string["sft"] == dicts["sft"] and string["openai"] != dicts["openai"]
