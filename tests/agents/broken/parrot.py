"""Says ready, then answers every request with the bytes of the file $PARROT_FILE."""

import os
import sys

from arena.protocol.codec import Ready, decode_referee_line, encode

with open(os.environ["PARROT_FILE"], "rb") as f:
    line = f.read()
for raw in sys.stdin.buffer:
    msg = decode_referee_line(raw)
    if msg.type == "hello":
        sys.stdout.buffer.write(encode(Ready(protocol=1, name="parrot", version="0")))
    elif msg.type == "request":
        sys.stdout.buffer.write(line)
    elif msg.type == "quit":
        break
    sys.stdout.buffer.flush()
