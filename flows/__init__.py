"""Prefect 3 flows wrapping the pipeline runner: one task per shard."""
