"""`synth curate` and the `curate` stage: ordered dataset-level operations (dedup, decontamination, filters,
balancing) over one or more synth datasets, written as a synth dataset with every dropped row and its reason."""
