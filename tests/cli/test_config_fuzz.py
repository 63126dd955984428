"""Fuzz the config reader and `synth run` with random bytes, malformed YAML and random `--set` values.

Whatever the input, the reader raises only `ConfigError` (one line naming the file), and the CLI exits 0-3 with
at most one `error:` line on stderr and no half-written file visible in OUT.
"""

import json
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from synth.cli.app import app
from synth.core.config import PipelineConfig, parse_config, read_config_mapping
from synth.core.errors import ConfigError
from synth.core.sink import INCOMPLETE_CARD

runner = CliRunner()
KEYS = ["domain", "seed", "shards", "generator", "verifiers", "filters", "card", "rows_per_shard", "batch_size"]
KEYS += ["kind", "column", "min", "max", "license", "tags", "pretty_name", "value", "even"]
keys = st.sampled_from(KEYS) | st.text(max_size=4)
scalars = st.none() | st.booleans() | st.integers(-2, 4) | st.floats(width=32) | st.text(max_size=8)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3))
small = st.integers(-1, 4)
configs = st.fixed_dictionaries(
    {},
    optional={
        "domain": st.sampled_from(["toy", "papyrus-nope"]) | st.text(max_size=4),
        "seed": st.integers(-(2**70), 2**70) | values,
        "shards": small | values,
        "generator": st.fixed_dictionaries({}, optional={"rows_per_shard": small, "batch_size": small}) | values,
        "verifiers": st.lists(st.sampled_from(["even", "odd"]), max_size=2) | values,
        "filters": st.lists(st.fixed_dictionaries({"kind": st.sampled_from(["verdict", "range", "x"])}), max_size=2)
        | values,
        "card": st.dictionaries(st.sampled_from(["license", "tags", "pretty_name", "language"]), values, max_size=2),
    },
)
MANGLES = ["[", "{", ": ", "- ", "\t", "'", '"', "&a ", "*a", "!!python/object:os.system ", "\x00", "%YAML 9\n", "\n  "]


@st.composite
def config_bytes(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["binary", "yaml", "mangled", "toy", "toy"]))
    if kind == "binary":
        return draw(st.binary(max_size=48))
    config = draw(configs)
    if kind == "toy":  # a valid run, with some random fields on top
        rows = draw(st.integers(4, 12))
        base = {"domain": "toy", "shards": draw(st.integers(1, 2)), "generator": {"rows_per_shard": rows}}
        config = base | draw(st.sampled_from([{}, {}, {k: v for k, v in config.items() if k != "shards"}]))
    text = yaml.safe_dump(config, allow_unicode=True)
    if kind == "mangled":
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(MANGLES)) + text[cut:]
    return text.encode(draw(st.sampled_from(["utf-8", "utf-8", "utf-16"])))


set_values = st.text(max_size=12) | values.map(lambda v: yaml.safe_dump(v, default_flow_style=True).strip())
SET_KEYS = ["seed", "generator.batch_size", "verifiers", "filters", "card.tags", "card.license", "domain", "generator"]
overrides = st.just([]) | st.lists(
    st.tuples(st.sampled_from([*SET_KEYS, "seed.x", "", "a..b"]) | st.text(max_size=6), set_values), max_size=3
)


@settings(max_examples=100, deadline=None)
@given(config_bytes())
def test_the_reader_raises_only_one_line_config_errors(raw):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_bytes(raw)
        try:
            config = parse_config(read_config_mapping(path), source=str(path))
        except ConfigError as error:
            message = str(error)
            assert message.startswith(str(path)) and len(message.splitlines()) == 1, message
        else:
            assert isinstance(config, PipelineConfig)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config_bytes(), overrides)
def test_synth_run_never_lets_a_traceback_out_nor_leaves_half_written_files(raw, assignments):
    with tempfile.TemporaryDirectory() as folder:
        path, out = Path(folder) / "fuzz.yaml", Path(folder) / "out"
        path.write_bytes(raw)
        sets = [f"--set={key}={value}" for key, value in assignments]
        result = runner.invoke(app, ["run", str(path), "--out", str(out), "--no-progress", *sets])
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        event(f"exit {result.exit_code}")
        assert result.exit_code in {0, 1, 2, 3}
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        if result.exit_code:
            assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        else:
            assert not lines, result.stderr
        files = [p for p in out.rglob("*")] if out.exists() else []
        assert not [p for p in files if ".tmp-" in p.name]
        card, manifest = out / "README.md", out / "manifest.json"
        if manifest.exists():  # then a card exists too: the real one exactly when the run completed
            complete = json.loads(manifest.read_text(encoding="utf-8"))["status"] == "complete"
            assert card.is_file() and (card.read_text(encoding="utf-8") != INCOMPLETE_CARD) == complete
            assert complete or result.exit_code != 0
