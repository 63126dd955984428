"""Shared fixtures: an isolated Prefect home, a tiny in-process domain, and one Prefect test server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pyarrow as pa
import pytest
from pydantic import PositiveInt

from synth.core.config import StrictModel
from synth.core.records import Verdict
from synth.core.registry import DomainSpec, register_domain
from synth.core.steps import GeneratedBatch, Generator, ShardContext, Verifier

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_HOME", str(Path(os.environ.get("TMPDIR", "/tmp")) / f"synth-prefect-{os.getpid()}"))


class ToyConfig(StrictModel):
    rows_per_shard: PositiveInt = 10
    batch_size: PositiveInt = 4


@dataclass(frozen=True, kw_only=True)
class ToyGenerator(Generator):
    """Random integers with a parity label; rows with value % 5 == 0 are generator-level rejections."""

    rows_per_shard: int
    rows_per_batch: int
    schema: ClassVar[pa.Schema] = pa.schema([("value", pa.int64()), ("label", pa.string())])

    def generate(self, ctx: ShardContext):
        rng = ctx.rng("toy")
        values = rng.integers(0, 1000, size=self.rows_per_shard).tolist()
        for start in range(0, len(values), self.rows_per_batch):
            batch = GeneratedBatch()
            for value in values[start : start + self.rows_per_batch]:
                if value % 5 == 0:
                    batch.reject("multiple_of_five", detail=f"{value} = 5 x {value // 5}", values={"value": value})
                else:
                    batch.add({"value": value, "label": "even" if value % 2 == 0 else "odd"}, parents=(f"v{value}",))
            yield batch


@dataclass(frozen=True, kw_only=True)
class EvenVerifier(Verifier):
    reads: ClassVar[tuple[str, ...]] = ("value",)
    scores: ClassVar[tuple[str, ...]] = ("remainder",)

    def verify(self, table: pa.Table) -> list[Verdict]:
        out = []
        for value in table.column("value").to_pylist():
            passed = value % 2 == 0
            out.append(Verdict(passed, () if passed else (f"odd: {value} % 2 = 1",), {"remainder": float(value % 2)}))
        return out


TOY_DOMAIN = DomainSpec(
    name="toy",
    summary="Integers labelled by parity (test domain).",
    config_model=ToyConfig,
    build_generator=lambda c: ToyGenerator(name="toy", rows_per_shard=c.rows_per_shard, rows_per_batch=c.batch_size),
    build_verifiers=lambda c: {"even": EvenVerifier(name="even")},
    verifier_names=("even",),
    card_defaults={"license": "mit"},
)
register_domain(TOY_DOMAIN)


@pytest.fixture
def toy_payload() -> dict:
    return {"domain": "toy", "seed": 3, "shards": 3, "generator": {"rows_per_shard": 12, "batch_size": 5}}


@pytest.fixture(scope="session")
def prefect_server() -> Iterator[None]:
    """One temporary Prefect server for every flow test of the session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def base_lm_dir(tmp_path_factory):
    """A tiny DASA reference LM, built once per session (a few seconds of pre-training; needs torch)."""
    from synth.generators.dasa.base_lm import build_base_lm

    return build_base_lm(tmp_path_factory.mktemp("dasa") / "base-lm", seed=0, steps=150)


@pytest.fixture
def reference(base_lm_dir):
    """The tiny reference LM, freshly loaded (tests may change its weights)."""
    from synth.generators.dasa.base_lm import load_reference

    return load_reference(base_lm_dir)
