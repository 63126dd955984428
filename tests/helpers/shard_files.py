"""What byte-identity tests compare: the sha256 of each Parquet shard file of a dataset, and a small papyrus run."""

from __future__ import annotations

from pathlib import Path

from synth.core.sink import sha256_file

# Three shards of the shipped EpiDoc sample at three levels: seconds per engine, still every code path.
SMALL_PAPYRUS_PAYLOAD = {
    "domain": "papyrus",
    "seed": 11,
    "shards": 3,
    "generator": {"levels": [0.02, 0.1, 0.3], "variants": ["uniform", "word"], "sources": ["epidoc"]},
}


def parquet_hashes(out: Path) -> dict[str, str]:
    """File name -> sha256 of every Parquet file in `out/data/` and `out/rejected/`."""
    return {p.name: sha256_file(p) for d in ("data", "rejected") for p in sorted((out / d).glob("*.parquet"))}
