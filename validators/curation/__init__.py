"""Curation algorithms over text columns: normalised keys, MinHash + LSH near-duplicates, n-gram
decontamination, spill files for indexes larger than memory. Pure numpy/numba; the orchestration over synth
datasets lives in `synth.pipelines.curation`."""
