"""The LOB commands end to end: generate, verify, export to LOBSTER and replay, train, benchmark."""

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from synth.cli.app import app
from synth.generators.lob import SAMPLE_DIR

runner = CliRunner()
AAPL = SAMPLE_DIR / "AAPL_2012-06-21_34200000_57600000_message_10.csv"
AMZN = SAMPLE_DIR / "AMZN_2012-06-21_34200000_57600000_message_1.csv"
SMALL = ["--set", "generator.windows=4", "--set", "generator.horizon=120", "--shards", "2", "--no-progress"]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module", params=["relobgen", "rejection"])
def dataset(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("lob") / request.param
    result = invoke("generate", "lob", "--out", out, "--set", f"generator.method={request.param}", *SMALL)
    assert result.exit_code == 0, result.output
    return out


def test_generated_rollouts_pass_the_strict_replay_verifier(dataset):
    table = pq.read_table(dataset / "data").to_pydict()
    assert len(table["id"]) == 4
    assert all(v["passed"] for v in table["verdict_replay"])
    assert table["replay_violations"] == [0.0] * 4 and table["replay_book_mismatches"] == [0.0] * 4
    assert all(
        len(times) == 120 and len(books) == 120 for times, books in zip(table["time"], table["book"], strict=True)
    )
    assert all(p["parent_ids"][0].startswith("AMZN_2012-06-21") for p in table["provenance"])
    if table["method"][0] == "rejection":
        assert sum(table["rejections"]) > 0 and sum(table["attempts"]) > 4 * 120
    else:
        assert sum(table["rejections"]) == 0 and sum(table["attempts"]) == 4 * 120
    verified = invoke("verify", dataset, "--json")
    assert verified.exit_code == 0, verified.output


def test_same_seed_and_config_give_byte_identical_shards(dataset, tmp_path):
    method = pq.read_table(dataset / "data").column("method")[0].as_py()
    again = tmp_path / "again"
    result = invoke("generate", "lob", "--out", again, "--set", f"generator.method={method}", *SMALL)
    assert result.exit_code == 0, result.output
    first = sorted((dataset / "data").glob("*.parquet"))
    second = sorted((again / "data").glob("*.parquet"))
    assert [p.name for p in first] == [p.name for p in second]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, second, strict=True))


def test_export_writes_lobster_files_the_strict_replayer_accepts(dataset, tmp_path):
    out = tmp_path / "lobster"
    result = invoke("lob", "export", dataset, "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[: result.stdout.rindex("}") + 1])
    assert report["rollouts"] == 4 and report["messages"] == 480
    assert report["violations"] == 0 and report["level_mismatches"] == 0 and report["levels_compared"] == 480 * 20
    message_file = next(out.glob("*/*_message_10.csv"))
    replayed = invoke("lob", "replay", message_file, "--json")
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.stdout)["level_mismatches"] == 0
    again = invoke("lob", "export", dataset, "--out", out)
    assert again.exit_code != 0 and "not empty" in again.output


@pytest.mark.parametrize("engine", ["python", "numba"])
def test_replay_of_the_aapl_sample_is_strictly_clean(engine):
    result = invoke("lob", "replay", AAPL, "--engine", engine, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["engine"] == engine
    assert report["violations"] == 0 and report["level_mismatches"] == 0 and report["levels_compared"] == 19_980


def test_replay_with_resync_reports_each_amzn_quirk_once():
    result = invoke("lob", "replay", AMZN, "--resync", "--json")
    assert result.exit_code == 1  # the quirks at their sources are still violations
    report = json.loads(result.stdout)
    assert report["resync"] is True and report["violations"] == 3147
    assert report["violations_by_code"] == {
        "not_fifo_head": 138,
        "size_exceeds": 471,
        "size_mismatch": 1,
        "unknown_id": 2537,
    }
    assert report["level_mismatches"] == report["quirks"]["resynced_rows"] == 3147
    alone = invoke("lob", "replay", AMZN, "--resync", "--no-orderbook")
    assert alone.exit_code != 0 and "--resync" in alone.output


def test_replay_flags_violations_with_exit_1(tmp_path):
    messages = tmp_path / "X_2012-01-01_0_1_message_1.csv"
    messages.write_text("1.0,1,5,100,5000,1\n2.0,3,6,100,5000,1\n2.5,1,5,10,4000,1\n")
    result = invoke("lob", "replay", messages, "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["violations_by_code"] == {"duplicate_id": 1, "unknown_id": 1}
    assert report["first_violation_row"] == 2


def _one_error_line(result) -> str:
    lines = [text for text in result.output.splitlines() if text.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


@pytest.mark.parametrize("content", ["", "Time,Type,OrderId,Size,Price,Direction\r\n", "\n\n"])
def test_replay_of_a_file_without_messages_is_an_input_error(tmp_path, content):
    messages = tmp_path / "X_2012-01-01_0_1_message_1.csv"
    messages.write_text(content)
    result = invoke("lob", "replay", messages)
    assert result.exit_code == 2
    line = _one_error_line(result)
    assert (
        line
        == f"error: {messages}: no message rows (the file is empty or holds only a header); give a LOBSTER message file"
    )


def test_replay_refuses_a_file_whose_times_go_backwards(tmp_path):
    messages = tmp_path / "X_2012-01-01_0_1_message_1.csv"
    messages.write_text("1.0,1,5,100,5000,1\n2.0,3,5,100,5000,1\n0.5,1,7,10,4000,1\n")
    result = invoke("lob", "replay", messages)
    assert result.exit_code == 2
    line = _one_error_line(result)
    assert line == f"error: {messages}: row 3, field `time`: 0.5 is before row 2's 2; LOBSTER rows are in time order"


def test_a_run_on_a_day_whose_times_go_backwards_fails_before_writing(tmp_path):
    day = tmp_path / "X_2012-01-01_0_1_message_1.csv"
    rows = [f"{34200 + i}.0,1,{i + 1},100,{5000 - i},1" for i in range(20)]
    rows[12] = "34100.0,1,13,100,4988,1"
    day.write_text("\n".join(rows) + "\n")
    (tmp_path / "X_2012-01-01_0_1_orderbook_1.csv").write_text("5100,1,5000,100\n" * 20)
    out = tmp_path / "out"
    result = invoke("generate", "lob", "--out", out, "--set", f"generator.messages={day}", "--no-progress")
    assert result.exit_code == 2
    line = _one_error_line(result)
    assert line == f"error: {day}: row 13, field `time`: 34100 is before row 12's 34211; LOBSTER rows are in time order"
    assert not out.exists()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2.0,1,5,100,5000", "row 2, field `*`: expected 6 columns, found 5"),
        ("2.0,x,5,100,5000,1", "row 2, field `type`: not a number"),
        ("2.0,9,5,100,5000,1", "row 2, field `type`: unknown event type 9"),
        ("2.0,1,5,-100,5000,1", "row 2, field `size`: negative size -100"),
    ],
)
def test_malformed_lobster_rows_get_a_one_line_error(tmp_path, line, expected):
    messages = tmp_path / "bad_message_1.csv"
    messages.write_text(f"1.0,1,4,100,5000,1\n{line}\n")
    result = invoke("lob", "replay", messages)
    assert result.exit_code != 0
    lines = [text for text in result.output.strip().splitlines() if text.strip()]
    assert len(lines) == 1 and expected in lines[0] and str(messages) in lines[0].replace("\n", "")


def test_train_lob_writes_a_model_generation_can_load(tmp_path):
    result = invoke("train", "lob", "--out", tmp_path, "--train-fraction", "0.2", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["pointer"]["3"]["mean_loglik"] > summary["pointer"]["3"]["uniform_loglik"]
    again = invoke("train", "lob", "--out", tmp_path, "--train-fraction", "0.2")
    assert again.exit_code != 0 and "--overwrite" in again.output
    out = tmp_path / "data"
    generated = invoke(
        "generate",
        "lob",
        "--out",
        out,
        "--set",
        f"generator.model={tmp_path}",
        "--set",
        "generator.train_fraction=0.2",
        *SMALL,
    )
    assert generated.exit_code == 0, generated.output
    assert all(v["passed"] for v in pq.read_table(out / "data").column("verdict_replay").to_pylist())


def test_bench_lob_speed_writes_ratios(tmp_path):
    out = tmp_path / "speed.json"
    result = invoke("bench", "lob-speed", "--rollouts", "3", "--horizon", "100", "--repeats", "1", "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["relobgen_replayable"] is True
    assert report["methods"]["relobgen"]["replayed_messages"] == 300
    rejection = report["methods"]["rejection"]
    assert rejection["raw_messages"] > rejection["replayed_messages"] == 300
    assert report["ratios"]["rejection_raw_over_replayed"] == rejection["raw_messages"] / 300
    # Every message samples at least its event and delay heads; ReLOBGen at most four positions.
    assert 2 <= report["methods"]["relobgen"]["draws_per_replayed_message"] <= 4
    assert rejection["draws"] >= 2 * rejection["raw_messages"]  # refused attempts drew their heads too
    assert report["ratios"]["rejection_over_relobgen_draws_per_replayed_message"] > 1
    replayed = report["replay"]
    assert replayed["lenient_with_orderbook"]["level_mismatches"] == 0
    for name in ("strict_with_orderbook", "strict_messages_only"):  # both engines find the same violations
        python, numba = replayed[name], replayed[f"numba_{name}"]
        assert (numba["engine"], python["engine"]) == ("numba", "python")
        assert (numba["violations"], numba["level_mismatches"]) == (python["violations"], python["level_mismatches"])


def test_bench_lob_realism_writes_distances_and_histograms(tmp_path):
    out = tmp_path / "realism.json"
    result = invoke("bench", "lob-realism", "--rollouts", "3", "--horizon", "100", "--bootstrap", "5", "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["replayable_share"]["relobgen"] == 1.0
    assert report["replayable_share"]["zero-intelligence"] == 1.0
    assert report["real_messages"] == 300
    for method in ("relobgen", "rejection", "zero-intelligence"):
        scores = report["methods"][method]["scores"]
        assert 0.0 <= scores["spread"]["l1"] <= 1.0
        assert scores["spread"]["l1_ci"][0] <= scores["spread"]["l1_ci"][1]
        assert report["methods"][method]["summary"]["mean_w1"] >= 0.0
    assert (tmp_path / "realism.png").read_bytes()[:4] == b"\x89PNG"
