"""A capacity-2 agent that answers in pairs, in reverse order, and dies if it is ever
sent a third request while two are outstanding (the referee must never do that)."""

import os
import select
import sys

from arena.protocol.codec import Answer, Ready, decode_referee_line, encode

held = []
buf = b""


def flush_held():
    for req in reversed(held):
        sys.stdout.buffer.write(encode(Answer(id=req.id, action=req.legal[0])))
    sys.stdout.buffer.flush()
    held.clear()


while True:
    ready, _, _ = select.select([0], [], [], 0.05)
    if not ready:
        flush_held()
        continue
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    *lines, buf = buf.split(b"\n")
    for line in lines:
        msg = decode_referee_line(line)
        if msg.type == "hello":
            sys.stdout.buffer.write(encode(Ready(protocol=1, name="pipelined", version="0", capacity=2)))
            sys.stdout.buffer.flush()
        elif msg.type == "request":
            if len(held) == 2:
                print("a third outstanding request", file=sys.stderr)
                sys.exit(5)
            held.append(msg)
            if len(held) == 2:
                flush_held()
        elif msg.type == "quit":
            sys.exit(0)
