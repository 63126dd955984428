import pyarrow as pa
import pytest

from synth.core.records import (
    PROVENANCE_TYPE,
    make_row_id,
    output_schema,
    rejected_schema,
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
    assert rejected.names[-2:] == ["filter_reason", "filter_step"]
    assert rejected.field("id").nullable


def test_output_schema_refuses_a_domain_column_named_like_a_framework_column():
    with pytest.raises(ValueError, match="duplicate column names"):
        output_schema(pa.schema([("id", pa.string())]), [])
