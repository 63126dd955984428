"""`synth train grpo`: group-relative policy optimisation with TRL's GRPOTrainer and the domains' verifier rewards.

A run folder holds `config.json` (the settings and the dataset by path + manifest sha256), `checkpoints/`
(TRL's `checkpoint-N`: weights or LoRA adapter, optimizer, scheduler, RNG, trainer state), `metrics.jsonl` (one
line per logged step: reward mean/std per function, success, KL-free loss, lengths) and, when done, `model/`
(merged weights + tokenizer + model card naming the dataset) and `metrics.json` (the summary). Rerunning the same
command resumes from the last checkpoint; a finished run is refused unless `overwrite`.

MARCO rows train multi-turn through `MarcoRollout` (the feedback of turn t is the next prompt; reward = the
trajectory's return); ToolForge rows train the first assistant turn, rewarded by the rule layers; OptiScribe rows
train the challenger's spec, scored by SCIP (`optiscribe_scip` with the node cap, time limit and seed the dataset's
rows record), prompts in the dataset's size curriculum (not shuffled).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from synth.core.errors import InputError, OutputDirError
from synth.trainers.grpo.data import (
    dataset_domain,
    marco_prompts,
    optiscribe_prompts,
    optiscribe_scip_defaults,
    to_hf_dataset,
    toolforge_prompts,
)
from synth.trainers.grpo.rewards import make_reward

LOGGER = logging.getLogger(__name__)
CONFIG_FILE = "config.json"
METRICS_LOG = "metrics.jsonl"
SUMMARY_FILE = "metrics.json"
CHECKPOINTS = "checkpoints"
MODEL_DIR = "model"
KILL_AT_STEP_ENV = "SYNTH_GRPO_KILL_AT_STEP"  # fault injection: SIGKILL this process as step N begins
# measured on the tiny MARCO policy (docs/bench/learning): full-weight GRPO at 3e-4 and above degraded the SFT
# policy, 3e-5 improved it; LoRA adapters take the usual larger step
FULL_LR = 3e-5
LORA_LR = 5e-4
DEFAULT_REWARDS = {"marco": ({"name": "marco"},), "toolforge": ({"name": "toolforge_first_call"},)}


@dataclass(frozen=True)
class GrpoSettings:
    """Settings of one GRPO run (all enter `config.json`; changing one for an existing run folder is refused)."""

    steps: int = 20
    num_generations: int = 4
    prompts_per_step: int = 2
    learning_rate: float | None = None  # None: FULL_LR for full fine-tuning, LORA_LR with `lora_rank`
    lora_rank: int | None = None
    max_completion_length: int = 160
    temperature: float = 1.0
    beta: float = 0.0
    turns: int = 3
    save_steps: int = 5
    seed: int = 0
    eval_rows: int = 8
    rewards: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.learning_rate is None:
            object.__setattr__(self, "learning_rate", LORA_LR if self.lora_rank else FULL_LR)
        if self.num_generations < 2:
            msg = f"`num_generations` must be at least 2 (a group), got {self.num_generations}"
            raise InputError(msg)
        for name in ("steps", "prompts_per_step", "max_completion_length", "turns", "save_steps"):
            if getattr(self, name) < 1:
                msg = f"`{name}` must be at least 1, got {getattr(self, name)}"
                raise InputError(msg)


def _rewards(settings: GrpoSettings, defaults: tuple[Mapping[str, Any], ...]) -> tuple[list[Any], list[float]]:
    """The reward functions and weights: the settings' rewards (a default of the same name fills in the options they
    leave unset, e.g. the node cap an OptiScribe dataset records), else the domain's defaults."""
    specs = settings.rewards or defaults
    by_name = {spec["name"]: spec for spec in defaults}
    functions, weights = [], []
    for spec in specs:
        spec = {**by_name.get(spec["name"], {}), **spec}
        options = {k: v for k, v in spec.items() if k not in ("name", "weight")}
        functions.append(make_reward(str(spec["name"]), **options))
        weights.append(float(spec.get("weight", 1.0)))
    return functions, weights


def _check_model(model: Path) -> Path:
    path = Path(model).expanduser()
    if not (path / "config.json").is_file():
        msg = f"{path}: not a local model directory (no config.json); train one with `synth train sft`"
        raise InputError(msg)
    return path


def _load_policy(path: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return AutoModelForCausalLM.from_pretrained(path), tokenizer


def _check_run_folder(out: Path, config: Mapping[str, Any], *, overwrite: bool) -> None:
    """Refuse a finished run (unless `overwrite`) or a folder holding another run's config."""
    if (out / SUMMARY_FILE).exists():
        if not overwrite:
            msg = f"{out}: already holds a finished GRPO run ({SUMMARY_FILE}); pass --overwrite or choose another --out"
            raise OutputDirError(msg)
        shutil.rmtree(out)
    saved = out / CONFIG_FILE
    if saved.exists() and json.loads(saved.read_text(encoding="utf-8")) != json.loads(json.dumps(config)):
        msg = f"{out}: holds a GRPO run with other settings or data ({CONFIG_FILE}); use another --out or --overwrite"
        raise OutputDirError(msg)


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def _callbacks(out: Path) -> list[Any]:
    from transformers.trainer_callback import TrainerCallback

    class MetricsLog(TrainerCallback):
        """Append each log dict (with its step) to metrics.jsonl; SIGKILL at the fault-injection step."""

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if logs:
                line = json.dumps({"step": state.global_step, **logs}, sort_keys=True)
                with (out / METRICS_LOG).open("a", encoding="utf-8") as handle:
                    handle.write(line + "\n")
                LOGGER.info("grpo step %d/%d: reward %s", state.global_step, state.max_steps, logs.get("reward"))

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if os.environ.get(KILL_AT_STEP_ENV) == str(state.global_step + 1):
                import signal

                os.kill(os.getpid(), signal.SIGKILL)

    return [MetricsLog()]


def _last_checkpoint(folder: Path) -> Path | None:
    from transformers.trainer_utils import get_last_checkpoint

    return Path(found) if folder.is_dir() and (found := get_last_checkpoint(str(folder))) else None


def _rewrite_metrics_log(out: Path, history: Sequence[Mapping[str, Any]]) -> None:
    """metrics.jsonl from the trainer's log history (restored on resume), dropping lines of steps redone."""
    lines = [json.dumps({"step": entry.get("step"), **entry}, sort_keys=True) for entry in history]
    tmp = out / f".{METRICS_LOG}.tmp"
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(out / METRICS_LOG)


def _trainer(
    network: Any, tokenizer: Any, dataset: Any, *, settings: GrpoSettings, out: Path, prepared: _Prepared, rollout: Any
) -> Any:
    from trl import GRPOConfig, GRPOTrainer

    functions, weights = _rewards(settings, prepared.rewards)
    peft_config = None
    if settings.lora_rank is not None:
        from peft import LoraConfig

        rank = settings.lora_rank
        peft_config = LoraConfig(r=rank, lora_alpha=2 * rank, target_modules="all-linear", task_type="CAUSAL_LM")
    batch = settings.prompts_per_step * settings.num_generations
    config = GRPOConfig(
        output_dir=str(out / CHECKPOINTS),
        use_cpu=True,
        bf16=False,
        fp16=False,
        per_device_train_batch_size=batch,
        num_generations=settings.num_generations,
        gradient_accumulation_steps=1,
        max_completion_length=settings.max_completion_length * (settings.turns if rollout else 1) + 64 * settings.turns,
        max_steps=settings.steps,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="constant",
        warmup_steps=0,
        beta=settings.beta,
        temperature=settings.temperature,
        top_k=0,
        logging_steps=1,
        save_strategy="steps",
        save_steps=settings.save_steps,
        save_total_limit=2,
        seed=settings.seed,
        data_seed=settings.seed,
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
        reward_weights=weights,
        log_completions=False,
        shuffle_dataset=prepared.shuffle,
    )
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    trainer = GRPOTrainer(
        model=network,
        reward_funcs=functions,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
        rollout_func=rollout,
    )
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    for callback in _callbacks(out):
        trainer.add_callback(callback)
    return trainer


@dataclass
class _Prepared:
    domain: str
    rows: list[Any]
    rewards: tuple[Mapping[str, Any], ...]
    held: list[Any] = field(default_factory=list)
    shuffle: bool = True


def _prepare(dataset_dir: Path, settings: GrpoSettings) -> _Prepared:
    domain = dataset_domain(dataset_dir)
    if domain == "marco":
        return _Prepared(domain, marco_prompts(dataset_dir), DEFAULT_REWARDS[domain])
    if domain == "optiscribe":
        defaults = (optiscribe_scip_defaults(dataset_dir),)
        return _Prepared(domain, optiscribe_prompts(dataset_dir), defaults, shuffle=False)
    rows, held = toolforge_prompts(dataset_dir, eval_rows=settings.eval_rows, seed=settings.seed)
    return _Prepared(domain, rows, DEFAULT_REWARDS[domain], held)


def run_config(dataset_dir: Path, model: Path, settings: GrpoSettings) -> dict[str, Any]:
    """What identifies a run: the dataset (path + manifest sha256), the starting model and the settings."""
    from synth.core.dataset import open_dataset

    data = open_dataset(dataset_dir, needs="GRPO")
    return {
        "dataset": {"path": str(dataset_dir), "domain": data.domain, "manifest_sha256": data.manifest_sha256},
        "model": str(model),
        "settings": json.loads(json.dumps(asdict(settings))),
    }


def train_grpo(
    dataset_dir: Path, *, model: Path, out: Path, settings: GrpoSettings, overwrite: bool = False
) -> dict[str, Any]:
    """Run (or resume) GRPO on `dataset_dir` from `model` into the run folder `out`; returns the summary."""
    started = time.perf_counter()
    out = Path(out)
    path = _check_model(model)
    prepared = _prepare(dataset_dir, settings)
    network, tokenizer = _load_policy(path)
    config = run_config(dataset_dir, model, settings)
    _check_run_folder(out, config, overwrite=overwrite)
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / CONFIG_FILE, config)
    from transformers import set_seed

    set_seed(settings.seed)
    dataset = to_hf_dataset(tokenizer, prepared.rows)
    rollout = None
    if prepared.domain == "marco":
        from synth.trainers.grpo.marco_rollout import MarcoRollout
        from synth.validators.marco.reward import RewardSettings

        options = next((dict(s) for s in settings.rewards if s.get("name") == "marco"), {})
        weights = {k: v for k, v in options.items() if k in RewardSettings.__dataclass_fields__}
        rendered = dict(zip(dataset["prompt"], prepared.rows, strict=True))
        rollout = MarcoRollout(
            rendered,
            turns=settings.turns,
            max_new_tokens=settings.max_completion_length,
            temperature=settings.temperature,
            rewards=RewardSettings(**weights),
        )
    before = _score(network, tokenizer, prepared)
    trainer = _trainer(network, tokenizer, dataset, settings=settings, out=out, prepared=prepared, rollout=rollout)
    resume = _last_checkpoint(out / CHECKPOINTS)
    if resume is not None:
        LOGGER.info("resuming GRPO from %s", resume)
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    _rewrite_metrics_log(out, trainer.state.log_history)
    trained = trainer.model
    if settings.lora_rank is not None:
        trained = trained.merge_and_unload()
    after = _score(trained, tokenizer, prepared)
    rewards = [e["reward"] for e in trainer.state.log_history if "reward" in e]
    summary = {
        **config,
        "domain": prepared.domain,
        "prompts": len(prepared.rows),
        "resumed_from": str(resume) if resume else None,
        "steps": trainer.state.global_step,
        "reward": {"first": rewards[0] if rewards else None, "last": rewards[-1] if rewards else None},
        "reward_curve": [round(float(r), 6) for r in rewards],
        "held_out": {"before": before, "after": after},
        "total_seconds": round(time.perf_counter() - started, 2),
    }
    _save_model(trained, tokenizer, out / MODEL_DIR)
    _write_json(out / SUMMARY_FILE, summary)
    return summary


def _score(network: Any, tokenizer: Any, prepared: _Prepared) -> dict[str, Any] | None:
    """ToolForge: the held-out first-call scores (as `synth train sft` reports them); MARCO: None (see eval)."""
    if prepared.domain != "toolforge" or not prepared.held:
        return None
    from synth.trainers.sft.train import score_first_calls

    return score_first_calls(network, tokenizer, prepared.held, max_new_tokens=96)


def _save_model(network: Any, tokenizer: Any, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    network.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if path.exists():
        shutil.rmtree(path)
    tmp.replace(path)
