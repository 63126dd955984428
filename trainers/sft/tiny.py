"""A tiny Llama-style LM and a byte-level BPE tokenizer built locally (no download), for CPU tests and demos.

The tokenizer is trained on the rendered training dialogues, has the ChatML specials (`<|endoftext|>` pad,
`<|im_start|>`, `<|im_end|>` eos) and the tool tags as single tokens, and carries `TOOL_CHAT_TEMPLATE`. Inside a
`<SMILES> … </SMILES>` span every character is its own token (prose around it gets BPE words): a molecule is
then spelt the same way in the instruction, the feedback and the answer, so a tiny model can learn to copy and
edit it character by character, and an edit does not re-tokenise its neighbours. With `isolate=DIGIT` every
digit is its own token instead (OptiScribe: a size in the instruction is the same tokens in the JSON answer).
Same texts, sizes and seed give the same tokenizer and weights.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from synth.generators.dasa.base_lm import seeded
from synth.trainers.sft.chat_template import IM_END, PAD, SPECIAL_TOKENS, TAG_TOKENS, TOOL_CHAT_TEMPLATE

# one character of a whitespace-free run that is followed by ` </SMILES>`: the molecule of a `<SMILES> X </SMILES>`
SMILES_CHARACTER = r"\S(?=\S* </SMILES>)"
DIGIT = r"\d"


def build_tiny_tokenizer(texts: Iterable[str], *, vocab_size: int = 2048, isolate: str = SMILES_CHARACTER) -> Any:
    """A `PreTrainedTokenizerFast`: byte-level BPE with `vocab_size` merges+bytes learnt from `texts`; each match of
    the regex `isolate` is a token of its own."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(isolate), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False),
        ]
    )
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(list(texts), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token=IM_END, pad_token=PAD)
    tokenizer.add_tokens(list(TAG_TOKENS))
    tokenizer.chat_template = TOOL_CHAT_TEMPLATE
    return tokenizer


def build_tiny_model(
    tokenizer: Any, *, seed: int, hidden: int = 128, layers: int = 2, heads: int = 4, max_positions: int = 2048
) -> Any:
    """A randomly initialised Llama-style causal LM sized to `tokenizer` (tied embeddings)."""
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    with seeded(seed):
        model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None
    )
    return model
