"""DASA: synthetic input embeddings whose induced update aligns with the source data's desired update.

`objective` holds the activation-gradient machinery shared with GRADMM (`synth.generators.gradmm`), `synthesize`
the optimisation loop, `generator` the pipeline step, `bench` the comparison. All modules import torch.
"""
