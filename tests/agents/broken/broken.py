"""A deliberately broken agent for the fault tests: ``broken.py BEHAVIOUR``.

It plays legal random moves like a good agent, except that at its third request (or at
start, for the start-up faults) it misbehaves in the way its argument names. ``burn``
is not broken: it burns 0.3 s of CPU at each match start (for the CPU-limit tests);
nor is ``two-handed``, whose manifest declares only the two-handed games (for the tests of
a game an agent does not play).
"""

import os
import random
import subprocess
import sys
import time

from arena.protocol.codec import Answer, Pong, Ready, decode_referee_line, encode

behaviour = sys.argv[1]
#: "NAME-table": the same behaviour, speaking protocol 2 and playing every game.
table = behaviour.endswith("-table")
behaviour = behaviour.removesuffix("-table")
out = sys.stdout.buffer


def send(data: bytes) -> None:
    out.write(data)
    out.flush()


if behaviour == "crash-at-start":
    print("broken agent: giving up before the handshake", file=sys.stderr)
    sys.exit(3)
if behaviour == "stdout-before-ready":
    send(b"Hello from the agent! Starting up...\n")
if behaviour == "stderr-flood":
    chunk = b"x" * 65535 + b"\n"
    for _ in range(48):  # 3 MiB, three times the referee's log cap
        sys.stderr.buffer.write(chunk)
    sys.stderr.flush()
if behaviour == "orphan-child":
    child = subprocess.Popen(["sleep", "300"])
    with open(os.environ["BROKEN_PIDFILE"], "w") as f:
        f.write(str(child.pid))

rng = random.Random(1)
requests = 0
for raw in sys.stdin.buffer:
    msg = decode_referee_line(raw)
    kind = msg.type
    if kind == "hello":
        if table:
            from arena.game import ALL_PRESETS

            send(encode(Ready(protocol=2, name=behaviour, version="0", games=list(ALL_PRESETS))))
        else:  # a version-1 agent ("v1" even when the game needs 2); "wrong-version" speaks none offered
            send(encode(Ready(protocol=9 if behaviour == "wrong-version" else 1, name=behaviour, version="0")))
    elif kind == "ping":
        send(encode(Pong(id=msg.id)))
    elif kind == "quit":
        break
    elif kind == "match_start" and behaviour == "burn":
        end = time.process_time() + 0.3  # CPU time, each match: wears out its CPU limit
        while time.process_time() < end:
            pass
    elif kind == "request":
        requests += 1
        action = rng.choice(msg.legal)
        if requests == 3:
            if behaviour == "crash-mid-match":
                print("broken agent: crashing mid-match", file=sys.stderr)
                sys.exit(1)
            if behaviour == "hang":
                time.sleep(3600)
            if behaviour == "late":
                time.sleep(1.0)
            if behaviour == "spin":
                end = time.process_time() + 1.0
                while time.process_time() < end:
                    pass
            if behaviour == "garbage":
                send(b"this is not json\n")
                continue
            if behaviour == "oversized":
                send(b'{"type":"action","id":' + str(msg.id).encode() + b',"action":"' + b"x" * 200_000 + b'"}\n')
                continue
            if behaviour == "wrong-id":
                send(encode(Answer(id=msg.id + 1000, action=action)))
                continue
            if behaviour == "illegal":
                action = next(a for a in ("pass", "exchange", "draw", "play:9S", "play:AC") if a not in msg.legal)
            if behaviour == "stdout-closed":
                os.close(1)
                time.sleep(3600)
            if behaviour == "orphan-child":
                sys.exit(1)  # the child keeps our pipes open; the referee must still notice
        send(encode(Answer(id=msg.id, action=action)))
