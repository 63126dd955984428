"""The bottom layer: contracts, records, errors, config base, the dataset API, sink, manifest, card, LLM protocol."""
