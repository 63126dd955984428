import polars as pl
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from synth.core.records import verdict_type
from synth.core.steps import Filter
from synth.validators.filters import VerdictFilter

_reasons = st.lists(st.sampled_from(["too_short", "cer_off: 0.2 vs 0.1", "scip:infeasible", "x"]), max_size=3)
_verdicts = st.none() | st.fixed_dictionaries(
    {"passed": st.none() | st.booleans(), "reasons": st.none() | _reasons, "scores": st.none()}
)


def _frame(rows: list[dict]) -> pl.DataFrame:
    schema = pa.schema([("verdict_a", verdict_type(())), ("verdict_b", verdict_type(())), ("n", pa.int64())])
    return pl.from_arrow(pa.Table.from_pylist(rows, schema=schema))


_rows = st.fixed_dictionaries({"verdict_a": _verdicts, "verdict_b": _verdicts, "n": st.integers(-(2**63), 2**63 - 1)})


@given(st.lists(_rows))
@settings(max_examples=150, deadline=None)
def test_vectorised_verdict_filter_decides_like_the_row_by_row_filter(rows):
    step = VerdictFilter(name="verdict", verifiers=("a", "b"))
    frame = _frame(rows)
    assert step.keep_frame(frame).to_dicts() == Filter.keep_frame(step, frame).to_dicts()


def test_verdict_filter_without_verifiers_keeps_every_row():
    decisions = VerdictFilter(name="verdict", verifiers=()).keep_frame(pl.DataFrame({"n": [1, 2]}))
    assert decisions.to_dicts() == [{"reason": None, "detail": None}] * 2


def test_verdict_filter_names_the_first_failing_verifier_and_its_reasons():
    rows = [
        {"verdict_a": {"passed": True, "reasons": [], "scores": None}, "verdict_b": None, "n": 1},
        {"verdict_a": {"passed": False, "reasons": ["too_short"], "scores": None}, "verdict_b": None, "n": 2},
        {
            "verdict_a": {"passed": True, "reasons": [], "scores": None},
            "verdict_b": {"passed": False, "reasons": ["cer_off: 0.2 vs 0.1", "x"], "scores": None},
            "n": 3,
        },
    ]
    decisions = VerdictFilter(name="verdict", verifiers=("a", "b")).keep_frame(_frame(rows)).to_dicts()
    assert decisions == [
        {"reason": None, "detail": None},
        {"reason": "a:too_short", "detail": None},
        {"reason": "b:cer_off", "detail": "cer_off: 0.2 vs 0.1; x"},
    ]
