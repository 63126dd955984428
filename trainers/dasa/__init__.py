"""DASA trainers: a tiny locally built reference LM (`base_lm`), adaptation tasks (`tasks`), LoRA on embeddings
or tokens with exact-match evaluation (`lora`). Every module here imports torch; import them lazily."""
