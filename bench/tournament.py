"""Tournament throughput and memory: many matches between two Python random agents.

    python bench/tournament.py [--matches 10000] [--concurrency 8] [--in-flight 2000] [--no-sandbox]

Runs, each in a fresh child process so that peak memory is the referee's own:
(1) the echo round-trip rate (as in bench/protocol.py); (2) a head-to-head tournament
of ``--matches`` matches between two copies of the random agent through the full runner
(pools, store, one transaction per match) at ``--concurrency``; (3) the same with
``--in-flight`` matches at once against agents that declare that capacity, for the
referee's peak RSS. Prints matches/s, decisions/s, peak RSS, and decisions/s as a share
of the echo rate. (2) runs twice, with the sandbox (the default) and without, for the
sandbox's cost on throughput.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AGENT = """import sys
from arena.sdk import run
from arena.bots.strategies import RandomStrategy
raise SystemExit(run(factory=RandomStrategy, name="random", version="1.0.0", capacity=int(sys.argv[1])))
"""


def make_agents(folder: Path, capacity: int) -> list[str]:
    names = []
    for name in ("random-a", "random-b"):
        d = folder / name
        d.mkdir()
        (d / "random_agent.py").write_text(AGENT)
        (d / "agent.toml").write_text(
            f'name = "{name}"\nversion = "1"\nlanguage = "python"\n'
            f'command = ["{{python}}", "random_agent.py", "{capacity}"]\n'
        )
        names.append(str(d))
    return names


def tournament(matches: int, concurrency: int, capacity: int, sandboxed: int = 1) -> dict:
    import trio

    from arena.results.store import Store
    from arena.runtime.sandbox import Policy, Sandbox
    from arena.tournament.runner import run_tournament
    from arena.tournament.schedule import load_config

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        agents = make_agents(tmp, capacity)
        cfg = load_config(
            None,
            {"format": "head-to-head", "agents": agents, "pairs": matches // 2, "seed": 1,
             "concurrency": concurrency, "store": str(tmp / "bench.sqlite")},
        )  # fmt: skip
        specs = cfg.schedule()
        with Store(cfg.store) as store:
            store.bind_config(cfg.identity(), cfg.config_hash)
            run_id = store.start_run("bench", None, [])
            t0 = time.perf_counter()
            with Sandbox(Policy(enabled=bool(sandboxed))) as sandbox:
                played = trio.run(lambda: run_tournament(cfg, specs, store, run_id, sandbox=sandbox))
            dt = time.perf_counter() - t0
            rows = store.matches()
        decisions = sum(r["decisions0"] + r["decisions1"] for r in rows)
        faults = sum(r["fault"] is not None for r in rows)
    return {
        "matches": played,
        "seconds": dt,
        "matches_per_s": played / dt,
        "decisions_per_s": decisions / dt,
        "faults": faults,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def echo() -> dict:
    import trio

    sys.path.insert(0, str(ROOT / "bench"))
    from protocol import echo_rate

    return {"echo_per_s": trio.run(echo_rate, 20_000)}


def child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=10_000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--in-flight", type=int, default=2000)
    ap.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        kind, *rest = args.child
        print(json.dumps(echo() if kind == "echo" else tournament(*map(int, rest))))
        return
    e = child("echo")["echo_per_s"]
    print(f"echo agent round trips: {e:,.0f} /s")
    rates = {}
    for label, flag in (("sandboxed", "1"), ("no sandbox", "0")):
        r = child("run", str(args.matches), str(args.concurrency), "16", flag)
        rates[label] = r["matches_per_s"]
        print(
            f"{r['matches']} matches, {args.concurrency} in flight, {label}: {r['seconds']:.1f} s, "
            f"{r['matches_per_s']:.1f} matches/s, "
            f"{r['decisions_per_s']:,.0f} decisions/s = {100 * r['decisions_per_s'] / e:.0f}% of the echo rate; "
            f"faults {r['faults']}; referee peak RSS {r['peak_rss_mb']:.0f} MB"
        )
    print(f"sandboxed / no sandbox throughput: {rates['sandboxed'] / rates['no sandbox']:.2f}")
    n = max(args.in_flight * 2, 4000)
    r = child("run", str(n), str(args.in_flight), str(args.in_flight))
    print(
        f"{r['matches']} matches, {args.in_flight} in flight (agents of capacity {args.in_flight}, so one process "
        f"each): {r['matches_per_s']:.1f} matches/s, faults {r['faults']}; referee peak RSS {r['peak_rss_mb']:.0f} MB"
    )


if __name__ == "__main__":
    main()
