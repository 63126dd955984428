"""`synth train sft`: supervised fine-tuning of a local causal LM on a synth tool-use dataset with TRL's SFTTrainer.

Dialogues are rendered by a tool-capable chat template (the model's own when it renders tools with
`{% generation %}` markers, else a patched TRL training template, else `TOOL_CHAT_TEMPLATE`), and the loss covers
the assistant tokens only. Without `model`, a tiny Llama-style LM and a BPE tokenizer are built locally from the
training rows. Measured on held-out rows, before and after training: the assistant-token loss, and the first
tool call (greedy decoding of the first assistant turn given system + user: does it parse as `<tool_call>` JSON
naming the planned first tool).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth.core.errors import InputError, OutputDirError
from synth.trainers.sft.chat_template import ensure_tool_template
from synth.trainers.sft.data import (
    IGNORE,
    EncodedDialogue,
    SftExample,
    encode_dialogue,
    encode_prompt,
    read_examples,
    split_examples,
)

LOGGER = logging.getLogger(__name__)
METRICS_FILE = "metrics.json"
TINY_MODEL = "tiny-llama (built locally)"
FIRST_TURN_KEYS = {"toolforge": "tool_call", "marco": "first_answer", "optiscribe": "first_answer"}
TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def parse_first_tool_call(text: str) -> dict[str, Any] | None:
    """`{"name", "arguments"}` of the first `<tool_call>` JSON block after any `<think>` block, or None."""
    match = TOOL_CALL.search(THINK.sub("", text))
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    return {"name": value["name"], "arguments": arguments}


def assistant_loss(model: Any, encoded: Sequence[EncodedDialogue]) -> float | None:
    """Mean next-token cross-entropy over the labelled (assistant) tokens of `encoded`; None without any."""
    import torch

    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for item in encoded:
            ids = torch.tensor([item.input_ids], device=model.device)
            labels = torch.tensor([item.labels], device=model.device)
            logits = model(input_ids=ids).logits[0, :-1].float()
            target = labels[0, 1:]
            total += float(torch.nn.functional.cross_entropy(logits, target, ignore_index=IGNORE, reduction="sum"))
            count += int((target != IGNORE).sum())
    return round(total / count, 6) if count else None


def greedy_first_turn(model: Any, tokenizer: Any, examples: Sequence[SftExample], max_new_tokens: int) -> list[str]:
    """The greedy first assistant turn of each example (given its system and first user turn), decoded."""
    import torch

    model.eval()
    texts = []
    for example in examples:
        ids = encode_prompt(tokenizer, example)
        with torch.no_grad():
            output = model.generate(
                torch.tensor([ids], device=model.device),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long, device=model.device),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id,
            )
        texts.append(tokenizer.decode(output[0, len(ids) :].tolist(), skip_special_tokens=True))
    return texts


def score_first_calls(
    model: Any, tokenizer: Any, examples: Sequence[SftExample], *, max_new_tokens: int
) -> dict[str, Any]:
    """Greedy-decode each example's first assistant turn; parse rate, name and exact (name + arguments) accuracy."""
    parsed = named = exact = 0
    samples = []
    for example, text in zip(examples, greedy_first_turn(model, tokenizer, examples, max_new_tokens), strict=True):
        call = parse_first_tool_call(text)
        parsed += call is not None
        hit = call is not None and call["name"] == example.first_tool
        named += hit
        exact += hit and call["arguments"] == example.first_arguments  # type: ignore[index]
        if len(samples) < 2:
            samples.append({"id": example.id, "expected_tool": example.first_tool, "generated": text[:300]})
    return held_out_rates(len(examples), samples, parse_rate=parsed, name_accuracy=named, exact_accuracy=exact)


def held_out_rates(rows: int, samples: list[dict[str, Any]], **counts: int) -> dict[str, Any]:
    """A held-out score: the row count, each count as a share of the rows (None without rows), a few samples."""
    rates = {name: round(count / rows, 6) if rows else None for name, count in counts.items()}
    return {"rows": rows, **rates, "samples": samples}


def score_held_out(
    domain: str, model: Any, tokenizer: Any, examples: Sequence[SftExample], *, max_new_tokens: int
) -> dict[str, Any]:
    """The domain's first-turn score: ToolForge's first tool call, MARCO's first answer, OptiScribe's spec."""
    if domain == "marco":
        from synth.trainers.sft.marco import score_first_answers

        return score_first_answers(model, tokenizer, examples, max_new_tokens=max_new_tokens)
    if domain == "optiscribe":
        from synth.trainers.sft.optiscribe import score_first_specs

        return score_first_specs(model, tokenizer, examples, max_new_tokens=max_new_tokens)
    return score_first_calls(model, tokenizer, examples, max_new_tokens=max_new_tokens)


def _load_model(
    model: Path | None,
    train: Sequence[SftExample],
    *,
    seed: int,
    max_length: int,
    tiny: Mapping[str, int],
    domain: str,
) -> tuple[Any, Any]:
    if model is None:
        from synth.trainers.sft.tiny import DIGIT, SMILES_CHARACTER, build_tiny_model, build_tiny_tokenizer

        bootstrap = build_tiny_tokenizer([""], vocab_size=300)
        texts = [
            bootstrap.apply_chat_template(list(e.messages), tools=list(e.tools) or None, tokenize=False) for e in train
        ]
        # one token per SMILES character (MARCO) or per digit (OptiScribe: a size in the instruction and the answer)
        tokenizer = build_tiny_tokenizer(texts, isolate=DIGIT if domain == "optiscribe" else SMILES_CHARACTER)
        return build_tiny_model(tokenizer, seed=seed, max_positions=max(max_length, 512), **tiny), tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(model).expanduser()
    if not (path / "config.json").is_file():
        msg = f"{path}: not a local model directory (no config.json)"
        raise InputError(msg)
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return AutoModelForCausalLM.from_pretrained(path), tokenizer


def _encode_all(
    tokenizer: Any, examples: Sequence[SftExample], *, max_length: int, assistant_turns: int | None = None
) -> tuple[list[EncodedDialogue], int, int]:
    """Encoded examples with at least one labelled token, the number truncated, and the number dropped."""
    kept, truncated, dropped = [], 0, 0
    for example in examples:
        item = encode_dialogue(tokenizer, example, max_length=max_length, assistant_turns=assistant_turns)
        truncated += item.truncated
        if any(label != IGNORE for label in item.labels[1:]):
            kept.append(item)
        else:
            dropped += 1
    return kept, truncated, dropped


def _fit(
    model: Any,
    tokenizer: Any,
    train: Sequence[EncodedDialogue],
    *,
    steps: int,
    lr: float,
    lora_rank: int | None,
    seed: int,
    max_length: int,
    batch_size: int,
) -> tuple[Any, list[float]]:
    """Run TRL's SFTTrainer on pre-tokenised (input_ids, labels); returns the (merged) model and logged losses."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    dataset = Dataset.from_dict({"input_ids": [e.input_ids for e in train], "labels": [e.labels for e in train]})
    peft_config = None
    if lora_rank is not None:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=lora_rank, lora_alpha=2 * lora_rank, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM"
        )
    with tempfile.TemporaryDirectory(prefix="synth-sft-") as scratch:
        config = SFTConfig(
            output_dir=scratch,
            max_steps=steps,
            learning_rate=lr,
            per_device_train_batch_size=batch_size,
            warmup_steps=min(10, steps // 10),
            lr_scheduler_type="cosine",
            weight_decay=0.0,
            logging_steps=max(1, steps // 20),
            save_strategy="no",
            report_to="none",
            seed=seed,
            data_seed=seed,
            max_length=max_length,
            dataset_kwargs={"skip_prepare_dataset": True},
            disable_tqdm=True,
            dataloader_num_workers=0,
            bf16=False,
            fp16=False,
        )
        trainer = SFTTrainer(
            model=model, args=config, train_dataset=dataset, processing_class=tokenizer, peft_config=peft_config
        )
        from transformers.trainer_callback import PrinterCallback, TrainerCallback

        class LossLogger(TrainerCallback):
            def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
                if logs and "loss" in logs:
                    LOGGER.info("sft step %d/%d: loss %.4f", state.global_step, state.max_steps, float(logs["loss"]))

        trainer.remove_callback(PrinterCallback)  # it prints every log dict to stdout, which breaks `--json`
        trainer.add_callback(LossLogger())
        trainer.train()
        losses = [float(entry["loss"]) for entry in trainer.state.log_history if "loss" in entry]
        trained = trainer.model
    if lora_rank is not None:
        trained = trained.merge_and_unload()
    return trained, losses


def _copy_warmup(
    model: Any,
    tokenizer: Any,
    train: tuple[Sequence[SftExample], Sequence[EncodedDialogue]],
    held: tuple[Sequence[SftExample], Sequence[EncodedDialogue]],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
) -> tuple[list[float], str, dict[str, float | None]]:
    """Run the copy warm-up on `model` in place.

    Returns the logged losses, what was copied ("smiles_spans" or "windows") and the copy loss on sequences built
    from the held-out dialogues before and after the warm-up.
    """
    from synth.trainers.sft.copy_warmup import COPY_POOL, copy_sequences, fit_copy, smiles_spans

    def sequences(dialogues: Sequence[EncodedDialogue], spans: list[list[int]], count: int) -> list[EncodedDialogue]:
        shape = {"spans": spans, "scramble": 0.5, "tokenizer": tokenizer, "max_gap": 32} if spans else {"max_gap": 64}
        return copy_sequences(dialogues, count=count, seed=seed, max_prefix=16, **shape)

    spans = smiles_spans(tokenizer, train[0])
    items = "smiles_spans" if spans else "windows"
    pool = sequences(train[1], spans, min(steps * batch_size, COPY_POOL))
    probe = sequences(held[1], smiles_spans(tokenizer, held[0]) if spans else [], 32)
    before = assistant_loss(model, probe)
    started = time.perf_counter()
    logged = fit_copy(model, pool, steps=steps, batch_size=batch_size, lr=lr, seed=seed, pad_id=tokenizer.pad_token_id)
    LOGGER.info("copy warm-up: %d steps in %.1f s, loss %s", steps, time.perf_counter() - started, logged)
    return logged, items, {"before": before, "after": assistant_loss(model, probe)}


def _default_lr(model: Path | None, lora_rank: int | None) -> float:
    if model is None:
        return 3e-3
    return 2e-4 if lora_rank is not None else 2e-5


def train_sft(
    dataset_dir: Path,
    *,
    model: Path | None = None,
    out: Path,
    steps: int = 200,
    lr: float | None = None,
    lora_rank: int | None = None,
    seed: int = 0,
    max_length: int = 4096,
    eval_rows: int = 8,
    batch_size: int = 4,
    max_new_tokens: int = 256,
    tiny_hidden: int = 128,
    tiny_layers: int = 2,
    assistant_turns: int | None = None,
    copy_warmup: int = 0,
    copy_batch_size: int = 16,
    copy_lr: float | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Fine-tune on `dataset_dir`'s dialogues (assistant tokens only) and save model, tokenizer and metrics to `out`.

    Args:
        model: a local HF causal LM directory; None builds a tiny Llama-style LM and tokenizer from the rows.
        lr: None picks 3e-3 for the tiny model, 2e-4 with LoRA, 2e-5 for full fine-tuning.
        lora_rank: train LoRA adapters of this rank on every linear layer (merged before saving); None: all weights.
        max_length: dialogues are cut to this many tokens (start kept); those left without assistant tokens drop.
        eval_rows: dialogues held out for the loss and the first-call accuracy.
        tiny_hidden, tiny_layers: width and depth of the tiny LM built when `model` is None.
        assistant_turns: train on each dialogue's first that many assistant turns only (None: all of them).
        copy_warmup: steps of copy warm-up before SFT (`copy_warmup`: short `item · gap · item` sequences from the
            training dialogues, their `<SMILES>` spans as items when they have any).
        copy_batch_size, copy_lr: the warm-up's batch and learning rate (None: the SFT rate).

    Returns the metrics written to `out/metrics.json`.
    """
    import torch
    from transformers import set_seed

    started = time.perf_counter()
    out = Path(out)
    if (out / METRICS_FILE).exists() and not overwrite:
        msg = f"{out}: already holds a trained model ({METRICS_FILE}); pass --overwrite or choose another --out"
        raise OutputDirError(msg)
    domain, examples = read_examples(dataset_dir)
    if len(examples) < 2:
        msg = f"{dataset_dir}: {len(examples)} dialogue(s); SFT needs at least 2 (train and held-out)"
        raise InputError(msg)
    train, held = split_examples(examples, eval_rows=eval_rows, seed=seed)
    set_seed(seed)
    tiny = {"hidden": tiny_hidden, "layers": tiny_layers}
    network, tokenizer = _load_model(model, train, seed=seed, max_length=max_length, tiny=tiny, domain=domain)
    if torch.cuda.is_available():
        network.to("cuda")
    template = ensure_tool_template(tokenizer) if model is not None else "synth"
    cut = {"max_length": max_length, "assistant_turns": assistant_turns}
    train_encoded, train_truncated, train_dropped = _encode_all(tokenizer, train, **cut)
    held_encoded, held_truncated, _ = _encode_all(tokenizer, held, **cut)
    if not train_encoded:
        msg = f"{dataset_dir}: no training dialogue keeps an assistant token within --max-length {max_length}"
        raise InputError(msg)
    probe = train_encoded[: max(eval_rows, 1)]
    rate = lr if lr is not None else _default_lr(model, lora_rank)
    before = {
        "train": assistant_loss(network, probe),
        "held_out": assistant_loss(network, held_encoded),
        "first_turn": score_held_out(domain, network, tokenizer, held, max_new_tokens=max_new_tokens),
    }
    fit_started = time.perf_counter()
    warmup_logged: list[float] = []
    copy_held: dict[str, float | None] = {}
    copy_settings = {"batch_size": copy_batch_size, "lr": copy_lr if copy_lr is not None else rate}
    if copy_warmup:
        warmup_logged, copy_settings["items"], copy_held = _copy_warmup(
            network, tokenizer, (train, train_encoded), (held, held_encoded), steps=copy_warmup, seed=seed,
            **copy_settings,
        )  # fmt: skip
    network, logged = _fit(
        network,
        tokenizer,
        train_encoded,
        steps=steps,
        lr=rate,
        lora_rank=lora_rank,
        seed=seed,
        max_length=max_length,
        batch_size=batch_size,
    )
    train_seconds = time.perf_counter() - fit_started
    after = {
        "train": assistant_loss(network, probe),
        "held_out": assistant_loss(network, held_encoded),
        "first_turn": score_held_out(domain, network, tokenizer, held, max_new_tokens=max_new_tokens),
    }
    metrics: dict[str, Any] = {
        "dataset": str(dataset_dir),
        "domain": domain,
        "model": str(model) if model is not None else TINY_MODEL,
        "chat_template": template,
        "parameters": sum(p.numel() for p in network.parameters()),
        "settings": {
            "steps": steps,
            "lr": rate,
            "lora_rank": lora_rank,
            "seed": seed,
            "max_length": max_length,
            "assistant_turns": assistant_turns,
            "copy_warmup": copy_warmup,
            **({"copy_warmup_settings": copy_settings} if copy_warmup else {}),
            "eval_rows": len(held),
            "batch_size": batch_size,
            "threads": torch.get_num_threads(),
            **({"tiny_hidden": tiny_hidden, "tiny_layers": tiny_layers} if model is None else {}),
        },
        "rows": {
            "train": len(train_encoded),
            "held_out": len(held_encoded),
            "truncated": train_truncated + held_truncated,
            "dropped_without_assistant_tokens": train_dropped,
        },
        "loss": {
            "train_before": before["train"],
            "train_after": after["train"],
            "held_out_before": before["held_out"],
            "held_out_after": after["held_out"],
            "logged": [round(x, 4) for x in logged],
            **({"copy_warmup_logged": [round(x, 4) for x in warmup_logged]} if copy_warmup else {}),
            **({"copy_held_out": copy_held} if copy_warmup else {}),
        },
        FIRST_TURN_KEYS[domain]: {"before": before["first_turn"], "after": after["first_turn"]},
        "train_seconds": round(train_seconds, 2),
    }
    metrics["total_seconds"] = round(time.perf_counter() - started, 2)
    _save(network, tokenizer, metrics, out)
    return metrics


def _save(model: Any, tokenizer: Any, metrics: Mapping[str, Any], out: Path) -> None:
    """Write model, tokenizer and metrics.json to a temporary sibling, then rename it to `out`."""
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / METRICS_FILE).write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    tmp.replace(out)
