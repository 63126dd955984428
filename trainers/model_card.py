"""Model cards: the `README.md` of a trained model folder names the data it was trained on.

    ---
    tags: [synth, synth-sft]
    synth:
      trainer: sft
      dataset: {path: out/tf/dialogues, domain: toolforge, rows: 12, manifest_sha256: 3f2a...}
      settings: {steps: 20, eval_rows: 4, ...}
      metrics: {held_out_loss_before: 5.9, held_out_loss_after: 2.1, ...}    # headline figures only
    ---
    # sft model trained by synth
    ...

The full figures stay where each trainer writes them (`metrics.json`, `lob_model.json`). A `README.md` already in
the folder (peft writes one beside an adapter) is merged, not replaced: its front matter keeps its keys (tags are
joined), and its text follows synth's section, which a later write replaces in place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from synth.core.dataset import SynthDataset
from synth.core.sink import sha256_file, write_text_atomic

CARD_FILE = "README.md"
BEGIN = "<!-- synth:model-card -->"
END = "<!-- /synth:model-card -->"
SYNTH_KEY = "synth"
FRONT = "---\n"

Scalar = str | int | float | bool | None


@dataclass(frozen=True)
class TrainedOn:
    """What a model was trained on: a dataset folder (with its manifest sha256) or plain files.

    `rows` counts what the trainer read: dataset rows, or LOBSTER messages for a message file.
    """

    path: str
    domain: str | None
    rows: int | None
    manifest_sha256: str | None = None
    files: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of_dataset(cls, dataset: SynthDataset) -> TrainedOn:
        """A synth dataset: its folder, domain, kept rows and manifest sha256."""
        return cls(str(dataset.root), dataset.domain, dataset.rows, dataset.manifest_sha256)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (`files` as `{path, sha256}` entries, left out when there are none)."""
        out: dict[str, Any] = {
            "path": self.path,
            "domain": self.domain,
            "rows": self.rows,
            "manifest_sha256": self.manifest_sha256,
        }
        if self.files:
            out["files"] = [{"path": path, "sha256": digest} for path, digest in self.files]
        return out


def trained_on_files(
    paths: Sequence[Path], *, domain: str, rows: int, folder: Path | None = None, manifest_sha256: str | None = None
) -> TrainedOn:
    """Plain input files (e.g. a LOBSTER message + orderbook pair), each by path and sha256.

    With `folder` (an export stage's folder holding them), the card names the folder and its manifest.
    """
    files = tuple((str(path), sha256_file(path)) for path in paths)
    return TrainedOn(str(folder or paths[0]), domain, rows, manifest_sha256, files)


def write_model_card(
    model_dir: str | Path,
    *,
    trainer: str,
    dataset: SynthDataset | TrainedOn,
    settings: Mapping[str, Any],
    metrics: Mapping[str, Any],
) -> Path:
    """Write (or merge into) `model_dir/README.md` naming the data, the trainer, its settings and headline metrics.

    `metrics` is the trainer's full result; the card keeps its headline figures (`headline_metrics`). Returns the
    card's path.
    """
    trained_on = dataset if isinstance(dataset, TrainedOn) else TrainedOn.of_dataset(dataset)
    headline = headline_metrics(trainer, metrics)
    block = {
        "trainer": trainer,
        "dataset": trained_on.to_dict(),
        "settings": _plain(settings),
        "metrics": headline,
    }
    path = Path(model_dir) / CARD_FILE
    meta, body = _split(path.read_text(encoding="utf-8")) if path.is_file() else ({}, "")
    tags = [t for t in meta.get("tags") or [] if t not in ("synth", f"synth-{trainer}")]
    meta = {**meta, "tags": ["synth", f"synth-{trainer}", *tags], SYNTH_KEY: block}
    section = _section(trainer, trained_on, block["settings"], headline)
    text = FRONT + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + FRONT + section + _without_section(body)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)
    return path


def read_model_card(model_dir: str | Path) -> dict[str, Any]:
    """The `synth` block of a model card's front matter (empty when the folder has no synth card)."""
    path = Path(model_dir) / CARD_FILE
    if not path.is_file():
        return {}
    return dict(_split(path.read_text(encoding="utf-8"))[0].get(SYNTH_KEY) or {})


def headline_metrics(trainer: str, metrics: Mapping[str, Any]) -> dict[str, Scalar]:
    """The figures a card shows for `trainer`'s result (unknown trainers: the result's top-level scalars)."""
    pick = HEADLINES.get(trainer)
    if pick is None:
        return {key: value for key, value in metrics.items() if isinstance(value, Scalar)}  # type: ignore[arg-type,misc]
    return pick(metrics)


def _sft_headline(metrics: Mapping[str, Any]) -> dict[str, Scalar]:
    loss = metrics["loss"]
    out: dict[str, Scalar] = {
        "train_dialogues": metrics["rows"]["train"],
        "held_out_dialogues": metrics["rows"]["held_out"],
        "held_out_loss_before": loss["held_out_before"],
        "held_out_loss_after": loss["held_out_after"],
    }
    if "first_answer" in metrics:  # MARCO trajectories as chat
        answers = metrics["first_answer"]
        return {
            **out,
            "first_answer_parse_rate_after": answers["after"]["parse_rate"],
            "first_answer_validity_before": answers["before"]["validity"],
            "first_answer_validity_after": answers["after"]["validity"],
            "first_answer_success_rate_after": answers["after"]["success_rate"],
        }
    calls = metrics["tool_call"]
    return {
        **out,
        "first_call_parse_rate_after": calls["after"]["parse_rate"],
        "first_call_name_accuracy_before": calls["before"]["name_accuracy"],
        "first_call_name_accuracy_after": calls["after"]["name_accuracy"],
        "first_call_exact_accuracy_after": calls["after"]["exact_accuracy"],
    }


def _grpo_headline(summary: Mapping[str, Any]) -> dict[str, Scalar]:
    out: dict[str, Scalar] = {
        "domain": summary["domain"],
        "prompts": summary["prompts"],
        "steps": summary["steps"],
        "reward_first": summary["reward"]["first"],
        "reward_last": summary["reward"]["last"],
    }
    held = summary.get("held_out") or {}
    for when in ("before", "after"):
        scores = held.get(when) or {}
        for key in ("name_accuracy", "exact_accuracy"):
            if key in scores:
                out[f"first_call_{key}_{when}"] = scores[key]
    return out


def _papyrus_headline(result: Mapping[str, Any]) -> dict[str, Scalar]:
    metric = result["metric"]
    out: dict[str, Scalar] = {"task": result["task"], "metric": metric, "measurable": result["measurable"]}
    if not result["measurable"]:
        return {**out, "reason": result["reason"]}
    out[f"{metric}_clean"] = result["clean"].get(metric)
    for entry in result["results"]:
        out[f"{metric}_cer_{entry['cer']:g}"] = entry.get(metric)
    return {**out, "largest_cer_retention_ge_threshold": result["tolerance"]["largest_cer"]}


def _lora_embeds_headline(metrics: Mapping[str, Any]) -> dict[str, Scalar]:
    return {"task": metrics["task"], "test_rows": metrics["test_rows"], "exact_match": metrics["exact_match"]}


def _lob_headline(training: Mapping[str, Any]) -> dict[str, Scalar]:
    """From a LOB model's `training` record: what it was fit on and the pointer's fit per cancel kind."""
    out: dict[str, Scalar] = {"train_messages": training["train_messages"], "pointer": training["pointer"]["kind"]}
    for event, stats in sorted(training["pointer"]["fit"].items()):
        name = {"2": "partial_cancel", "3": "delete"}.get(event, event)
        out[f"{name}_mean_loglik"] = stats["mean_loglik"]
        out[f"{name}_uniform_loglik"] = stats["uniform_loglik"]
        out[f"{name}_top1_accuracy"] = stats["top1_accuracy"]
    return out


HEADLINES: dict[str, Callable[[Mapping[str, Any]], dict[str, Scalar]]] = {
    "sft": _sft_headline,
    "grpo": _grpo_headline,
    "papyrus": _papyrus_headline,
    "lora-embeds": _lora_embeds_headline,
    "lob": _lob_headline,
}


def _section(trainer: str, data: TrainedOn, settings: Mapping[str, Any], headline: Mapping[str, Scalar]) -> str:
    facts = [f"domain `{data.domain}`", f"{data.rows} rows"]
    if data.manifest_sha256:
        facts.append(f"manifest sha256 `{data.manifest_sha256}`")
    lines = [
        BEGIN,
        f"# {trainer} model trained by synth",
        "",
        f"Trained with the synth trainer `{trainer}` on `{data.path}` ({', '.join(facts)}).",
        "",
    ]
    if data.files:
        lines += ["| file | sha256 |", "|---|---|", *(f"| `{p}` | `{d}` |" for p, d in data.files), ""]
    lines += ["## Settings", "", "| setting | value |", "|---|---|"]
    lines += [f"| {key} | `{_cell(value)}` |" for key, value in settings.items()]
    lines += ["", "## Headline metrics", "", "| metric | value |", "|---|---|"]
    lines += [f"| {key} | {_cell(value)} |" for key, value in headline.items()]
    return "\n".join([*lines, END, ""])


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _plain(value: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-ready values (paths as strings) so the front matter is plain YAML."""
    return json.loads(json.dumps(dict(value), default=str))


def _split(text: str) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a card; a card without front matter is all body."""
    if text.startswith(FRONT):
        head, sep, body = text[len(FRONT) :].partition("\n" + FRONT)
        if sep:
            meta = yaml.safe_load(head)
            if isinstance(meta, dict):
                return meta, body
    return {}, text


def _without_section(body: str) -> str:
    """The body without an earlier synth section, starting on a blank line when anything is left."""
    start, end = body.find(BEGIN), body.find(END)
    if start != -1 and end > start:
        body = body[:start] + body[end + len(END) :]
    body = body.strip("\n")
    return "\n" + body + "\n" if body else ""
