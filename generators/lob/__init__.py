"""Limit order books from LOBSTER data: I/O (`lobster`), an L3 price-time book (`book`), a strict replayer (`replay`).

`SAMPLE_DIR` holds the shipped LOBSTER samples (AAPL level 10, first 999 events; AMZN level 1, full day).
"""

from pathlib import Path

from synth.validators.lob.book import BookError, LimitOrderBook, ReasonCode
from synth.validators.lob.engine import Replayer, ReplayReport, replay
from synth.validators.lob.lobster import (
    LobsterMessage,
    OrderbookRow,
    read_messages,
    read_orderbook,
    write_messages,
    write_orderbook,
)

SAMPLE_DIR = Path(__file__).parent / "data"

__all__ = [
    "SAMPLE_DIR",
    "BookError",
    "LimitOrderBook",
    "LobsterMessage",
    "OrderbookRow",
    "ReasonCode",
    "ReplayReport",
    "Replayer",
    "read_messages",
    "read_orderbook",
    "replay",
    "write_messages",
    "write_orderbook",
]
