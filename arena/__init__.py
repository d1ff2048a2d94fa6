"""sixtysix-arena: a bot-vs-bot arena and rating harness for Sixty-Six and Schnapsen."""

__version__ = "0.1.0"
