"""The agent SDK under its public name: ``from arena.sdk import run`` (it lives in `arena.protocol.sdk`)."""

from .protocol.codec import Request
from .protocol.sdk import Setup, run

__all__ = ["Request", "Setup", "run"]
