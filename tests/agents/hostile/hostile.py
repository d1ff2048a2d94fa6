"""A hostile agent for the sandbox tests: ``hostile.py BEHAVIOUR``.

It plays the first legal action like a (dull) good agent, except that at its first
decision request it attacks its host in the way its argument names, prints ``hostile:
...`` lines to stderr saying what happened, and goes on playing if it survives:

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
- ``env``: print its whole environment, its working directory and its uid, as JSON;
- ``thief``: hunt for the root seed (its environment, every /proc/*/cmdline and environ
  it can see, its inherited file descriptors, the paths in $HOSTILE_PATHS, then brute
  force over root seeds 0..$HOSTILE_TRIES against its own ``match_start`` seed, for at
  most about 1.5 s of CPU); with the seed it rebuilds every deal and plays with perfect
  information, without it it plays exactly like the bundled ``greedy`` agent;
- ``signals``: SIGSTOP and SIGKILL every pid in the ranges of $HOSTILE_PIDS
  (``"1000-1200,4242"``; not itself nor its parent), count the outcomes by errno, then
  ``kill(-1, SIGKILL)``;
- ``daemon``: double-fork a daemon in a session of its own that sleeps an hour
  (``sleep 3600``, with ``HOSTILE_ROLE=daemon`` added to its environment);
- ``fill``: write 1 MiB chunks into /tmp, /dev/shm and its working directory, each until
  a write fails (or 2 GiB), and say how much each took and why it stopped.
- ``memfd``: hold memory outside RLIMIT_DATA: write 64 MiB into one anonymous memory file
  (``memfd_create``) after another, up to $HOSTILE_MEMFD_MB (default 768), and say how much
  it holds against its RLIMIT_DATA.

At start it prints ``hostile: marker $HOSTILE_MARKER`` when that is set, so that another
agent has something to find in its log. With $HOSTILE_SLEEP_MS it sleeps that long before
each answer (so that a test can catch a run in the middle).
"""

import errno
import glob
import json
import os
import re
import shutil
import signal
import socket
import sys
import time
from collections import Counter

from arena.bots.search import Hidden, InfoSet, policy_action, solve_actions, state_from_observation
from arena.bots.strategies import GreedyStrategy
from arena.game import action_str, derive_seed, get_variant, new_deal
from arena.game.state import OVER
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


# -- thief ------------------------------------------------------------------------------------------------------
class Tap:
    """The referee's lines, passed on to `run` unchanged; notes each match's seed and seat
    (``match_start``) and the match of the request being answered."""

    def __init__(self, stream):
        self.stream = stream
        self.matches: dict[str, tuple[int, int]] = {}  # match id -> (own seed, seat)
        self.current: str | None = None

    def __iter__(self):
        for raw in self.stream:
            try:
                msg = json.loads(raw)
            except ValueError:
                msg = None
            if isinstance(msg, dict):
                if msg.get("type") == "match_start":
                    self.matches[msg["match_id"]] = (msg["seed"], msg["seat"])
                elif msg.get("type") == "request":
                    self.current = msg["match_id"]
            yield raw


tap = Tap(sys.stdin.buffer)
greedy = GreedyStrategy()
root_seed: int | None = None
seen: list[tuple[str, bytes]] = []  # (where, what) of everything the thief read


def match_seed(root: int, match_id: str) -> int | None:
    """The match seed of ``match_id`` (``a~b#k.g``) under root seed ``root`` (arena.tournament.schedule)."""
    m = re.fullmatch(r"(.+)~(.+)#(\d+)\.\d+", match_id)
    return derive_seed(root, "pair", *sorted((m.group(1), m.group(2))), int(m.group(3))) if m else None


def fits(root: int, match_id: str) -> bool:
    """Whether ``root`` gives this seat's ``match_start`` seed (arena.play.referee.agent_seed)."""
    own, seat = tap.matches[match_id]
    ms = match_seed(root, match_id)
    return ms is not None and derive_seed(ms, "agent", seat) == own


def grab(path: str, limit: int = 1 << 20) -> None:
    """Read a file and say what came of it; keep what was read."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    except OSError as e:
        say(f"denied {path}: {e}")
        return
    seen.append((path, data))
    say(f"read OK {path} {len(data)} bytes: {data[:200]!r}")


def hunt() -> None:
    global root_seed
    seen.append(("environ", json.dumps(dict(os.environ)).encode()))
    say("env " + json.dumps(dict(os.environ)))
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    say(f"pids {pids} (I am {os.getpid()})")
    for pid in pids:
        for what in ("cmdline", "environ"):
            grab(f"/proc/{pid}/{what}")
    for fd in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the fd of the listing itself, closed since
            continue
        say(f"fd {fd} -> {target}")
        if int(fd) > 2 and os.path.exists(f"/proc/self/fd/{fd}"):
            try:
                rfd = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
                try:
                    data = os.read(rfd, 1 << 16)
                finally:
                    os.close(rfd)
                seen.append((f"fd {fd}", data))
                say(f"read OK fd {fd} {len(data)} bytes: {data[:200]!r}")
            except OSError as e:
                say(f"denied fd {fd}: {e}")
    for path in os.environ.get("HOSTILE_PATHS", "").split(os.pathsep):
        if path:
            if os.path.isdir(path):
                try:
                    names = sorted(os.listdir(path))
                except OSError as e:
                    say(f"denied {path}: {e}")
                    continue
                say(f"listed {path}: {names}")
                for name in names:
                    grab(os.path.join(path, name))
            else:
                grab(path)
    match_id = tap.current
    if match_id not in tap.matches:
        say(f"no match_start for {match_id!r}: nothing to check seeds against")
        return
    # Every number in what it read is a candidate first (a --seed on a command line, a
    # seed = in a config); then brute force.
    tries = 0
    for where, data in seen:
        for text in set(re.findall(rb"\d{1,40}", data)):
            tries += 1
            if fits(int(text), match_id):
                root_seed = int(text)
                say(f"found root seed {root_seed} in {where}")
                return
    limit = int(os.environ.get("HOSTILE_TRIES", "200000"))
    stop = time.process_time() + 1.5
    for s in range(limit + 1):
        tries += 1
        if fits(s, match_id):
            root_seed = s
            say(f"found root seed {root_seed} after {tries} tries")
            return
        if s % 1024 == 0 and time.process_time() > stop:
            break
    say(f"no seed found after {tries} tries")


def deal_value(st, me: int) -> tuple[int, int]:
    """What ``st`` (a perfect-information world) is worth to ``me`` when played out by the
    playout policy for both seats: (game points, card-point margin)."""
    while st.phase != OVER:
        st.apply_legal(policy_action(st))
    r = st.result
    g = 0 if r.winner is None else (r.game_points if r.winner == me else -r.game_points)
    return g, r.points[me] - r.points[me ^ 1]


def cheat(obs: dict, legal: list[str]) -> str | None:
    """The best action with every card known, from the true deal; None if it does not fit."""
    ms = match_seed(root_seed, tap.current) if tap.current in tap.matches else None
    if ms is None or not fits(root_seed, tap.current):
        return None
    v = get_variant(obs["variant"])
    dealt = new_deal(v, derive_seed(ms, "deal", obs["deal"]), obs["dealer"])
    info = InfoSet(obs, v)
    talon = tuple(dealt.stock[len(dealt.stock) - info.n_down :]) if info.n_down > 0 else ()
    opp = info.pool | info.known
    for c in talon:
        opp &= ~(1 << c)
    if opp.bit_count() != info.opp_size:
        return None
    state = state_from_observation(obs, v, Hidden(opp, talon))
    me = obs["seat"]
    if any(action_str(a) not in legal for a in state.legal_actions()):
        return None
    if state.strict:  # every card known and no more drawing: solve it exactly
        return action_str(max(solve_actions(state, me), key=lambda av: av[1])[0])
    best, best_value = None, None
    for a in state.legal_actions():
        child = state.clone()
        child.apply_legal(a)
        value = deal_value(child, me)
        if best_value is None or value > best_value:
            best, best_value = action_str(a), value
    return best


def play_thief(obs: dict, legal: list[str]) -> str:
    if root_seed is not None:
        action = cheat(obs, legal)
        if action is not None:
            return action
    return greedy(obs, legal)


# -- signals, daemon, fill ---------------------------------------------------------------------------------------
def pid_ranges(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        if lo:
            out.extend(range(int(lo), int(hi or lo) + 1))
    return out[:100_000]


def attack_signals() -> None:
    skip = {1, os.getpid(), os.getppid()}
    counts = {"SIGSTOP": Counter(), "SIGKILL": Counter()}
    for pid in pid_ranges(os.environ.get("HOSTILE_PIDS", "")):
        if pid in skip or pid <= 0:
            continue
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(pid, sig)
                counts[sig.name]["ok"] += 1
            except OSError as e:
                counts[sig.name][errno.errorcode.get(e.errno, str(e.errno))] += 1
    say("signals " + "; ".join(f"{name} {dict(sorted(c.items()))}" for name, c in counts.items()))
    say("kill(-1, SIGKILL)")
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError as e:
        say(f"kill(-1, SIGKILL) failed: {e}")
    else:
        say("kill(-1, SIGKILL) returned and I am alive")


def attack_daemon() -> None:
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            if os.fork() == 0:  # the daemon: reparented, in a session of its own, pipes kept
                env = {**os.environ, "HOSTILE_ROLE": "daemon"}
                sleep = shutil.which("sleep")
                if sleep:
                    os.execve(sleep, [sleep, "3600"], env)
                time.sleep(3600)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    say(f"daemon started: pid {child}'s child, in a session of its own")


def attack_fill() -> None:
    chunk = b"\xa5" * (1 << 20)
    name = f"hostile-fill-{os.environ.get('HOSTILE_MARKER', 'x')}.bin"
    for where in ("/tmp", "/dev/shm", os.getcwd()):
        written, error, t0 = 0, None, time.perf_counter()
        try:
            with open(os.path.join(where, name), "wb", buffering=0) as f:
                while written < (2 << 30):
                    written += f.write(chunk)
        except OSError as e:
            error = e
        say(f"fill {where}: {written} bytes in {time.perf_counter() - t0:.2f} s, then {error}")


def attack_memfd() -> None:
    import resource

    want = int(os.environ.get("HOSTILE_MEMFD_MB", "768")) << 20
    chunk = b"\x5a" * (1 << 20)
    fds: list[int] = []
    held, error = 0, None
    try:
        while held < want:
            fds.append(os.memfd_create("hostile"))
            for _ in range(64):
                os.write(fds[-1], chunk)
                held += len(chunk)
    except OSError as e:
        error = e
    data = resource.getrlimit(resource.RLIMIT_DATA)[0]
    say(f"memfd: holding {held >> 20} MiB in {len(fds)} memory files, RLIMIT_DATA {data >> 20} MiB; then {error}")
    held_fds.extend(fds)  # kept open for the rest of its life


held_fds: list[int] = []

ATTACKS = {
    "memory": attack_memory,
    "fork": attack_fork,
    "network": attack_network,
    "read": attack_read,
    "bigfile": attack_bigfile,
    "spin": attack_spin,
    "stderr-peek": attack_logs,
    "env": attack_env,
    "thief": hunt,
    "signals": attack_signals,
    "daemon": attack_daemon,
    "fill": attack_fill,
    "memfd": attack_memfd,
}

attacked = False
pause = int(os.environ.get("HOSTILE_SLEEP_MS", "0")) / 1000  # per decision, to make a run last


def choose(observation: dict, legal: list[str]) -> str:
    global attacked
    if not attacked:
        attacked = True
        ATTACKS[behaviour]()
    if pause:
        time.sleep(pause)
    if behaviour == "thief":
        return play_thief(observation, legal)
    return legal[0]


if __name__ == "__main__":
    if behaviour not in ATTACKS:
        sys.exit(f"hostile: unknown behaviour {behaviour!r}")
    if os.environ.get("HOSTILE_MARKER"):
        say(f"marker {os.environ['HOSTILE_MARKER']}")
    stdin = tap if behaviour == "thief" else None
    sys.exit(run(choose, name=f"hostile-{behaviour}", version="0", stdin=stdin))
