"""Verifiers of LOB rollouts."""

from synth.validators.lob.replay import LobReplayVerifier, RolloutReplay, replay_rollout

__all__ = ["LobReplayVerifier", "RolloutReplay", "replay_rollout"]
