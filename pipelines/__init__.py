"""Engine-agnostic pipeline core: records, step contracts, runner, Arrow sink, configs, LLM backends."""
