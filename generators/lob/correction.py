"""The LOBS5 post-hoc correction baseline: free-form messages repaired after the fact, discarded when unrepairable.

The same field model as ReLOBGen and the rejection baseline draws every field free-form; then LOBS5's rules
(Nagy et al. 2023, `lob/inference.py`) change the message until the book can take it:
- a new order that would be marketable (at or through the opposite best) is discarded;
- an execution is moved to the best price of its side and to the head of that queue, its size clipped to the
  head's remainder;
- a cancel or delete is matched to a resting order at its price (original size, then closest submission time;
  else pre-window volume at that price), and discarded when nothing matches;
- a partial cancel of the whole remainder or more becomes a delete; a delete of less than the remainder becomes a
  partial cancel; a delete of more is clipped.

Discards are redrawn (counted in `rejections`); each repair is counted in `corrections`. What the replayer
receives is therefore always valid, but it is not what the model drew: the replayed distribution shifts, which is
what the realism benchmark measures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.generators.lob.samplers import FreeFormMessage, RejectionSampler, match_reference
from synth.generators.lob.state import MarketState
from synth.validators.lob.book import BUY
from synth.validators.lob.lobster import LobsterMessage


@dataclass
class CorrectionSampler(RejectionSampler):
    """Draws free-form messages and repairs them as LOBS5 does; redraws only what cannot be repaired."""

    def _candidate(self, state: MarketState, u: np.ndarray) -> LobsterMessage | None:
        """The repaired message, or None (counted under `rejections`) when LOBS5 would discard it."""
        raw = self._propose_fields(state, u)
        if raw is None:
            self.rejections["no_reference"] += 1
            return None
        return self._repair(state, raw)

    def _repair(self, state: MarketState, raw: FreeFormMessage) -> LobsterMessage | None:
        """The corrected message, or None (counted under `rejections`) when LOBS5 would discard it."""
        if raw.event == 1:
            return self._new_order(state, raw)
        if raw.event == 4:
            return self._execution(state, raw)
        order_id = match_reference(
            state, side=raw.side, price=raw.price, original_size=raw.reference_size, submitted=raw.submitted
        )
        if order_id is None:
            self.rejections["no_reference"] += 1
            return None
        remaining = state.book.orders[order_id].size
        event, size = raw.event, raw.size
        if event == 2 and size >= remaining:
            event, size = 3, remaining
            self.corrections["cancel_became_delete"] += 1
        elif event == 3 and size < remaining:
            event = 2
            self.corrections["delete_became_cancel"] += 1
        elif event == 3 and size > remaining:
            size = remaining
            self.corrections["delete_size_clipped"] += 1
        return LobsterMessage(raw.time, event, order_id, size, raw.price, raw.side)

    def _new_order(self, state: MarketState, raw: FreeFormMessage) -> LobsterMessage | None:
        opposite = state.book.best_price(-raw.side)
        if opposite is not None and (raw.price >= opposite if raw.side == BUY else raw.price <= opposite):
            self.rejections["marketable_discarded"] += 1
            return None
        return LobsterMessage(raw.time, 1, state.next_id, raw.size, raw.price, raw.side)

    def _execution(self, state: MarketState, raw: FreeFormMessage) -> LobsterMessage:
        book = state.book
        best = book.best_price(raw.side)
        assert best is not None, "a reference is drawn only on a side with resting orders"
        head = next(iter(book.levels[raw.side][best].queue.values()))
        if raw.price != best:
            self.corrections["execution_moved_to_best"] += 1
        size = raw.size
        if size > head.size:
            size = head.size
            self.corrections["execution_size_clipped"] += 1
        return LobsterMessage(raw.time, 4, head.order_id, size, best, raw.side)
