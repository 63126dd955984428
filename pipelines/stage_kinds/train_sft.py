"""`trainer: sft`: supervised fine-tuning on a ToolForge dataset (the settings of `synth train sft`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveInt

from synth.core.stage import StageContext, StageInput
from synth.pipelines.stage_kinds.inputs import require_dataset
from synth.pipelines.stage_kinds.training import Trained, TrainSettings
from synth.trainers.model_card import TrainedOn


class SftTraining(TrainSettings):
    """Fine-tune a causal LM on the dialogues (assistant tokens only); score the first tool call on held-out rows."""

    trainer: Literal["sft"]
    model: str | None = Field(None, description="local HF causal LM directory; null = a tiny LM built from the rows")
    steps: PositiveInt = 200
    lr: NonNegativeFloat | None = Field(None, description="null = 3e-3 tiny LM, 2e-4 with lora_rank, 2e-5 full")
    lora_rank: PositiveInt | None = Field(None, description="train LoRA adapters of this rank (merged on save)")
    max_length: int = Field(4096, ge=16, description="tokens per dialogue (the start is kept)")
    eval_rows: NonNegativeInt = Field(8, description="dialogues held out for loss and tool-call accuracy")
    batch_size: PositiveInt = 4
    max_new_tokens: PositiveInt = Field(256, description="tokens decoded for each held-out first assistant turn")

    def check_inputs(self, inputs: Sequence[StageInput]) -> None:
        require_dataset(inputs, domains=("toolforge",), reader="trainer `sft`")

    def train(self, ctx: StageContext, model_dir: Path, *, seed: int) -> Trained:
        from synth.core.dataset import open_dataset
        from synth.trainers.sft import train_sft

        dataset = open_dataset(ctx.only_input().path, domain="toolforge", needs="SFT")
        metrics = train_sft(
            dataset.root,
            model=Path(self.model).expanduser() if self.model else None,
            out=model_dir,
            steps=self.steps,
            lr=self.lr,
            lora_rank=self.lora_rank,
            seed=seed,
            max_length=self.max_length,
            eval_rows=self.eval_rows,
            batch_size=self.batch_size,
            max_new_tokens=self.max_new_tokens,
        )
        return Trained(metrics, TrainedOn.of_dataset(dataset))
