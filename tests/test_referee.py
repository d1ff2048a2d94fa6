"""The referee against real agent processes: good ones, and deliberately broken ones.

Every broken agent (tests/agents/*) must end in the right typed fault, a recorded
forfeit for its seat, and no process left behind in its process group.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
from running import group_alive

from arena.game import Match, get_variant, observation
from arena.play.duel import duel
from arena.protocol.codec import TimeControl, decode_referee_line
from arena.runtime.agents import resolve
from arena.runtime.sandbox import Policy, Sandbox

HERE = Path(__file__).resolve().parent
FAST = TimeControl(move_ms=300, bank_ms=0, first_move_ms=300, grace_ms=100)




def play(a: str, b: str, *, seed: int = 1, variant: str = "sixty-six", tc: TimeControl = FAST, logs=None, **kw):
    """One match. The sandbox is off: these tests are about the referee's handling of
    faults, and some agents here report through files and variables a sandbox would not
    let through; test_sandbox.py runs hostile agents inside it."""
    pgids: list[int] = []
    manifests = [resolve(x if "/" not in x else str(HERE.parent / x)) for x in (a, b)]
    with Sandbox(Policy(enabled=False)) as sandbox:
        rec = trio.run(
            lambda: duel(
                manifests, seed, get_variant(variant), tc, logs=logs, on_start=lambda s, p: pgids.append(p.pid),
                sandbox=sandbox, **kw,
            )
        )  # fmt: skip
    return rec, pgids


BROKEN = [
    ("crash-at-start", "handshake", "exited with status 3; stderr ends: broken agent: giving up"),
    ("stdout-before-ready", "handshake", "expected a ready message"),
    ("wrong-version", "handshake", "agent speaks protocol version 9, this referee speaks 1 or 2 for this game"),
    ("crash-mid-match", "crash", "exited with status 1; stderr ends: broken agent: crashing mid-match"),
    ("hang", "timeout", "no answer to request"),
    ("late", "timeout", "within 400 ms"),
    ("garbage", "malformed", "line is not JSON"),
    ("oversized", "oversized", "longer than 65536 bytes"),
    ("wrong-id", "unknown-id", "not an outstanding request"),
    ("illegal", "illegal-action", "legal:"),
    ("stdout-closed", "crash", "closed its stdout"),
    ("orphan-child", "crash", "exited with status 1"),
]


# Every fault in seat 0, and the mid-match ones in seat 1 as well.
CASES = [(*b, 0) for b in BROKEN] + [
    (*b, 1) for b in BROKEN if b[0] in ("crash-mid-match", "hang", "illegal", "orphan-child")
]


@pytest.mark.parametrize("name, code, detail, seat", CASES, ids=[f"{c[0]}-seat{c[3]}" for c in CASES])
def test_broken_agent_forfeits_with_its_fault_and_leaves_no_process(name, code, detail, seat, tmp_path, monkeypatch):
    pidfile = tmp_path / "child.pid"
    monkeypatch.setenv("BROKEN_PIDFILE", str(pidfile))
    agent = f"tests/agents/broken/{name}.toml"
    pair = [agent, "random"] if seat == 0 else ["random", agent]
    rec, pgids = play(*pair, logs=tmp_path)
    f = rec.forfeit
    assert f is not None and f.seat == seat and f.code == code, rec.forfeit
    assert detail in f.detail
    assert rec.winner == seat ^ 1 and rec.score[seat ^ 1] == 7
    if code == "handshake":
        assert f.deal is None and rec.deals == []
    else:
        assert f.deal is not None and f.decision is not None
    for pgid in pgids:
        assert group_alive(pgid) == [], f"processes left in group {pgid}"
    if name == "orphan-child":
        child = int(pidfile.read_text())
        assert group_alive(child) == [] and not _alive(child)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_stderr_flood_is_capped_and_the_match_goes_on(tmp_path):
    rec, _ = play("tests/agents/broken/stderr-flood.toml", "random", logs=tmp_path)
    assert rec.forfeit is None and max(rec.score) >= 7
    log = next(tmp_path.glob("*stderr-flood.log"))
    data = log.read_bytes()
    assert len(data) < (1 << 20) + 100
    assert data.endswith(b"[arena: log truncated at 1048576 bytes]\n")


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
def test_python_agents_play_whole_matches(variant, tmp_path):
    rec, pgids = play("random", "greedy", seed=11, variant=variant, tc=TimeControl(), logs=tmp_path)
    assert rec.forfeit is None and rec.winner in (0, 1)
    assert rec.score[rec.winner] >= 7 > rec.score[rec.winner ^ 1]
    assert rec.margin == rec.score[rec.winner] - rec.score[rec.winner ^ 1]
    assert sum(d.game_points + d.carried for d in rec.deals if d.winner == rec.winner) == rec.score[rec.winner]
    decisions = sum(len(d.actions) for d in rec.deals)
    assert len(rec.latency_ms[0]) + len(rec.latency_ms[1]) == decisions
    assert all(x is None or x >= 0 for x in rec.cpu_ms[0] + rec.cpu_ms[1])
    assert any(x is not None for x in rec.cpu_ms[0])  # Linux gives CPU times
    for pgid in pgids:
        assert group_alive(pgid) == []


def test_a_match_replays_identically_from_its_seed():
    a, _ = play("random", "greedy", seed=5, tc=TimeControl())
    b, _ = play("random", "greedy", seed=5, tc=TimeControl())
    c, _ = play("random", "greedy", seed=6, tc=TimeControl())
    assert [d.actions for d in a.deals] == [d.actions for d in b.deals]
    assert (a.winner, a.score, [d.seed for d in a.deals]) == (b.winner, b.score, [d.seed for d in b.deals])
    assert [d.actions for d in a.deals] != [d.actions for d in c.deals]


def test_the_observation_on_the_wire_is_the_engines():
    transcripts: list[list] = [[], []]
    rec, _ = play("random", "greedy", seed=9, tc=TimeControl(), transcripts=transcripts)
    requests = [
        [decode_referee_line(line) for d, line in t if d == "to-agent" and b'"request"' in line] for t in transcripts
    ]
    requests = [[m for m in seat if m.type == "request"] for seat in requests]
    match = Match(get_variant("sixty-six"), 9)
    seen = [0, 0]
    for deal in rec.deals:
        state = match.new_deal()
        for action in deal.actions:
            seat = state.current_player()
            req = requests[seat][seen[seat]]
            seen[seat] += 1
            assert req.seat == seat
            assert req.observation == json.loads(json.dumps(observation(state, seat)))
            assert req.legal == state.legal_action_strings()
            state.apply_action(action)
        match.finish_deal()
    assert seen == [len(requests[0]), len(requests[1])]


def test_unknown_agent_and_bad_manifest_are_one_line_errors(tmp_path):
    from arena.errors import UserError

    with pytest.raises(UserError, match="unknown agent 'nobody'"):
        resolve("nobody")
    (tmp_path / "agent.toml").write_text('name = "x"\nversion = "1"\nlanguage = "py"\ncommand = "run.sh"\n')
    with pytest.raises(UserError, match="field 'command' must be a non-empty list of strings"):
        resolve(str(tmp_path))
    (tmp_path / "agent.toml").write_text('name = "x"\nversion = "1"\ncommand = ["a"]\n')
    with pytest.raises(UserError, match="missing field 'language'"):
        resolve(str(tmp_path))
    (tmp_path / "agent.toml").write_text("name = \n")
    with pytest.raises(UserError, match="not valid TOML"):
        resolve(str(tmp_path))


def test_a_command_that_cannot_start_is_a_handshake_forfeit(tmp_path):
    (tmp_path / "agent.toml").write_text(
        'name = "ghost"\nversion = "1"\nlanguage = "none"\ncommand = ["./no-such-program"]\n'
    )
    rec, _ = play(str(tmp_path), "random")
    assert rec.forfeit.code == "handshake" and "cannot start ghost" in rec.forfeit.detail
    assert rec.winner == 1


@pytest.mark.parametrize(
    "name, clock, fault",
    [("late", "wall", "timeout"), ("late", "cpu", None), ("spin", "cpu", "timeout"), ("spin", "wall", "timeout")],
)
def test_cpu_clock_charges_cpu_time_not_waiting(name, clock, fault, tmp_path):
    # "late" sleeps 1 s at its third request, "spin" burns 1 s of CPU; the budget is 0.4 s.
    tc = TimeControl(move_ms=300, bank_ms=0, first_move_ms=300, grace_ms=100, clock=clock)
    rec, pgids = play(f"tests/agents/broken/{name}.toml", "random", tc=tc, logs=tmp_path)
    assert (rec.forfeit.code if rec.forfeit else None) == fault
    if fault is None:
        assert max(rec.latency_ms[0]) > 900  # it did take a second of wall time
        assert all(c is not None and c < 300 for c in rec.cpu_ms[0])
    for pgid in pgids:
        assert group_alive(pgid) == []


@pytest.mark.parametrize(
    "line, code",
    [
        (b"\n", "malformed"),
        (b"\x00\x01\x02\n", "malformed"),
        (b"\xc3\x28\n", "malformed"),
        (b'{"type":"action","id":1e400,"action":"close"}\n', "malformed"),
        (b'{"type":"action","id":1,"action":"close"}{"type":"pong"}\n', "malformed"),
        (b"[" * 50_000 + b"\n", "malformed"),
        (b'{"type":"pong","id":1}\n', "unknown-id"),
        (b'{"type":"ready","protocol":1,"name":"again","version":"0"}\n', "malformed"),
        (b'{"type":"action","id":1,"action":"pass"}\r\n', "illegal-action"),  # CRLF is fine; pass is not
        (b"x" * 70_000, "oversized"),
    ],
)
def test_no_line_from_an_agent_crashes_the_referee(line, code, monkeypatch, tmp_path):
    (tmp_path / "line").write_bytes(line)
    monkeypatch.setenv("PARROT_FILE", str(tmp_path / "line"))
    rec, pgids = play("tests/agents/broken/parrot.toml", "random", logs=tmp_path)
    assert rec.forfeit is not None and rec.forfeit.seat == 0 and rec.forfeit.code == code, rec.forfeit
    assert all(group_alive(p) == [] for p in pgids)


def test_never_more_requests_in_flight_than_the_declared_capacity():
    async def main():
        from arena.protocol.codec import Hello, Request
        from arena.runtime.process import open_agent

        hello = Hello(protocol=1, variant={}, time_control={}, seed=1)
        launch = resolve(str(HERE / "agents" / "broken" / "pipelined.toml")).launch()
        answers = {}
        async with open_agent(launch, hello) as agent:
            assert agent.capacity == 2

            async def one(k: int) -> None:
                req = Request(id=agent.new_id(), match_id=f"m{k}", seat=0, observation={}, legal=[f"play:{k}"],
                              time_left_ms=5000)  # fmt: skip
                answer, _, _ = await agent.request(req, 5.0)
                answers[req.id] = (answer.id, answer.action)

            async with trio.open_nursery() as nursery:
                for k in range(7):
                    nursery.start_soon(one, k)
            assert agent.fault is None
        return answers

    answers = trio.run(main)
    assert len(answers) == 7 and all(rid == got for rid, (got, _) in answers.items())


def test_one_timer_per_process_ends_each_request_at_its_own_deadline(tmp_path):
    """A later request with a shorter budget times out at its deadline, not at the
    earlier request's (the process has one timer, re-armed for the earliest)."""
    (tmp_path / "agent.py").write_text(
        "import sys\n"
        "for line in sys.stdin:\n"
        "    if '\"hello\"' in line:\n"
        '        print(\'{"type":"ready","protocol":1,"name":"mute","version":"0","capacity":2}\', flush=True)\n'
    )
    (tmp_path / "agent.toml").write_text(
        'name = "mute"\nversion = "0"\nlanguage = "python"\ncommand = ["{python}", "agent.py"]\n'
    )

    async def main() -> tuple[list[tuple[str, str]], float]:
        from arena.protocol.codec import Hello, Request
        from arena.runtime.process import AgentFault, open_agent

        faults: list[tuple[str, str]] = []
        async with open_agent(
            resolve(str(tmp_path)).launch(), Hello(protocol=1, variant={}, time_control={}, seed=1)
        ) as agent:

            async def ask(budget_s: float) -> None:
                req = Request(id=agent.new_id(), match_id="m", seat=0, observation={}, legal=["close"], time_left_ms=1)
                try:
                    await agent.request(req, budget_s)
                except AgentFault as f:
                    faults.append((f.code, f.detail))

            t0 = trio.current_time()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ask, 20.0)
                await trio.sleep(0.05)
                nursery.start_soon(ask, 0.3)
            return faults, trio.current_time() - t0

    faults, elapsed = trio.run(main)
    assert elapsed < 5  # not the first request's 20 s
    assert faults[0] == ("timeout", "no answer to request 2 within 300 ms")
    assert [code for code, _ in faults] == ["timeout", "timeout"]  # the fault ends the other request too
