"""Drop reasons are stable codes counted in the manifest; the values behind them stay on the rejected row."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import pyarrow.parquet as pq
import pytest

from synth.core.config import parse_config
from synth.core.steps import Filter, GeneratedBatch
from synth.pipelines.execution import run_local
from synth.validators.filters import RangeFilter


def test_codes_are_counted_and_details_stay_on_the_rows(tmp_path, toy_payload):
    payload = toy_payload | {"filters": [{"kind": "verdict"}, {"kind": "range", "column": "value", "max": 600}]}
    summary = run_local(parse_config(payload), tmp_path / "out")
    rejected = pq.read_table(tmp_path / "out" / "rejected").to_pylist()
    codes = {row["filter_reason"] for row in rejected}
    assert codes <= {"even:odd", "multiple_of_five", "value_above_max"} and len(codes) == 3
    assert summary.manifest["totals"]["rejected"] == {c: sum(r["filter_reason"] == c for r in rejected) for c in codes}
    for row in rejected:
        value = row["value"]
        expected = {
            "even:odd": f"odd: {value} % 2 = 1",
            "multiple_of_five": f"{value} = 5 x {value // 5}",
            "value_above_max": f"value={value}",
        }[row["filter_reason"]]
        assert row["filter_detail"] == expected
    card = (tmp_path / "out" / "README.md").read_text()
    assert "| even:odd |" in card and "% 2 = 1" not in card
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["totals"]["rejected"].keys() == codes


def test_a_reason_that_embeds_values_is_refused_where_it_is_made():
    with pytest.raises(ValueError, match="is not stable"):
        GeneratedBatch().reject("gave up after 0 of 300 messages")
    assert RangeFilter(name="r", column="x", max=1).keep({"x": 2}) == (False, "x_above_max", "x=2")


def test_a_row_filter_may_return_a_detail():
    @dataclass(frozen=True, kw_only=True)
    class ShortFilter(Filter):
        reads: ClassVar[tuple[str, ...]] = ("text",)

        def keep(self, row):
            return len(row["text"]) > 2 or (False, "too_short", f"{len(row['text'])} characters")

    import polars as pl

    frame = ShortFilter(name="short").keep_frame(pl.DataFrame({"text": ["abcd", "ab", "a"]}))
    assert frame.to_dict(as_series=False) == {
        "reason": [None, "too_short", "too_short"],
        "detail": [None, "2 characters", "1 characters"],
    }
