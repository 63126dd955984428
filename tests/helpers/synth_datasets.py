"""Build small synth datasets in tests through the real writer (manifest, shards, card), never by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from synth.core.writer import DatasetWriter


def write_synth_dataset(root: Path, rows: pa.Table | list[dict[str, Any]], *, domain: str) -> Path:
    """Write `rows` as a one-shard, complete synth dataset of `domain` at `root` and return `root`."""
    table = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows)
    with DatasetWriter(root, domain=domain, config={"test_rows": table.num_rows}, schema=table.schema) as writer:
        writer.write_table(0, table)
        writer.finalize()
    return root
