"""What the sandbox costs: agent starts, decision latency and tournament throughput.

    python bench/sandbox.py [--samples 5] [--starts 20] [--matches 200] [--latency-matches 16] [--quick]

Every figure is measured with the sandbox (`Sandbox(Policy())`, what a run uses by
default) and without it (``--no-sandbox``: `Policy(enabled=False)`), the two interleaved
sample by sample (AB BA AB ...) so that the load of this shared machine falls on both
alike, and printed with its spread; nothing is asserted. As root it runs twice: as root,
then again as the unprivileged user of tests/asuser.py (that half prints its figures as
JSON for this process to show); as a normal user the root half is skipped.

1. Start + handshake + stop of one agent process through `arena.runtime.process.open_agent`, for
   the Python ``greedy``, the C ``c-cautious`` (a private copy, built first; its start shows the sandbox's
   fixed cost most clearly) and ``node-greedy`` when ``node`` is installed: median and
   p10/p90 in ms, the part until the agent is ready, the part stopping it, and the CPU
   time of all the processes involved (the referee's and its children's).
2. Decision latency: matches of greedy against random on the referee
   (`arena.play.referee.play_match`), one at a time, alternating match by match between a
   sandboxed pair of processes and a plain one (the same seeds, so the same decisions):
   the wall latency of each decision as the referee records it, median and p90 in µs,
   and the agent's CPU time per decision.
3. Tournament throughput: `arena.tournament.runner.run_tournament` of ``--matches`` matches random
   against greedy at concurrency 2 into a new SQLite store in a temp folder, agents
   started on demand as in a real run: decisions/s and matches/s, and decisions per
   CPU-second (all processes), which the load of other users disturbs less than wall time.
4. Where a sandboxed start goes: the C agent started by plain subprocesses with parts of
   the launch command line alone (the agent; the Python launcher; bubblewrap, as this
   user; bubblewrap with the launcher as its init; as root all of it, with the outer
   launcher that takes the uid), wall time and CPU time of each.

The targets the ratios are reported against: start + handshake at most 2x, decision
latency at most 1.05x, throughput at least 0.95x.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.errors import UserError  # noqa: E402
from arena.game import get_variant  # noqa: E402
from arena.play.referee import agent_seed, play_match  # noqa: E402
from arena.protocol.codec import PROTOCOL_VERSION, Hello, Quit, TimeControl, encode  # noqa: E402
from arena.runtime.agents import Manifest, build_all, resolve  # noqa: E402
from arena.runtime.process import AgentFault, Launch, open_agent  # noqa: E402
from arena.runtime.sandbox import JAIL, SANDBOX_SRC, Limits, Policy, Sandbox, jail_argv, probe  # noqa: E402

MODES = ("sandbox", "plain")  # plain: --no-sandbox
LABEL = {"sandbox": "sandbox", "plain": "--no-sandbox"}
TARGET_START = 2.0  # sandbox / plain start + handshake, at most
TARGET_LATENCY = 1.05  # sandbox / plain decision latency, at most
TARGET_THROUGHPUT = 0.95  # sandbox / plain decisions per second, at least
VARIANT = get_variant("sixty-six")
TIME_CONTROL = TimeControl(move_ms=1000, bank_ms=0, first_move_ms=5000, grace_ms=200)


def progress(msg: str) -> None:
    print(f"  .. {msg}", file=sys.stderr, flush=True)


def orders(n: int) -> list[tuple[str, str]]:
    """AB BA AB BA ...: each mode goes first in every other round."""
    return [MODES if i % 2 == 0 else MODES[::-1] for i in range(n)]


def hello(seed: int = 1) -> Hello:
    return Hello(protocol=PROTOCOL_VERSION, variant=VARIANT.to_dict(), time_control=TIME_CONTROL.to_dict(), seed=seed)


# -- 1. start + handshake + stop ---------------------------------------------------------------------------------
def cpu_s() -> float:
    """CPU seconds of this process and of its children reaped so far (with theirs)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


async def one_start(sandbox: Sandbox, m: Manifest) -> tuple[float, float, float]:
    """(until ready, stopping, CPU time of all processes) in seconds: launch, spawn,
    handshake; quit, reap, clean up."""
    c0 = cpu_s()
    t0 = time.perf_counter()
    with sandbox.launch(m) as launch:
        async with open_agent(launch, hello()):
            t1 = time.perf_counter()
    return t1 - t0, time.perf_counter() - t1, cpu_s() - c0


async def starts(boxes: dict[str, Sandbox], agents: list[Manifest], n: int) -> dict[str, dict[str, list]]:
    out: dict[str, dict[str, list]] = {m.name: {mode: [] for mode in MODES} for m in agents}
    for m in agents:  # a first start of each, not counted: caches
        for mode in MODES:
            await one_start(boxes[mode], m)
    for order in orders(n):
        for m in agents:
            for mode in order:
                try:
                    out[m.name][mode].append(await one_start(boxes[mode], m))
                except AgentFault as e:  # counted and shown, not measured
                    out[m.name].setdefault("failed", []).append(f"{mode}: {e}")
    return out


# -- 2. decision latency -----------------------------------------------------------------------------------------
async def latency_sample(
    boxes: dict[str, Sandbox], pair: list[Manifest], seeds: Sequence[int], first: int
) -> dict[str, dict[str, list[float]]]:
    """Wall latencies and the agents' CPU times (ms) of the decisions of ``seeds``' matches,
    each way: both pairs of processes are started, then each match is played by one and
    then by the other (which goes first alternates), one match at a time."""
    out: dict[str, dict[str, list[float]]] = {mode: {"wall": [], "cpu": []} for mode in MODES}
    with ExitStack() as stack:
        async with AsyncExitStack() as astack:
            procs: dict[str, list] = {mode: [] for mode in MODES}
            for mode in MODES:
                for seat, m in enumerate(pair):
                    launch = stack.enter_context(boxes[mode].launch(m))
                    agent = await astack.enter_async_context(open_agent(launch, hello(agent_seed(1, seat))))
                    procs[mode].append(agent)
            for k, seed in enumerate(seeds):
                for mode in orders(first + k + 1)[-1]:
                    rec = await play_match(f"bench-{seed}", seed, VARIANT, procs[mode], TIME_CONTROL)
                    if rec.forfeit is not None:
                        raise RuntimeError(f"match {seed} ({mode}): {rec.forfeit}")
                    out[mode]["wall"] += rec.latency_ms[0] + rec.latency_ms[1]
                    out[mode]["cpu"] += [c for c in rec.cpu_ms[0] + rec.cpu_ms[1] if c is not None]
    return out


async def latencies(boxes: dict[str, Sandbox], samples: int, per_sample: int) -> dict[str, list[dict[str, list]]]:
    pair = [resolve("greedy"), resolve("random")]
    out: dict[str, list[dict[str, list]]] = {mode: [] for mode in MODES}
    for i in range(samples):
        res = await latency_sample(boxes, pair, range(1000 * i, 1000 * i + per_sample), i)
        for mode in MODES:
            out[mode].append(res[mode])
    return out


# -- 3. tournament throughput ------------------------------------------------------------------------------------
def tournament_sample(enabled: bool, matches: int, seed: int, folder: Path) -> dict[str, float]:
    from arena.results.store import Store
    from arena.tournament.runner import run_tournament
    from arena.tournament.schedule import load_config

    cfg = load_config(
        None,
        {"format": "head-to-head", "agents": ["random", "greedy"], "pairs": max(matches // 2, 1), "seed": seed,
         "concurrency": 2, "store": str(folder / f"{'sandbox' if enabled else 'plain'}-{seed}.sqlite")},
    )  # fmt: skip
    specs = cfg.schedule()
    with Store(cfg.store) as store:
        store.bind_config(cfg.identity(), cfg.config_hash)
        run_id = store.start_run("bench", None, [])
        with Sandbox(Policy(enabled=enabled), warn=lambda s: None) as sandbox:
            c0 = cpu_s()
            t0 = time.perf_counter()
            played = trio.run(lambda: run_tournament(cfg, specs, store, run_id, sandbox=sandbox))
            dt = time.perf_counter() - t0
            cpu = cpu_s() - c0
        rows = store.matches()
    return {
        "seconds": dt,
        "cpu_seconds": cpu,
        "matches": played,
        "decisions": sum(r["decisions0"] + r["decisions1"] for r in rows),
        "faults": sum(r["fault"] is not None for r in rows),
    }


def tournaments(samples: int, matches: int) -> dict[str, list[dict[str, float]]]:
    out: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        for i, order in enumerate(orders(samples)):
            for mode in order:
                out[mode].append(tournament_sample(mode == "sandbox", matches, 100 + i, Path(tmp)))
    return out


# -- 4. where a sandboxed start goes -----------------------------------------------------------------------------
def stage_commands(m: Manifest, launch: Launch) -> list[tuple[str, list[str], str, dict[str, str]]]:
    """(label, argv, cwd, env) of the parts of ``launch``, a sandboxed launch of ``m``, cut
    from the command line `Sandbox.launch` gives: [outer launcher (root)] bwrap ... -- init -- agent."""
    base = m.launch()
    agent = list(base.command)
    folder = str(Path(base.cwd).resolve())
    full, env = list(launch.command), dict(launch.env or {})
    plain_env = dict(os.environ)
    out = [("agent alone", agent, folder, plain_env),
           ("Python launcher -> agent (no namespaces)", jail_argv({"rlimits": Limits().rlimits(False)}, agent), folder,
            plain_env)]  # fmt: skip
    caps = probe()
    if not caps.isolated or caps.bwrap not in full:
        return out + [("full launch", full, str(launch.cwd), env)]
    b = full.index(caps.bwrap)
    j = len(full) - 1 - full[::-1].index(str(JAIL))  # the init's launcher: python -I -S jail.py SPEC -- agent
    init = j - 3
    bw = full[b:init]  # ends with bubblewrap's "--"
    bw[bw.index("--chdir") + 1] = SANDBOX_SRC  # the agent's folder, mounted read-only
    out += [
        ("bubblewrap -> agent (no init, no copy)", bw + agent, "/", env),
        ("bubblewrap -> init (launcher, copy) -> agent", full[b:], "/", env),
    ]
    if b > 0:
        out.append(("outer launcher (uid, mask) -> bubblewrap -> init -> agent: all", full, str(launch.cwd), env))
    return out


def stage_once(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float, float] | str:
    """(until ready, stopping, CPU of all its processes) in ms, by plain subprocess; or
    why it failed."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = t1 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=cwd, env=env,
                             start_new_session=True)  # fmt: skip
        line = b""
        try:
            p.stdin.write(encode(hello()))
            p.stdin.flush()
            line = p.stdout.readline()
            t1 = time.perf_counter()
            p.stdin.write(encode(Quit()))
            p.stdin.flush()
            p.stdout.read()
        except OSError as e:
            line += f" ({e})".encode()
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass
            p.wait()
        t2 = time.perf_counter()
        err.seek(0)
        tail = " ".join(err.read().decode("utf-8", "replace").split())[-200:]
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if b'"ready"' not in line:
        return f"status {p.returncode}, stdout {line[:100]!r}, stderr {tail!r}"
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return (t1 - t0) * 1000, (t2 - t1) * 1000, cpu * 1000


def stages(m: Manifest, n: int) -> list[tuple[str, list[tuple[float, float, float]], list[str]]]:
    """Each part of the launch ``n`` times, interleaved; with why runs failed, if any did."""
    with Sandbox(Policy(), warn=lambda s: None) as sandbox, sandbox.launch(m) as launch:
        return _stages(stage_commands(m, launch), n)


def _stages(cmds: list[tuple[str, list[str], str, dict[str, str]]], n: int) -> list[tuple[str, list, list]]:
    runs: list[list[tuple[float, float, float]]] = [[] for _ in cmds]
    failed: list[list[str]] = [[] for _ in cmds]
    for r in range(n + 1):
        for k in range(len(cmds)) if r % 2 == 0 else reversed(range(len(cmds))):
            res = stage_once(*cmds[k][1:])
            if isinstance(res, str):
                failed[k].append(res)
            elif r > 0:  # the first round warms up
                runs[k].append(res)
    return [(label, rs, f) for (label, *_), rs, f in zip(cmds, runs, failed, strict=True)]


# -- one half: everything as this user ---------------------------------------------------------------------------
def c_agent(folder: Path) -> tuple[str, str | None]:
    """A private copy of agents/c-cautious built in ``folder`` (the checkout's own binary is
    rebuilt in place by every test run, and is not executable while it is being linked):
    its path, or "" and why not."""
    src = resolve("c-cautious").folder
    dst = folder / "c-cautious"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("agent", ".*"))
    for p in (folder, dst):
        os.chmod(p, 0o755)  # the sandbox's uids, and the unprivileged half, read it
    try:
        build_all([resolve(str(dst))])
    except UserError as e:
        return "", f"c-cautious: cannot build it here, skipped ({str(e)[-100:]})"
    return str(dst), None


def available_agents(c_path: str) -> tuple[list[Manifest], list[str]]:
    agents, notes = [resolve("greedy")], []
    if c_path:
        agents.append(resolve(c_path))
    if shutil.which("node"):
        agents.append(resolve("node-greedy"))
    else:
        notes.append("node-greedy: node is not on PATH: skipped")
    return agents, notes


def measure(args: argparse.Namespace) -> dict[str, Any]:
    caps = probe()
    who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    agents, notes = available_agents(args.c_agent)
    res: dict[str, Any] = {"who": who, "isolated": caps.isolated, "bwrap_why": caps.bwrap_why, "notes": notes,
                           "load_before": os.getloadavg()}  # fmt: skip
    t0 = time.perf_counter()
    with Sandbox(Policy(), warn=notes.append) as sb, Sandbox(Policy(enabled=False)) as plain:
        boxes = {"sandbox": sb, "plain": plain}
        progress(f"{who}: {args.starts} starts of each of {', '.join(m.name for m in agents)}, each way")
        res["starts"] = trio.run(starts, boxes, agents, args.starts)
        progress(f"{who}: decision latency, {args.samples} samples of {args.latency_matches} matches each way")
        res["latency"] = trio.run(latencies, boxes, args.samples, args.latency_matches)
    progress(f"{who}: tournaments, {args.samples} samples of {args.matches} matches each way")
    res["tournament"] = tournaments(args.samples, args.matches)
    c = [m for m in agents if m.name == "c-cautious"]
    if c and args.stage_runs > 0:
        progress(f"{who}: the parts of a sandboxed start, {args.stage_runs} runs each")
        res["stages"] = stages(c[0], args.stage_runs)
    res["seconds"] = time.perf_counter() - t0
    res["load_after"] = os.getloadavg()
    return res


def run_as_user(argv: list[str], extra: list[Path]) -> dict[str, Any] | str:
    """This script's measurements as the unprivileged user: its JSON, or why it failed."""
    from tests.asuser import USER, as_user, give, user_env

    with tempfile.TemporaryDirectory(prefix="arena-bench-user-") as home:
        give(Path(home))
        cmd = as_user([sys.executable, str(Path(__file__).resolve()), "--child", *argv], extra=extra)
        r = subprocess.run(cmd, cwd=home, env=user_env(Path(home)), stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return f"the run as {USER} failed with status {r.returncode}"
    return json.loads(r.stdout)


# -- printing ----------------------------------------------------------------------------------------------------
def pct(xs: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) of xs, interpolated."""
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    k = (len(s) - 1) * q
    lo = int(k)
    return s[lo] + (s[min(lo + 1, len(s) - 1)] - s[lo]) * (k - lo)


def spread(xs: Sequence[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(pct(xs, 0.1))}-{fmt.format(pct(xs, 0.9))}]"


def verdict(ratio: float, ok: bool) -> str:
    return f"{ratio:.2f}x {'met' if ok else 'MISSED'}"


def report(res: dict[str, Any], title: str) -> dict[str, Any]:
    """Print one half's tables; returns its ratios for the summary."""
    out: dict[str, Any] = {"start": {}}
    print(f"\n== {title} ({res['seconds']:.0f} s; load average {res['load_before'][0]:.1f} before, "
          f"{res['load_after'][0]:.1f} after)")  # fmt: skip
    if not res["isolated"]:
        print(f"   no namespaces here: {res['bwrap_why']}")
    for note in res["notes"]:
        print(f"   note: {note}")

    n = len(next(iter(res["starts"].values()))["sandbox"])
    print(f"1. start + handshake + stop, ms, {n} each way: total median [p10-p90]; ready = until its ready line, "
          "stop = quit + reap; CPU = all processes'")  # fmt: skip
    print(f"   {'agent':<12} {'sandbox total':>20} {'ready':>6} {'stop':>5} {'CPU':>5}   {'--no-sandbox total':>20} "
          f"{'ready':>6} {'stop':>5} {'CPU':>5}   {'ratio':>6} {'CPU':>6}")  # fmt: skip
    for name, by in res["starts"].items():
        cols = {}
        for mode in MODES:
            total = [(r + s) * 1000 for r, s, _ in by[mode]]
            ready, stop, cpu = (statistics.median(x[k] * 1000 for x in by[mode]) for k in range(3))
            cols[mode] = (total, ready, stop, cpu)
        a, b = cols["sandbox"], cols["plain"]
        ratio = statistics.median(a[0]) / statistics.median(b[0])
        out["start"][name] = (ratio, a[3] / b[3])
        print(
            f"   {name:<12} {spread(a[0]):>20} {a[1]:>6.1f} {a[2]:>5.1f} {a[3]:>5.0f}   "
            f"{spread(b[0]):>20} {b[1]:>6.1f} {b[2]:>5.1f} {b[3]:>5.0f}   {ratio:>5.2f}x {a[3] / b[3]:>5.2f}x  "
            f"(+{statistics.median(a[0]) - statistics.median(b[0]):.0f} ms, +{a[3] - b[3]:.0f} ms CPU)"
        )
        if by.get("failed"):
            print(f"   {'':<12} {len(by['failed'])} starts failed, the last: {by['failed'][-1][:200]}")

    lat = res["latency"]
    wall = {mode: [x * 1000 for s in lat[mode] for x in s["wall"]] for mode in MODES}  # µs
    cpu = {mode: [x * 1000 for s in lat[mode] for x in s["cpu"]] for mode in MODES}
    per = {mode: [statistics.median(s["wall"]) * 1000 for s in lat[mode]] for mode in MODES}
    paired = [a / b for a, b in zip(per["sandbox"], per["plain"], strict=True)]
    ratio = statistics.median(wall["sandbox"]) / statistics.median(wall["plain"])
    p90 = pct(wall["sandbox"], 0.9) / pct(wall["plain"], 0.9)
    cpu_ratio = statistics.median(cpu["sandbox"]) / statistics.median(cpu["plain"]) if cpu["plain"] else float("nan")
    out["latency"] = (ratio, cpu_ratio)
    print(f"2. decision latency, greedy vs random, µs: {len(lat['sandbox'])} samples of "
          f"{len(wall['sandbox']) // len(lat['sandbox'])} decisions each way, alternating match by match; "
          "CPU = the agent's, per decision")  # fmt: skip
    for mode in MODES:
        xs = wall[mode]
        print(
            f"   {LABEL[mode]:<12} median {statistics.median(xs):6.0f}  p90 {pct(xs, 0.9):6.0f}  "
            f"(sample medians {min(per[mode]):.0f}-{max(per[mode]):.0f})  "
            f"CPU median {statistics.median(cpu[mode]) if cpu[mode] else float('nan'):5.0f}"
        )
    print(f"   ratio: median {ratio:.3f}x, p90 {p90:.3f}x; sample by sample {min(paired):.3f}-{max(paired):.3f} "
          f"(median {statistics.median(paired):.3f}); agent CPU {cpu_ratio:.3f}x")  # fmt: skip

    t = res["tournament"]
    rate = {mode: [s["decisions"] / s["seconds"] for s in t[mode]] for mode in MODES}
    mps = {mode: [s["matches"] / s["seconds"] for s in t[mode]] for mode in MODES}
    per_cpu = {mode: [s["decisions"] / s["cpu_seconds"] for s in t[mode]] for mode in MODES}
    paired = [a / b for a, b in zip(rate["sandbox"], rate["plain"], strict=True)]
    ratio = statistics.median(rate["sandbox"]) / statistics.median(rate["plain"])
    cpu_ratio = statistics.median(per_cpu["sandbox"]) / statistics.median(per_cpu["plain"])
    out["throughput"] = (ratio, cpu_ratio)
    faults = sum(s["faults"] for mode in MODES for s in t[mode])
    print(f"3. tournament, random vs greedy, {t['sandbox'][0]['matches']} matches at concurrency 2 into SQLite, "
          f"{len(t['sandbox'])} samples each way: median (min-max); faults {faults}")  # fmt: skip
    for mode in MODES:
        d, mm, pc = rate[mode], mps[mode], per_cpu[mode]
        print(
            f"   {LABEL[mode]:<12} {statistics.median(d):6,.0f} decisions/s ({min(d):,.0f}-{max(d):,.0f})  "
            f"{statistics.median(mm):5.1f} matches/s ({min(mm):.1f}-{max(mm):.1f})  "
            f"{statistics.median(pc):6,.0f} decisions per CPU-second ({min(pc):,.0f}-{max(pc):,.0f})"
        )
    print(f"   ratio: {ratio:.3f}x decisions/s; sample by sample {min(paired):.3f}-{max(paired):.3f} "
          f"(median {statistics.median(paired):.3f}); per CPU-second {cpu_ratio:.3f}x")  # fmt: skip
    print("   (a run starts and stops 2 processes per agent: their extra cost in the sandbox is part of these ratios, "
          "a smaller part of longer runs)")  # fmt: skip

    if "stages" in res:
        print(
            "4. where a sandboxed start of c-cautious goes: each part of the launch command alone, by plain "
            "subprocess (no Trio);\n   ms: until ready median [p10-p90] and over the agent alone; stop; CPU time "
            "of all its processes"
        )
        w = max(len(label) for label, _, _ in res["stages"])
        print(f"   {'command':<{w}} {'until ready':>18} {'over':>6} {'stop':>5} {'CPU':>5} {'over':>6}")
        base: tuple[float, float] | None = None
        for label, runs, failed in res["stages"]:
            if not runs:
                print(f"   {label:<{w}} failed {len(failed)} times, the last: {failed[-1]}")
                continue
            ready = statistics.median(r[0] for r in runs)
            stop = statistics.median(r[1] for r in runs)
            cpu = statistics.median(r[2] for r in runs)
            base = base or (ready, cpu)
            bad = f"  ({len(failed)} failed, the last: {failed[-1]})" if failed else ""
            print(
                f"   {label:<{w}} {spread([r[0] for r in runs]):>18} {ready - base[0]:>+6.1f} {stop:>5.1f} "
                f"{cpu:>5.1f} {cpu - base[1]:>+6.1f}{bad}"
            )
    return out


def machine() -> None:
    caps = probe()
    bw = shutil.which(os.environ.get("ARENA_BWRAP") or "bwrap")
    version = subprocess.run([bw, "--version"], capture_output=True, text=True).stdout.strip() if bw else "none"
    print(f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), Linux {platform.release()}, "
          f"{version}, Python {platform.python_version()}; probe().isolated = {caps.isolated}"
          + ("" if caps.isolated else f" ({caps.bwrap_why})"))  # fmt: skip


def summary(halves: list[tuple[str, dict[str, Any]]]) -> None:
    print("\ntargets, sandbox / --no-sandbox wall-clock figures (in brackets: the same ratio in CPU time):")
    cells = [f"{who} {name} {verdict(x, x <= TARGET_START)} [{c:.2f}x]"
             for who, r in halves for name, (x, c) in r["start"].items()]  # fmt: skip
    print(f"  start + handshake + stop <= {TARGET_START:g}x: " + "; ".join(cells))
    for key, what, target, at_most in (("latency", "decision latency (median)", TARGET_LATENCY, True),
                                       ("throughput", "tournament decisions/s", TARGET_THROUGHPUT, False)):  # fmt: skip
        cells = [f"{who} {verdict(r[key][0], r[key][0] <= target if at_most else r[key][0] >= target)} "
                 f"[{r[key][1]:.2f}x]" for who, r in halves]  # fmt: skip
        print(f"  {what} {'<=' if at_most else '>='} {target:g}x: " + "; ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, help="samples each way of latency and throughput (default 5; quick 2)")
    ap.add_argument("--starts", type=int, help="starts of each agent each way (default 20; quick 4)")
    ap.add_argument("--matches", type=int, help="matches per tournament sample (default 200; quick 40)")
    ap.add_argument("--latency-matches", type=int, help="matches per latency sample (default 16; quick 3)")
    ap.add_argument("--stage-runs", type=int, help="runs of each part of a start, 0 for none (default 15; quick 4)")
    ap.add_argument("--quick", action="store_true", help="a fast smoke run: few samples of everything (< 1 min)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--c-agent", default="", help=argparse.SUPPRESS)  # the unprivileged half: its built copy
    args = ap.parse_args()
    for key, default, quick in (("samples", 5, 2), ("starts", 20, 4), ("matches", 200, 40), ("latency_matches", 16, 3),
                                ("stage_runs", 15, 4)):  # fmt: skip
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else default)
    passed = ["--samples", str(args.samples), "--starts", str(args.starts), "--matches", str(args.matches),
              "--latency-matches", str(args.latency_matches), "--stage-runs", str(args.stage_runs)]  # fmt: skip
    if args.child:  # the unprivileged half: figures as JSON on stdout, anything else on stderr
        out, sys.stdout = sys.stdout, sys.stderr
        json.dump(measure(args), out)
        return
    machine()
    print(f"samples each way: {args.starts} starts per agent, {args.samples} x {args.latency_matches} latency matches, "
          f"{args.samples} tournaments of {args.matches} matches; interleaved AB BA ...")  # fmt: skip
    halves: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-agents-") as tmp:
        args.c_agent, why = c_agent(Path(tmp))
        if why:
            print(f"note: {why}")
        if os.geteuid() == 0:
            halves.append(("root", report(measure(args), "as root")))
            from tests.asuser import USER, can_switch

            if can_switch():
                progress(f"the same as the unprivileged user {USER}")
                res = run_as_user([*passed, "--c-agent", args.c_agent], [Path(tmp)])
                if isinstance(res, str):
                    print(f"\n== as {USER}: {res}")
                else:
                    halves.append(("user", report(res, f"as the unprivileged user {USER} ({res['who']})")))
            else:
                print("\n== the unprivileged half is skipped: no useradd here")
        else:
            print("\n== the root half is skipped: not running as root")
            halves.append(("user", report(measure(args), f"as this unprivileged user (uid {os.geteuid()})")))
    summary(halves)


if __name__ == "__main__":
    main()
