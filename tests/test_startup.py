"""Set-up, and agents that cannot start: missing toolchains, start failures, installs.

Everything runs the way a user runs it: ``python -m arena ...`` (or an installed
``arena``) as a real subprocess, with a real PATH, real stores and real agent processes.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from running import arena

from arena.play.referee import Forfeit, MatchRecord
from arena.results.store import Store, StoreError, deal_rows, match_row
from arena.runtime.agents import BUNDLED, resolve
from arena.runtime.sandbox import Policy, Sandbox
from arena.tournament.schedule import load_config

ROOT = Path(__file__).resolve().parent.parent
GREEDY = ROOT / "agents" / "greedy"


def errors(p: subprocess.CompletedProcess) -> list[str]:
    """The lines the arena itself wrote on stderr (agents' output goes to their logs)."""
    return [line for line in p.stderr.splitlines() if line.startswith("arena")]


def path_without(tmp: Path, *programs: str) -> str:
    """A PATH with every program of this one but ``programs``: a folder of symlinks."""
    folder = tmp / f"path-without-{'-'.join(programs)}"
    folder.mkdir()
    for d in os.environ["PATH"].split(os.pathsep):
        if os.path.isdir(d):
            for entry in os.scandir(d):
                if entry.name not in programs and not (folder / entry.name).exists():
                    (folder / entry.name).symlink_to(entry.path)
    return str(folder)


def agent(tmp: Path, name: str, command: list[str], source: Path = GREEDY) -> Path:
    """A copy of ``source``'s files under a manifest of its own."""
    folder = tmp / name
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("agent.toml", "__pycache__"))
    words = ", ".join(f'"{w}"' for w in command)
    (folder / "agent.toml").write_text(f'name = "{name}"\nversion = "1"\nlanguage = "python"\ncommand = [{words}]\n')
    return folder


# -- item 4: arena match ------------------------------------------------------------------
def test_match_refuses_an_agent_whose_program_is_missing(tmp_path):
    nocmd = agent(tmp_path, "nocmd", ["no-such-program-xyz", "agent.js"])
    p = arena("match", nocmd, "greedy", "--quiet", "--logs", tmp_path / "logs")
    assert p.returncode == 2, p.stderr
    assert errors(p) == [
        "arena: error: agent 'nocmd' needs 'no-such-program-xyz', which is not on PATH (install it or put it on PATH)"
    ]


def test_match_exits_1_when_an_agent_never_started(tmp_path):
    crash = ROOT / "tests" / "agents" / "broken" / "crash-at-start.toml"
    p = arena("match", crash, "greedy", "--quiet", "--logs", tmp_path / "logs")
    assert p.returncode == 1, p.stderr
    [line] = errors(p)
    assert line.startswith("arena: the match was not played: crash-at-start could not be started (handshake: ")
    assert "giving up before the handshake" in line
    assert "forfeits" in p.stdout  # the result is still shown


def test_match_exits_0_when_a_forfeit_happens_during_play(tmp_path):
    crash = ROOT / "tests" / "agents" / "broken" / "crash-mid-match.toml"
    p = arena("match", crash, "greedy", "--quiet", "--logs", tmp_path / "logs")
    assert p.returncode == 0, p.stderr
    assert "in deal" in p.stdout


# -- item 1: toolchains checked before a run -------------------------------------------------
def test_tournament_without_node_is_refused_before_the_run(tmp_path):
    env = dict(os.environ, PATH=path_without(tmp_path, "node", "nodejs"))
    store = tmp_path / "t.sqlite"
    p = arena("tournament", "--agents", "random,node-greedy", "--pairs", "2", "--store", store, "--quiet", env=env)
    assert p.returncode == 2, p.stderr
    assert errors(p) == [
        "arena: error: agent 'node-greedy' needs 'node', which is not on PATH (Debian: apt-get install nodejs)"
    ]
    assert not store.exists()


def test_a_missing_build_tool_is_named(tmp_path):
    c = agent(tmp_path, "c-copy", ["./agent"], source=ROOT / "agents" / "c-cautious")
    with open(c / "agent.toml", "a") as f:
        f.write('build = ["no-such-cc", "-o", "agent", "agent.c"]\n')
    p = arena("match", c, "greedy", "--quiet", "--logs", tmp_path / "logs")
    assert p.returncode == 2
    assert errors(p) == [
        "arena: error: agent 'c-copy' needs 'no-such-cc' to build, which is not on PATH (install it or put it on PATH)"
    ]


def test_a_missing_interpreter_of_a_script_is_named(tmp_path):
    a = agent(tmp_path, "script", ["./run.sh"])
    (a / "run.sh").write_text("#!/usr/bin/env no-such-interpreter\n")
    (a / "run.sh").chmod(0o755)
    p = arena("match", a, "greedy", "--quiet", "--logs", tmp_path / "logs")
    assert p.returncode == 2
    assert "agent 'script' needs 'no-such-interpreter', which is not on PATH" in p.stderr


def test_demo_without_node_leaves_node_greedy_out_and_says_what_to_install(tmp_path):
    env = dict(os.environ, PATH=path_without(tmp_path, "node", "nodejs"))
    p = arena("demo", "--pairs", "1", "--quiet", "--store", tmp_path / "demo.sqlite", env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    why = "agent 'node-greedy' needs 'node', which is not on PATH (Debian: apt-get install nodejs)"
    assert f"arena demo: leaving out {why}" in p.stderr.splitlines()
    with Store(tmp_path / "demo.sqlite", create=False) as s:
        rows = s.matches()
    assert len(rows) == 6  # random, greedy, c-cautious: three pairings, one pair each
    assert not any(r["fault"] for r in rows)
    assert "node-greedy" not in {r["seat0"] for r in rows} | {r["seat1"] for r in rows}


# -- items 2 and 3: start failures withdraw the agent; resume replays its matches ------------
def test_an_agent_that_cannot_start_is_withdrawn_and_its_matches_are_replayed_once_fixed(tmp_path):
    tmp_path.chmod(0o755)  # as root, agents run as uids of their own: they must reach their folder
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    wrapper = bin_ / "flaky-runtime"  # found on PATH, but fails until "fixed" exists beside it
    wrapper.write_text(
        '#!/bin/sh\n[ -e "$(dirname "$0")/fixed" ] || { echo "flaky-runtime: its library is missing" >&2; exit 1; }\n'
        'exec "$@"\n'
    )
    wrapper.chmod(0o755)
    flaky = agent(tmp_path, "flaky", ["flaky-runtime", "{python}", "agent.py"])
    env = dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}")
    store = tmp_path / "t.sqlite"
    args = ["tournament", "--agents", f"greedy,{flaky}", "--pairs", "3", "--seed", "5", "--concurrency", "1",
            "--store", store, "--quiet", "--no-report"]  # fmt: skip

    p = arena(*args, env=env)
    assert p.returncode == 1, p.stderr  # not a finished tournament
    [line] = [x for x in errors(p) if "flaky" in x]  # the cause, printed once
    assert line.startswith("arena: agent 'flaky' cannot be started (3 starts failed in a row: ")
    assert "its library is missing" in line and "--resume" in line
    assert errors(p)[-1].startswith("arena: 6 of 6 matches were not played (an agent could not be started")
    assert errors(p)[-1].endswith(f"play them with: arena tournament --store {store} --resume")
    with Store(store, create=False) as s:
        rows = s.matches()
        assert len(rows) == 6
        assert all(r["fault"] == "handshake" and r["fault_deal"] is None and r["winner_name"] == "greedy" for r in rows)
        assert s.unplayed_ids() == {r["id"] for r in rows}
    logs = sorted(p.name for p in (tmp_path / "t-logs").iterdir() if p.name.startswith("flaky"))
    assert logs == ["flaky-1.log", "flaky-2.log", "flaky-3.log"]  # three starts, not one per match

    (bin_ / "fixed").touch()
    p = arena(*args, "--resume", env=env)
    assert p.returncode == 0, p.stderr
    assert "6 matches played now, 6 of 6 in the store" in p.stdout
    with Store(store, create=False) as s:
        rows = s.matches()
        assert len(rows) == 6 and not s.unplayed_ids()
        assert not any(r["fault"] for r in rows)
        assert {r["run_id"] for r in rows} == {2}
        assert all(r["deals"] > 0 for r in rows)


def test_the_runner_withdraws_an_agent_whose_program_is_missing_without_starting_it(tmp_path, capsys):
    """What a ladder run (which has no build step) gets: the check is in the pool."""
    nocmd = agent(tmp_path, "nocmd", ["no-such-program-xyz"])
    cfg = load_config(None, {"agents": ["greedy", str(nocmd)], "pairs": 2, "seed": 3, "concurrency": 2,
                             "store": str(tmp_path / "s.sqlite")})  # fmt: skip
    specs = cfg.schedule()
    lines: list[str] = []
    with Store(cfg.store) as store, Sandbox(Policy(enabled=False)) as sandbox:
        run_id = store.start_run("test", None, [])

        async def main() -> int:
            from arena.tournament.runner import Pools

            async with trio.open_nursery() as n:
                pools = Pools.for_config(n, cfg, sandbox, tmp_path)
                pools.warn = lines.append
                from arena.tournament.runner import play

                try:
                    return await play(specs, {m.name: m for m in cfg.agents}, pools, store, run_id)
                finally:
                    pools.close()

        assert trio.run(main) == 4
        rows = store.matches()
    assert lines == [
        "agent 'nocmd' needs 'no-such-program-xyz', which is not on PATH (install it or put it on PATH); it is out "
        "of this run: its matches are forfeits before play, which a resumed run (--resume) plays again once that "
        "is fixed"
    ]
    assert [r["winner_name"] for r in rows] == ["greedy"] * 4
    assert not list(tmp_path.glob("nocmd-*.log"))  # never started


def _record(forfeit: Forfeit | None, deals: int = 0) -> MatchRecord:
    return MatchRecord(
        match_id="m", seed=1, variant={}, time_control={}, agents=["a 1", "b 1"], winner=1, score=[0, 7],
        margin=7, forfeit=forfeit, deals=[], latency_ms=[[], []], cpu_ms=[[], []],
    )  # fmt: skip


def test_store_replaces_a_match_lost_before_play_but_never_a_played_one(tmp_path):
    def write(store: Store, rec: MatchRecord) -> None:
        store.write_match(run_id=None, index=0, match_id="m", pairing="a~b", pair_index=0, game=0,
                          seats=["a", "b"], record=rec, started=0.0, finished=0.0)  # fmt: skip

    with Store(tmp_path / "s.sqlite") as s:
        write(s, _record(Forfeit(seat=0, code="handshake", detail="cannot start")))
        assert s.unplayed_ids() == {"m"} and s.done_ids() == {"m"}
        write(s, _record(Forfeit(seat=0, code="crash", detail="died", deal=1)))  # replaces it
        assert s.unplayed_ids() == set() and s.match("m")[0]["fault"] == "crash"
        with pytest.raises(StoreError, match="already recorded"):
            write(s, _record(None))
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        assert db.execute("SELECT count(*) FROM matches").fetchone() == (1,)


def test_a_write_cut_short_by_ctrl_c_does_not_take_the_run_record_with_it(tmp_path):
    """Ctrl-C can land between a match write's BEGIN and its COMMIT, past the rollback that
    guards it, and leave the transaction open: the run's end is still recorded, with the
    matches that were whole, and the half-written match is not."""
    def row(match_id: str, run_id: int) -> dict:
        return match_row(0, match_id, "a~b", 0, 0, ["a", "b"], _record(None), run_id, 0.0, 0.0)

    with Store(tmp_path / "s.sqlite") as s:
        run = s.start_run("test", None, [])
        s.write_match(run_id=run, index=0, match_id="m1", pairing="a~b", pair_index=0, game=0, seats=["a", "b"],
                      record=_record(None), started=0.0, finished=0.0)  # fmt: skip
        s.db.execute("BEGIN IMMEDIATE")  # the interrupted write: its statements ran, its COMMIT did not
        s._insert("m2", row("m2", run), deal_rows(_record(None)))
        s.finish_run(run)
    with Store(tmp_path / "s.sqlite") as s:
        assert s.done_ids() == {"m1"}
        runs = s.db.execute("SELECT finished IS NOT NULL, matches_played FROM runs").fetchall()
    assert runs == [(1, 1)]


# -- item 5: a wheel install finds the bundled agents ----------------------------------------
def test_a_wheel_install_finds_and_builds_the_bundled_agents(tmp_path):
    src = tmp_path / "src"  # a clean copy: the checkout's build/ and caches stay out of it
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "reports", "__pycache__", ".hypothesis", ".*_cache", "agent",
    ))  # fmt: skip
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", wheels, src], check=True, capture_output=True, timeout=600)
    [wheel] = wheels.glob("sixtysix_arena-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", venv], check=True)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())  # fmt: skip
    # the package itself from the wheel; its dependencies (trio, numpy, ...) from this venv
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", site, wheel], check=True, timeout=300)
    deps = Path(next(p for p in sys.path if p.endswith("site-packages")))
    (site / "zz-deps.pth").write_text(f"{deps}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([py, "-m", "arena", *args], capture_output=True, text=True, cwd=outside, env=env,
                              timeout=300)  # fmt: skip

    where = subprocess.run([py, "-c", "import arena.runtime.agents as a; print(a.BUNDLED, a.INSTALLED)"], cwd=outside,
                           capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    assert where == [str(site / "arena" / "bundled"), "True"]
    # the same agents as the checkout's, file for file (build outputs left out)
    for name in ["random", "greedy", "heuristic", "expert", "node-greedy", "c-cautious"]:
        installed = subprocess.run(
            [py, "-c", f"from arena.runtime.agents import discover; print(discover()[{name!r}].content_hash())"],
            cwd=outside, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        assert installed == resolve(str(BUNDLED / name)).content_hash(), name

    p = run("match", "random", "greedy", "--quiet", "--logs", str(tmp_path / "logs"))
    assert p.returncode == 0 and p.stdout.startswith("result: "), p.stderr
    p = run("check", "greedy", "--logs", str(tmp_path / "logs"))
    assert p.returncode == 0, p.stdout + p.stderr
    # c-cautious is built from C: in the user's cache, not in site-packages
    p = run("match", "c-cautious", "random", "--quiet", "--logs", str(tmp_path / "logs"))
    assert p.returncode == 0 and "forfeit" not in p.stdout, p.stdout + p.stderr
    assert not (site / "arena" / "bundled" / "c-cautious" / "agent").exists()
    [built] = (tmp_path / "cache" / "sixtysix-arena" / "builds").glob("c-cautious-*/agent")
    assert os.access(built, os.X_OK)


# -- process pools: never more processes than ceil(in flight / capacity) ---------------------
def _lease_all(manifest_path: Path, leases: int, tmp: Path) -> tuple[list[object], object, list[str]]:
    """Hold ``leases`` leases of one pool at once; (what each got, the pool, its logs)."""
    from arena.protocol.codec import PROTOCOL_VERSION, Hello
    from arena.runtime.agents import load_manifest
    from arena.runtime.pool import AgentPool

    hello = Hello(protocol=PROTOCOL_VERSION, variant={}, time_control={}, seed=1)
    got: list[object] = []
    withdrawn: list[object] = []

    async def main() -> AgentPool:
        with Sandbox(Policy(enabled=False)) as sandbox:
            async with trio.open_nursery() as procs:
                pool = AgentPool(
                    load_manifest(manifest_path), hello, procs, concurrency=leases, sandbox=sandbox, logs=tmp,
                    label="p", on_withdrawn=withdrawn.append,
                )  # fmt: skip
                all_in = trio.Event()

                async def hold() -> None:
                    async with pool.lease() as agent:
                        got.append(agent)
                        if len(got) == leases:
                            all_in.set()
                        await all_in.wait()

                async with trio.open_nursery() as n:
                    for _ in range(leases):
                        n.start_soon(hold)
                pool.close()
                return pool

    pool = trio.run(main)
    assert withdrawn in ([], [pool])
    return got, pool, sorted(p.name for p in tmp.glob("p-*.log"))


@pytest.mark.parametrize("leases, processes", [(4, 1), (32, 2)])
def test_a_pool_starts_no_more_processes_than_its_capacity_needs(tmp_path, leases, processes):
    from arena.runtime.process import AgentProcess

    got, pool, logs = _lease_all(BUNDLED / "random", leases, tmp_path)  # capacity 16
    assert all(isinstance(a, AgentProcess) for a in got)
    assert pool.capacity == 16
    assert pool.started == processes and len({id(a) for a in got}) == processes
    assert len(logs) == processes


def test_a_pool_whose_first_process_fails_its_handshake_is_withdrawn_after_three_starts(tmp_path):
    from arena.runtime.process import AgentFault

    crash = ROOT / "tests" / "agents" / "broken" / "crash-at-start.toml"
    got, pool, logs = _lease_all(crash, 32, tmp_path)
    assert len(got) == 32 and all(isinstance(f, AgentFault) and f.code == "handshake" for f in got)
    assert pool.withdrawn is not None and pool.failed_starts == 3
    assert pool.started == 3 and logs == ["p-1.log", "p-2.log", "p-3.log"]  # one at a time, not one per lease
