import pytest

from synth.core.config import load_config, parse_config
from synth.core.errors import ConfigError


def write(tmp_path, text):
    path = tmp_path / "pipe.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_unknown_top_level_field_names_file_and_field(tmp_path):
    path = write(tmp_path, "domain: toy\nsede: 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message == f"{path}: field `sede`: unknown field"
    assert info.value.exit_code == 2


def test_wrong_type_in_domain_section_names_the_nested_field(tmp_path):
    path = write(tmp_path, "domain: toy\ngenerator:\n  rows_per_shard: many\n")
    with pytest.raises(ConfigError, match=r"pipe.yaml: field `generator.rows_per_shard`: .*integer.*'many'"):
        load_config(path)


def test_unknown_domain_field_and_unknown_domain(tmp_path):
    with pytest.raises(ConfigError, match=r"field `generator.rows`: unknown field"):
        load_config(write(tmp_path, "domain: toy\ngenerator: {rows: 3}\n"))
    with pytest.raises(ConfigError, match=r"field `domain`: unknown domain 'nope'"):
        load_config(write(tmp_path, "domain: nope\n"))


def test_a_verifier_listed_twice_is_a_one_line_error_naming_it(tmp_path):
    path = write(tmp_path, "domain: toy\nverifiers: [even, odd, even]\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: field `verifiers`: verifiers listed more than once: ['even']")
    assert "\n" not in str(info.value)


def test_bad_yaml_and_missing_file_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"line 2: invalid YAML") as info:
        load_config(write(tmp_path, "domain: toy\nkey: value: other\n"))
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "missing.yaml")


def test_unknown_verifier_is_refused():
    with pytest.raises(ConfigError, match="unknown verifier 'nope'"):
        parse_config({"domain": "toy", "verifiers": ["nope"]})


def test_hash_covers_data_fields_only_and_fills_defaults():
    base = parse_config({"domain": "toy"})
    assert base.config_hash() == parse_config({"domain": "toy", "generator": {"rows_per_shard": 10}}).config_hash()
    assert (
        base.config_hash()
        == parse_config(
            {"domain": "toy", "execution": {"engine": "prefect", "out": "x"}, "card": {"license": "mit"}}
        ).config_hash()
    )
    assert base.config_hash() != parse_config({"domain": "toy", "seed": 1}).config_hash()
    assert base.config_hash() != parse_config({"domain": "toy", "shards": 2}).config_hash()
