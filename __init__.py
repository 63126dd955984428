"""synth: data synthesis and curation pipelines that write Arrow datasets."""

__version__ = "0.1.0"
