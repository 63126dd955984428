"""The dataset card: a YAML header that `datasets` reads (configs, licence, tags) and a readable body."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml
from huggingface_hub import DatasetCardData

from synth.core.sink import DATA_DIR, REJECTED_DIR, SPLIT, shard_data_files, split_sort_key


class CardSource(Protocol):
    """What a card needs to know about what made the dataset (a `DomainSpec`, or a `CardSubject`)."""

    name: str
    summary: str
    card_defaults: Mapping[str, Any]
    attribution: str


@dataclass(frozen=True)
class CardSubject:
    """The card facts of a derived dataset (written by a stage rather than a domain's generator)."""

    name: str
    summary: str = ""
    card_defaults: Mapping[str, Any] = field(default_factory=dict)
    attribution: str = ""


def card_header(manifest: Mapping[str, Any], domain: CardSource) -> str:
    """The `---`-fenced YAML header with `configs` for kept and rejected rows."""
    card = manifest["config"].get("card") or {}
    defaults = domain.card_defaults
    data = DatasetCardData(
        pretty_name=card.get("pretty_name") or defaults.get("pretty_name") or f"synth {domain.name}",
        license=card.get("license") or defaults.get("license"),
        language=card.get("language") or list(defaults.get("language", [])),
        tags=sorted({"synth", "synthetic", domain.name, *defaults.get("tags", []), *card.get("tags", [])}),
        configs=[
            {
                "config_name": "default",
                "default": True,
                "data_files": [{"split": name, "path": f"{DATA_DIR}/{name}-*.parquet"} for name in _splits(manifest)],
            },
            {
                "config_name": "rejected",
                "data_files": [{"split": SPLIT, "path": f"{REJECTED_DIR}/*.parquet"}],
            },
        ],
    )
    fingerprint = _fingerprint(manifest)
    if fingerprint:
        data.dataset_info = {"config_name": "default", "download_checksums": fingerprint}
    return f"---\n{data.to_yaml()}\n---\n"


def _splits(manifest: Mapping[str, Any]) -> list[str]:
    """`train`, or the splits of a dataset whose generator declares a split column."""
    found = {entry["split"] for shard in manifest["shards"] for entry in shard_data_files(shard)}
    return sorted(found, key=split_sort_key) if found - {SPLIT} else [SPLIT]


def _fingerprint(manifest: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Shard checksums for the card's `dataset_info`.

    `datasets` names its cache after the folder name and a hash of the card's configs and dataset_info only,
    so two synth datasets in folders of the same name (or one folder regenerated) would share a stale cache;
    the checksums make that hash follow the data.
    """
    checksums = {}
    for shard in manifest["shards"]:
        rejected = {"path": shard.get("rejected_path"), "sha256": shard.get("rejected_sha256"), "bytes": None}
        files = [*shard_data_files(shard), rejected]
        for entry in files:
            if entry.get("path") and entry.get("sha256"):
                checksums[entry["path"]] = {"num_bytes": entry.get("bytes"), "checksum": entry["sha256"]}
    return checksums


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _category_section(categories: Mapping[str, Mapping[str, int]]) -> list[str]:
    if not categories:
        return []
    parts = ["## Counts by category (kept rows)\n"]
    for column, counts in categories.items():
        parts.append(_table((column, "rows"), sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) + "\n")
    return parts


def render_card(manifest: Mapping[str, Any], domain: CardSource) -> str:
    """The whole README.md of a dataset directory; deterministic for a given manifest."""
    totals = manifest["totals"]
    config_yaml = yaml.safe_dump(manifest["config"], sort_keys=False, allow_unicode=True).strip()
    verifiers = [
        (name, counts["passed"], counts["total"], f"{100 * counts['pass_rate']:.2f} %")
        for name, counts in totals["verifiers"].items()
    ]
    reasons = list(totals["rejected"].items())
    shards = [(s["index"], s["status"], s.get("rows", ""), s.get("rejected_rows", "")) for s in manifest["shards"]]
    parts = [
        card_header(manifest, domain),
        f"# {domain.name}: synthetic dataset made by synth\n",
        f"{domain.summary}\n",
        "## Load\n",
        "```python\nfrom datasets import load_dataset\n"
        f'kept = load_dataset("path/to/this/dir")["{_splits(manifest)[0]}"]\n'
        'rejected = load_dataset("path/to/this/dir", "rejected")["train"]\n```\n',
        "## Counts\n",
        _table(
            ("generated", "kept", "rejected", "shards"),
            [(totals["generated"], totals["rows"], totals["rejected_rows"], manifest["num_shards"])],
        )
        + "\n",
        *_category_section(totals.get("categories", {})),
        "## Verifier pass rates\n",
        (_table(("verifier", "passed", "total", "rate"), verifiers) if verifiers else "No verifiers ran.") + "\n",
        "## Rejection reasons\n",
        (_table(("reason", "rows"), reasons) if reasons else "No rows were rejected.") + "\n",
        "## Shards\n",
        _table(("shard", "status", "kept", "rejected"), shards) + "\n",
        "## Provenance\n",
        "Every row carries a content-derived `id` and a `provenance` struct (generator name and version, run "
        "seed, shard index, config hash, parent ids, synth version). The same config and seed reproduce every "
        f"shard byte for byte. Config hash: `{manifest['config_hash']}`.\n",
        "## Config\n",
        f"```yaml\n{config_yaml}\n```\n",
    ]
    if domain.attribution:
        parts += ["## Source data and licence\n", f"{domain.attribution.strip()}\n"]
    return "\n".join(parts)
