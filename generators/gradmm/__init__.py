"""GRADMM (Nguyen et al., ICML 2025): gradient matching on the LM head with ADMM and projection to readable tokens,
the baseline DASA is measured against. Imports torch."""
