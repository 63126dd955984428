"""GRPO on TRL's GRPOTrainer with the domains' verifiers as rewards (`rewards.REWARDS`: name → factory)."""

from synth.trainers.grpo.rewards import REWARDS, RewardFunction, make_reward, register_reward

__all__ = ["REWARDS", "RewardFunction", "make_reward", "register_reward"]
