"""The referee: one match between two agent processes, played with the rules engine.

`play_match` drives a `arena.game.Match`: for each decision it sends the seat to act its
observation and legal actions, waits for the answer within the seat's clock, checks it
and applies it. Lifecycle messages (match and deal start and end) go to both seats so
that learning agents can learn. A fault of either seat (crash, timeout, malformed
answer, illegal action, ...) forfeits the match for that seat: the other is awarded the
match, and the record says who faulted, how and where. Nothing here can hang: every
wait has a deadline (see `arena.runtime.process`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ..game import Match, Variant, derive_seed, observation, parse_action
from ..protocol.codec import DealEnd, DealStart, MatchEnd, MatchStart, Request, TimeControl
from ..runtime.process import AgentFault, AgentProcess


@dataclasses.dataclass
class Forfeit:
    """Why a match was forfeited: the seat at fault, the fault code and its detail, and
    where it happened (deal number and decision index in that deal, if any)."""

    seat: int
    code: str
    detail: str
    deal: int | None = None
    decision: int | None = None


@dataclasses.dataclass
class DealRecord:
    seed: int
    dealer: int
    actions: list[str]
    winner: int | None
    game_points: int  # what the deal was worth: 1, 2 or 3 (0 for a drawn hand)
    carried: int  # game points a drawn hand carried to this deal's winner (draw_carry)
    reason: str
    points: list[int]
    tricks: list[int]


@dataclasses.dataclass
class MatchRecord:
    """Everything needed to audit, rate and replay a match (JSON-ready via `to_dict`)."""

    match_id: str
    seed: int
    variant: dict[str, Any]
    time_control: dict[str, Any]
    agents: list[str]
    winner: int | None
    score: list[int]
    margin: int
    forfeit: Forfeit | None
    deals: list[DealRecord]
    latency_ms: list[list[float]]
    cpu_ms: list[list[float | None]]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchRecord:
        d = dict(d)
        d["forfeit"] = Forfeit(**d["forfeit"]) if d.get("forfeit") else None
        d["deals"] = [DealRecord(**x) for x in d["deals"]]
        return cls(**d)


@dataclasses.dataclass
class _Clock:
    """A seat's time: the per-move allowance, the overage bank, the first-move budget."""

    tc: TimeControl
    bank_ms: float
    first: bool = True

    def allowance_ms(self) -> int:
        return self.tc.first_move_ms if self.first else self.tc.move_ms

    def time_left_ms(self) -> int:
        return int(self.allowance_ms() + max(0.0, self.bank_ms))

    def charge(self, used_ms: float) -> None:
        over = used_ms - self.allowance_ms()
        if over > 0:
            self.bank_ms -= over
        self.first = False


Event = Callable[[str, dict[str, Any]], None]


def agent_seed(match_seed: int, seat: int) -> int:
    """A seat's seed for a match (in ``match_start``): derived by a one-way hash, so it
    reveals nothing of the deals, and fixed by the match, so a seeded agent plays a
    match the same way whichever process, and whatever else, it played before."""
    return derive_seed(match_seed, "agent", seat)


async def play_match(
    match_id: str,
    seed: int,
    variant: Variant,
    agents: Sequence[AgentProcess | AgentFault],
    time_control: TimeControl,
    *,
    on_event: Event | None = None,
) -> MatchRecord:
    """Play one match; ``agents[s]`` plays seat ``s`` (an `AgentFault` there means that
    seat failed to start, and forfeits). Never raises for an agent's fault."""
    emit = on_event or (lambda kind, data: None)
    match = Match(variant, seed)
    names = [a.name if isinstance(a, AgentProcess) else "?" for a in agents]
    labels = [f"{a.ready.name} {a.ready.version}" if isinstance(a, AgentProcess) else "?" for a in agents]
    latency: list[list[float]] = [[], []]
    cpu: list[list[float | None]] = [[], []]
    deals: list[DealRecord] = []
    forfeit: Forfeit | None = None
    clocks = [_Clock(time_control, float(time_control.bank_ms)) for _ in agents]
    cpu_clock = time_control.clock == "cpu"

    def record(winner: int | None, score: list[int]) -> MatchRecord:
        margin = score[winner] - score[winner ^ 1] if winner is not None else 0
        return MatchRecord(
            match_id=match_id,
            seed=seed,
            variant=variant.to_dict(),
            time_control=time_control.to_dict(),
            agents=labels,
            winner=winner,
            score=score,
            margin=margin,
            forfeit=forfeit,
            deals=deals,
            latency_ms=latency,
            cpu_ms=cpu,
        )

    failed = [s for s, a in enumerate(agents) if isinstance(a, AgentFault)]
    if failed:
        f = agents[failed[0]]
        forfeit = Forfeit(seat=failed[0], code=f.code, detail=f.detail)
        emit("forfeit", dataclasses.asdict(forfeit))
        if len(failed) == 2:
            return record(None, [0, 0])
        winner = failed[0] ^ 1
        score = [0, 0]
        score[winner] = variant.target
        return record(winner, score)

    procs: list[AgentProcess] = list(agents)  # type: ignore[arg-type]
    seat = 0
    deal_no: int | None = None
    decision: int | None = None
    try:
        for seat in (0, 1):
            start = MatchStart(match_id=match_id, seat=seat, opponent=names[seat ^ 1], seed=agent_seed(seed, seat))
            await procs[seat].notify(start, defer=True)
        while not match.is_over():
            state = match.new_deal()
            deal_no = state.deal_no
            emit("deal_start", {"deal": deal_no, "dealer": state.dealer, "state": state})
            for seat in (0, 1):
                await procs[seat].notify(
                    DealStart(match_id=match_id, deal=deal_no, dealer=state.dealer, score=list(match.score)),
                    defer=True,
                )
            actions: list[str] = []
            decision = 0
            while not state.is_over():
                seat = state.current_player()
                legal = state.legal_action_strings()
                clock = clocks[seat]
                left = clock.time_left_ms()
                agent = procs[seat]
                req = Request(
                    id=agent.new_id(),
                    match_id=match_id,
                    seat=seat,
                    observation=observation(state, seat),
                    legal=legal,
                    time_left_ms=left,
                )
                answer, used_s, cpu_s = await agent.request(
                    req, (left + time_control.grace_ms) / 1000, cpu_clock=cpu_clock
                )
                latency[seat].append(round(used_s * 1000, 3))
                cpu[seat].append(round(cpu_s * 1000, 3) if cpu_s is not None else None)
                clock.charge((cpu_s if cpu_clock and cpu_s is not None else used_s) * 1000)
                if answer.action not in legal:
                    raise AgentFault(
                        "illegal-action",
                        f"answered {answer.action!r} to request {req.id}; legal: {' '.join(legal)}",
                    )
                state.apply_legal(parse_action(answer.action))
                actions.append(answer.action)
                if on_event is not None:
                    on_event("action", {"seat": seat, "action": answer.action, "state": state})
                decision += 1
            decision = None
            before = list(match.score)
            match.finish_deal()
            r = state.result
            gained = match.score[r.winner] - before[r.winner] if r.winner is not None else 0
            deals.append(
                DealRecord(
                    seed=state.seed,
                    dealer=state.dealer,
                    actions=actions,
                    winner=r.winner,
                    game_points=r.game_points,
                    carried=gained - r.game_points if r.winner is not None else 0,
                    reason=r.reason,
                    points=list(r.points),
                    tricks=list(r.tricks),
                )
            )
            emit("deal_end", {"deal": deal_no, "result": r, "score": list(match.score)})
            end = DealEnd(match_id=match_id, deal=deal_no, result=r.to_dict(), score=list(match.score))
            for seat in (0, 1):
                await procs[seat].notify(end, defer=True)
        result = match.result
        for seat in (0, 1):
            await procs[seat].notify(
                MatchEnd(match_id=match_id, winner=result.winner, score=list(result.score), reason="played")
            )
        emit("match_end", {"winner": result.winner, "score": list(result.score)})
        return record(result.winner, list(result.score))
    except AgentFault as f:
        forfeit = Forfeit(seat=seat, code=f.code, detail=f.detail, deal=deal_no, decision=decision)
        emit("forfeit", dataclasses.asdict(forfeit))
        winner = seat ^ 1
        score = list(match.score)
        score[winner] = max(score[winner], variant.target)
        other = procs[winner]
        if other.fault is None:
            try:
                await other.notify(MatchEnd(match_id=match_id, winner=winner, score=score, reason="forfeit"), 1.0)
            except AgentFault:
                pass  # the opponent's own fault after the match is decided changes nothing
        return record(winner, score)
