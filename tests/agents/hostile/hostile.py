"""A hostile agent for the sandbox tests: ``hostile.py BEHAVIOUR``.

It plays the first legal action like a (dull) good agent, except that at its first
decision request it attacks its host in the way its argument names, prints one line
``hostile: ...`` to stderr saying what happened, and goes on playing if it survives:

- ``memory``: allocate 16 MiB blocks without bound (exits 1 at the MemoryError);
- ``fork``: fork children that leave the process group and sleep, until fork fails
  (or 512 children);
- ``network``: connect to 127.0.0.1:$HOSTILE_PORT;
- ``read``: read every path in $HOSTILE_PATHS (os.pathsep-separated; a folder is
  listed and its files read) and print what it got;
- ``bigfile``: write a file in its working directory without bound, 1 MiB at a time;
- ``spin``: burn the CPU forever;
- ``stderr-peek``: read the logs in $HOSTILE_PATHS and $HOSTILE_LOGS/*.log (where the
  referee keeps the agents' stderr);
- ``env``: print its whole environment, its working directory and its uid, as JSON.

At start it prints ``hostile: marker $HOSTILE_MARKER`` when that is set, so that another
agent has something to find in its log.
"""

import glob
import json
import os
import socket
import sys
import time

from arena.sdk import run

behaviour = sys.argv[1]


def say(text: str) -> None:
    print(f"hostile: {text}", file=sys.stderr, flush=True)


def peek(path: str) -> None:
    """Read a file (or list a folder and read its files) and say what came of it."""
    if os.path.isdir(path):
        try:
            names = sorted(os.listdir(path))
        except OSError as e:
            say(f"denied {path}: {e}")
            return
        say(f"listed {path}: {names}")
        for name in names:
            if os.path.isfile(os.path.join(path, name)):
                peek(os.path.join(path, name))
        return
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
    except OSError as e:
        say(f"denied {path}: {e}")
        return
    say(f"read OK {path} {len(data)} bytes: {data[:200]!r}")


def attack_memory() -> None:
    blocks = []
    try:
        while True:
            blocks.append(bytearray(16 << 20))
    except MemoryError:
        got = len(blocks) * 16
        blocks.clear()
        say(f"MemoryError after {got} MiB")
        sys.exit(1)


def attack_fork() -> None:
    count = 0
    while True:
        try:
            pid = os.fork()
        except OSError as e:
            say(f"forked {count} children, then fork failed: {e}")
            return
        if pid == 0:  # the child: leave the process group, so only the uid can find it
            try:
                os.setsid()
                time.sleep(300)
            finally:
                os._exit(0)
        count += 1
        if count >= 512:  # far above any limit the tests set; bounded should the sandbox fail
            say(f"forked {count} children and fork never failed")
            return


def attack_network() -> None:
    port = int(os.environ["HOSTILE_PORT"])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0) as s:
            s.sendall(b"hostile was here\n")
        say(f"connect OK to 127.0.0.1:{port}")
    except OSError as e:
        say(f"connect failed: {e}")


def attack_read() -> None:
    for path in os.environ.get("HOSTILE_PATHS", "").split(os.pathsep):
        if path:
            peek(path)


def attack_logs() -> None:
    attack_read()
    logs = os.environ.get("HOSTILE_LOGS")
    if logs:
        found = glob.glob(os.path.join(logs, "*.log"))
        say(f"glob {logs}: {len(found)} logs")
        for path in sorted(found):
            peek(path)


def attack_bigfile() -> None:
    chunk = b"\0" * (1 << 20)
    path = os.path.abspath("big.bin")
    written = 0
    try:
        with open(path, "wb", buffering=0) as f:
            while written < (1 << 40):
                written += f.write(chunk)  # short at the limit; the next one fails
    except OSError as e:
        say(f"write stopped after {written} bytes: {e}; file size {os.path.getsize(path)}")
        return
    say(f"wrote {written} bytes and was never stopped")


def attack_spin() -> None:
    say("spinning")
    while True:
        pass


def attack_env() -> None:
    say("env " + json.dumps({"environ": dict(os.environ), "cwd": os.getcwd(), "uid": os.getuid()}))


ATTACKS = {
    "memory": attack_memory,
    "fork": attack_fork,
    "network": attack_network,
    "read": attack_read,
    "bigfile": attack_bigfile,
    "spin": attack_spin,
    "stderr-peek": attack_logs,
    "env": attack_env,
}

attacked = False


def choose(observation: dict, legal: list[str]) -> str:
    global attacked
    if not attacked:
        attacked = True
        ATTACKS[behaviour]()
    return legal[0]


if __name__ == "__main__":
    if behaviour not in ATTACKS:
        sys.exit(f"hostile: unknown behaviour {behaviour!r}")
    if os.environ.get("HOSTILE_MARKER"):
        say(f"marker {os.environ['HOSTILE_MARKER']}")
    sys.exit(run(choose, name=f"hostile-{behaviour}", version="0"))
