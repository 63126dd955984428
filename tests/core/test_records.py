import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth.core.records import (
    PROVENANCE_TYPE,
    Verdict,
    canonical_json,
    check_reason_code,
    make_row_id,
    output_schema,
    rejected_schema,
    split_reason,
    verdict_type,
)


def test_row_id_depends_on_content_not_key_order():
    a = make_row_id("gen", {"x": 1, "y": "α"})
    assert a == make_row_id("gen", {"y": "α", "x": 1})
    assert a != make_row_id("gen", {"x": 2, "y": "α"})
    assert a != make_row_id("other", {"x": 1, "y": "α"})
    assert len(a) == 32


def test_output_schema_orders_framework_columns_around_domain_columns():
    schema = output_schema(pa.schema([("text", pa.string())]), [("cer", ("distance",))])
    assert schema.names == ["id", "text", "cer_distance", "verdict_cer", "provenance"]
    assert schema.field("verdict_cer").type == verdict_type(["distance"])
    assert schema.field("provenance").type == PROVENANCE_TYPE
    rejected = rejected_schema(schema)
    assert rejected.names[-3:] == ["filter_reason", "filter_step", "filter_detail"]
    assert not rejected.field("filter_reason").nullable and rejected.field("filter_detail").nullable
    assert rejected.field("id").nullable


def test_output_schema_refuses_a_domain_column_named_like_a_framework_column():
    with pytest.raises(ValueError, match="duplicate column names"):
        output_schema(pa.schema([("id", pa.string())]), [])


def test_reason_codes_are_stable_words_and_details_carry_the_values():
    assert split_reason("scip:infeasible") == ("scip:infeasible", "")
    assert split_reason("size_mismatch: size `n` is 5, asked [10, 10]") == (
        "size_mismatch",
        "size `n` is 5, asked [10, 10]",
    )
    for bad in ("rejection gave up after 0 of 300 messages", "Too short", "", "x:"):
        with pytest.raises(ValueError, match="is not stable"):
            check_reason_code(bad)
    with pytest.raises(ValueError, match="is not stable"):
        Verdict(False, ("1 of 300 messages replayed",))


def _reference_json(value):
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


_json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.dates() | st.decimals()
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        | st.dictionaries(st.integers(), inner, max_size=3)
    ),
    max_leaves=20,
)


@given(_json_values)
@settings(max_examples=400, deadline=None)
def test_canonical_json_is_the_text_of_the_reference_json_dumps(value):
    """Row ids hash this text, so the prebuilt encoder must give json.dumps' exact text (NaN, -0.0, 1e-05,
    nested and non-ASCII values, int keys, objects turned into strings)."""
    assert canonical_json(value) == _reference_json(value)


def test_row_id_is_blake2b_of_the_generator_and_the_canonical_row():
    import hashlib

    row = {"b": [1.5e-07, float("nan"), None], "a": 'ἀγαθῇ\n"τύχῃ"', "c": {"z": True, "y": -0.0}}
    expected = hashlib.blake2b(b"gen\x00" + _reference_json(row).encode(), digest_size=16).hexdigest()
    assert make_row_id("gen", row) == expected
    assert make_row_id("gen", row) == expected  # the cached prefix state is copied, never updated in place
