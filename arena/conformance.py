"""The conformance suite behind ``arena check``, and its recorded positions.

`positions()` builds, with the rules engine, one request for every phase and action kind
in both presets (and the close-offer phase of a custom variant). They are written to
``protocol/examples/positions.jsonl`` for agent authors; the tests check that file
still equals what the engine gives. `check` runs an agent through: handshake, ping,
every recorded position (a legal answer within time), several requests at once when
the agent claims a capacity above 1, a whole match against the random agent in each
preset, and a clean exit on ``quit``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import trio

from .agents import Manifest, resolve
from .game import Variant, deal_from_cards, get_variant, new_deal, observation
from .process import AgentFault, AgentProcess, open_agent
from .protocol import PROTOCOL_VERSION, Hello, Request, TimeControl
from .sandbox import Sandbox

EXAMPLES = Path(__file__).resolve().parent.parent / "protocol" / "examples"
POSITIONS_FILE = EXAMPLES / "positions.jsonl"
CLOSE_OFFER = get_variant("sixty-six").with_flags(name="sixty-six-close-offer", exchange_on_close="opponent")


def _positions_for(variant: Variant) -> Iterator[tuple[str, Any]]:
    """(label, state) pairs covering the phases and action kinds of a variant."""
    if variant.deck == 24 and variant.exchange_on_close == "opponent":
        st = deal_from_cards(
            variant,
            [["AC", "KC", "QC", "JD", "QD", "KS"], ["9H", "TC", "TD", "AD", "KD", "9D"]],
            "AH",
            ["JC", "9C", "TH", "KH", "QH", "JH", "9S"],
            dealer=1,
            tricks=(1, 1),
            points=(11, 10),
        )
        st.apply_action("close")
        yield "close-offer: the closer's opponent may exchange or pass", st
        return
    if variant.deck == 24:
        yield "opening lead: any card, a pending marriage, or close", new_deal(variant, 7, 1)
        mid = dict(
            hands=[["9H", "KH", "QH", "KC", "QC", "9C"], ["AC", "TC", "TD", "AD", "KD", "9D"]],
            turn_up="AH",
            talon=["JC", "QD", "JD", "TH", "JH", "9S", "JS"],
            dealer=1,
            tricks=(1, 0),
            points=(21, 0),
        )
        st = deal_from_cards(variant, **mid)
        yield "lead with a trick: exchange, two marriages, close and declare", st
        st = st.clone()
        st.apply_action("exchange")
        st.apply_action("marry:H")
        yield "lead after a marriage: only its K or Q, close or declare", st
        st = deal_from_cards(variant, **mid)
        st.apply_action("play:9C")
        yield "follow with the talon open: any card", st
        st = deal_from_cards(variant, **mid)
        st.apply_action("play:KC")
        st.apply_action("play:AC")
        yield "draw phase: close before drawing, declare or draw", st
        st = deal_from_cards(
            variant, [["QH", "9D", "TD"], ["AH", "KH", "JH"]], None, trump="S", leader=0, tricks=(3, 3),
            points=(30, 40),
        )  # fmt: skip
        st.apply_action("play:QH")
        yield "follow in the strict phase: head the led suit", st
        st = deal_from_cards(variant, **mid)
        st.apply_action("close")
        yield "lead after closing: play or declare", st
    else:
        st = deal_from_cards(
            variant, [["JH", "KC", "QC", "AC", "TD"], ["TC", "KD", "QD", "AD", "JC"]], "AH",
            ["JD", "KS", "QS", "JS", "AS", "TS", "KH", "QH", "TH"], dealer=1,
        )  # fmt: skip
        yield "opening lead: jack exchange, a pending marriage, close", st
        st = st.clone()
        st.apply_action("close")
        st.apply_action("play:AC")
        yield "follow after a close: head, follow or trump", st
        st = deal_from_cards(
            variant, [["KC", "QC", "TD"], ["AC", "TC", "AD"]], None, trump="H", leader=0, tricks=(3, 1),
            points=(50, 20),
        )  # fmt: skip
        yield "lead with the talon exhausted: marriages still allowed", st


def positions() -> list[dict[str, Any]]:
    """Every recorded position as ``{"label", "variant", "observation", "legal"}``."""
    out = []
    for variant in (get_variant("sixty-six"), get_variant("schnapsen"), CLOSE_OFFER):
        for label, st in _positions_for(variant):
            seat = st.current_player()
            out.append(
                {
                    "label": label,
                    "variant": variant.to_dict(),
                    "observation": observation(st, seat),
                    "legal": st.legal_action_strings(),
                }
            )
    return out


def write_positions(path: Path = POSITIONS_FILE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(p, separators=(",", ":")) + "\n" for p in positions()))


TRANSCRIPT_FILE = EXAMPLES / "greedy-vs-random.jsonl"
TRANSCRIPT_MATCH = dict(agents=("greedy", "random"), seed=3, variant="sixty-six", match_id="example")


async def record_transcript() -> list[dict[str, Any]]:
    """Play the example match and return every line both seats sent and received, as
    ``{"dir": "to-agent" | "from-agent", "seat": s, "msg": {...}}``, seat 0 first."""
    from .duel import duel

    m = TRANSCRIPT_MATCH
    transcripts: list[list[tuple[str, bytes]]] = [[], []]
    await duel(
        [resolve(a) for a in m["agents"]],
        m["seed"],
        get_variant(m["variant"]),
        TimeControl(),
        match_id=m["match_id"],
        transcripts=transcripts,
    )
    return [
        {"dir": direction, "seat": seat, "msg": json.loads(line)}
        for seat, lines in enumerate(transcripts)
        for direction, line in lines
    ]


def write_transcript(path: Path = TRANSCRIPT_FILE) -> None:
    lines = trio.run(record_transcript)
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))


def load_positions(path: Path = POSITIONS_FILE) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclasses.dataclass
class Item:
    name: str
    ok: bool
    detail: str


async def check(
    manifest: Manifest,
    report: Callable[[Item], None],
    *,
    time_control: TimeControl | None = None,
    opponent: str = "random",
    logs: Path | None = None,
    sandbox: Sandbox | None = None,
) -> list[Item]:
    """Run the conformance suite, the agent in ``sandbox`` (default: a new default one);
    ``report`` sees each item as it is decided."""
    if sandbox is None:
        with Sandbox() as sandbox:
            return await check(
                manifest, report, time_control=time_control, opponent=opponent, logs=logs, sandbox=sandbox
            )
    tc = time_control or TimeControl(move_ms=1000, bank_ms=0, first_move_ms=5000, grace_ms=200)
    items: list[Item] = []

    def add(name: str, ok: bool, detail: str) -> None:
        item = Item(name, ok, detail)
        items.append(item)
        report(item)

    by_variant: dict[str, list[dict[str, Any]]] = {}
    for p in load_positions():
        by_variant.setdefault(p["variant"]["name"], []).append(p)
    first = True
    for vname, group in by_variant.items():
        variant = Variant.from_dict(group[0]["variant"])
        hello = Hello(protocol=PROTOCOL_VERSION, variant=variant.to_dict(), time_control=tc.to_dict(), seed=12345)
        log = logs / f"check-{manifest.name}-{vname}.log" if logs else None
        t0 = trio.current_time()
        agent: AgentProcess | None = None
        try:
            with sandbox.launch(manifest) as launch:
                async with open_agent(launch, hello, log_path=log) as agent:
                    if first:
                        r = agent.ready
                        add(
                            "handshake",
                            True,
                            f"ready in {(trio.current_time() - t0) * 1000:.0f} ms: {r.name} {r.version}, "
                            f"capacity {r.capacity}",
                        )
                        rtt = await agent.ping()
                        add("ping", True, f"pong in {rtt * 1000:.1f} ms")
                    await _positions_item(agent, vname, group, tc, add)
                    if agent.capacity > 1:
                        await _concurrency_item(agent, vname, group, tc, add)
        except AgentFault as f:
            if agent is None:  # it never said ready
                add("handshake" if first else f"start ({vname})", False, f"{f.code}: {f.detail}")
                return items
            # otherwise the item that met the fault has reported it
        if agent is not None:
            clean = agent.stopped_by == "quit" and agent.exit_code == 0
            how = {"quit": f"exit status {agent.exit_code}", None: "unknown"}.get(agent.stopped_by, agent.stopped_by)
            if first or not clean:
                add("quit", clean, f"stopped by {how}" if clean else f"did not exit cleanly on quit ({how})")
        first = False
    from .duel import duel

    opp = resolve(opponent)
    for vname in ("sixty-six", "schnapsen"):
        for seat in (0, 1):
            pair = [manifest, opp] if seat == 0 else [opp, manifest]
            rec = await duel(
                pair, 1000 + seat, get_variant(vname), tc, match_id=f"check-{vname}-{seat}", logs=logs, sandbox=sandbox
            )
            f = rec.forfeit
            if f is not None and f.seat == seat:
                add(f"match ({vname}, seat {seat})", False, f"{f.code}: {f.detail}")
            elif f is not None:
                add(f"match ({vname}, seat {seat})", False, f"the {opponent} opponent faulted: {f.code}: {f.detail}")
            else:
                slowest = max(rec.latency_ms[seat], default=0.0)
                result = "won" if rec.winner == seat else "lost"
                add(
                    f"match ({vname}, seat {seat})",
                    True,
                    f"{result} {rec.score[seat]}-{rec.score[seat ^ 1]} against {opponent}, "
                    f"{len(rec.latency_ms[seat])} decisions, slowest {slowest:.1f} ms",
                )
    return items


async def _positions_item(agent: AgentProcess, vname: str, group: list[dict], tc: TimeControl, add) -> None:
    worst = 0.0
    for k, p in enumerate(group):
        req = Request(
            id=agent.new_id(),
            match_id=f"check-{vname}-{k}",
            seat=p["observation"]["seat"],
            observation=p["observation"],
            legal=p["legal"],
            time_left_ms=tc.first_move_ms if k == 0 else tc.move_ms,
        )
        try:
            answer, latency, _ = await agent.request(req, (req.time_left_ms + tc.grace_ms) / 1000)
        except AgentFault as f:
            add(f"position ({vname}): {p['label']}", False, f"{f.code}: {f.detail}")
            raise
        worst = max(worst, latency)
        if answer.action not in p["legal"]:
            add(f"position ({vname}): {p['label']}", False, f"answered {answer.action!r}, not in {p['legal']}")
        else:
            add(f"position ({vname}): {p['label']}", True, f"{answer.action} in {latency * 1000:.1f} ms")


async def _concurrency_item(agent: AgentProcess, vname: str, group: list[dict], tc: TimeControl, add) -> None:
    n = min(agent.capacity, 8)
    reqs = [
        Request(
            id=agent.new_id(),
            match_id=f"check-{vname}-concurrent-{k}",
            seat=group[k % len(group)]["observation"]["seat"],
            observation=group[k % len(group)]["observation"],
            legal=group[k % len(group)]["legal"],
            time_left_ms=tc.move_ms,
        )
        for k in range(n)
    ]
    answers: dict[int, str] = {}

    async def one(req: Request) -> None:
        answer, _, _ = await agent.request(req, (req.time_left_ms + tc.grace_ms) / 1000)
        answers[req.id] = answer.action

    try:
        async with trio.open_nursery() as nursery:
            for req in reqs:
                nursery.start_soon(one, req)
    except BaseExceptionGroup as group_error:
        f = group_error.exceptions[0]
        add(f"{n} requests at once ({vname})", False, str(f))
        return
    bad = [r.id for r in reqs if answers.get(r.id) not in r.legal]
    add(
        f"{n} requests at once ({vname})",
        not bad,
        "all answered, each legal" if not bad else f"illegal answers to requests {bad}",
    )
