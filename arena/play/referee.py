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
from ..protocol.codec import TABLE_VERSION, DealEnd, DealStart, MatchEnd, MatchStart, Request, TimeControl
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
    #: Three-handed dealer-sits-out: the match seats of the deal's seats 0 and 1 (``winner``
    #: and the lists above speak of the deal's seats).
    seats: list[int] | None = None
    #: Three- and four-handed: what each side gained (stakes, marks; may be negative).
    scores: list | None = None
    #: The bidding forms: the seat that made the contract, and its bid (None: no contract).
    bidder: int | None = None
    bid: int | None = None


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
    #: What ``winner`` is: a seat ("winner"), a team ("team": seats t and t+2), or the
    #: first of an order of finish ("order"); ``score`` is per team in a team game.
    kind: str = "winner"
    #: Each seat's place (1 = first, shared when equal) in games of more than two seats.
    places: list[int] | None = None
    #: Not decided within `MAX_DEALS` deals: ended by the score then (`Match.adjudicate`).
    adjudicated: bool = False

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

#: Deals after which a match the target has not decided is adjudicated by the score
#: (`Match.adjudicate`; ``match_end`` reason ``deal-limit``). A two-handed match ends within
#: 7 deals to 13; a bidding game's weak players can be set for ever.
MAX_DEALS = 200


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
    seat failed to start, and forfeits). Never raises for an agent's fault.

    Any number of seats the variant has: in a three-handed dealer-sits-out deal only two
    seats play (`Match.seats` maps the deal's seats to the match's; requests and
    observations speak of the deal's seats, ``deal_start`` gives the mapping)."""
    emit = on_event or (lambda kind, data: None)
    n = variant.players
    if len(agents) != n:
        raise ValueError(f"{variant.name} seats {n} agents, got {len(agents)}")
    match = Match(variant, seed)
    names = [a.name if isinstance(a, AgentProcess) else "?" for a in agents]
    labels = [f"{a.ready.name} {a.ready.version}" if isinstance(a, AgentProcess) else "?" for a in agents]
    latency: list[list[float]] = [[] for _ in range(n)]
    cpu: list[list[float | None]] = [[] for _ in range(n)]
    deals: list[DealRecord] = []
    forfeit: Forfeit | None = None
    clocks = [_Clock(time_control, float(time_control.bank_ms)) for _ in agents]
    cpu_clock = time_control.clock == "cpu"

    def record(
        winner: int | None,
        score: list,
        places: list[int] | None = None,
        kind: str = "winner",
        adjudicated: bool = False,
    ) -> MatchRecord:
        return MatchRecord(
            match_id=match_id,
            seed=seed,
            variant=variant.to_dict(),
            time_control=time_control.to_dict(),
            agents=labels,
            winner=winner,
            score=score,
            margin=_margin(winner, score),
            forfeit=forfeit,
            deals=deals,
            latency_ms=latency,
            cpu_ms=cpu,
            kind=kind,
            places=places,
            adjudicated=adjudicated,
        )

    failed = [s for s, a in enumerate(agents) if isinstance(a, AgentFault)]
    if failed:
        f = agents[failed[0]]
        forfeit = Forfeit(seat=failed[0], code=f.code, detail=f.detail)
        emit("forfeit", dataclasses.asdict(forfeit))
        return record(*forfeit_result(match, failed))

    procs: list[AgentProcess] = list(agents)  # type: ignore[arg-type]
    v2 = [p.ready is not None and p.ready.protocol >= TABLE_VERSION for p in procs]
    seat = 0
    deal_no: int | None = None
    decision: int | None = None
    try:
        for seat in range(n):
            await procs[seat].notify(_match_start(match_id, seed, variant, seat, names, v2[seat]), defer=True)
        while not match.is_over() and len(match.deals) < MAX_DEALS:
            state = match.new_deal()
            deal_no = state.deal_no
            seats = match.seats  # the match seat of each seat of this deal
            emit("deal_start", {"deal": deal_no, "dealer": state.dealer, "state": state, "seats": seats})
            for seat in range(n):
                await procs[seat].notify(
                    DealStart(match_id=match_id, deal=deal_no, dealer=state.dealer, score=list(match.score),
                              seats=list(seats) if v2[seat] else None),
                    defer=True,
                )  # fmt: skip
            actions: list[str] = []
            decision = 0
            while not state.is_over():
                ds = state.current_player()
                seat = seats[ds]
                legal = state.legal_action_strings()
                clock = clocks[seat]
                left = clock.time_left_ms()
                agent = procs[seat]
                req = Request(
                    id=agent.new_id(),
                    match_id=match_id,
                    seat=ds,
                    observation=observation(state, ds),
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
            side = None if r.winner is None else seats[r.winner] if variant.form == "dealer_sits_out" else r.winner
            gained = match.score[side] - before[side] if side is not None else 0
            deals.append(
                DealRecord(
                    seed=state.seed,
                    dealer=state.dealer,
                    actions=actions,
                    winner=r.winner,
                    game_points=r.game_points,
                    carried=gained - r.game_points if side is not None else 0,
                    reason=r.reason,
                    points=list(r.points),
                    tricks=list(r.tricks),
                    seats=list(seats) if variant.form == "dealer_sits_out" else None,
                    # per side; dealer-sits-out: what each match seat gained (the dealer scores too)
                    scores=list(r.scores) if hasattr(r, "scores") else [
                        match.score[s] - before[s] for s in range(3)] if variant.form == "dealer_sits_out" else None,
                    bidder=getattr(r, "bidder", None),
                    bid=r.bid if getattr(r, "bidder", None) is not None else None,
                )
            )
            emit("deal_end", {"deal": deal_no, "result": r, "score": list(match.score), "seats": seats})
            end = DealEnd(match_id=match_id, deal=deal_no, result=r.to_dict(), score=list(match.score))
            for seat in range(n):
                await procs[seat].notify(end, defer=True)
        result = match.result if match.is_over() else match.adjudicate()
        places = list(result.places) if result.places else _places(variant, result.winner)
        reason = "deal-limit" if result.adjudicated else "played"
        for seat in range(n):
            await procs[seat].notify(
                MatchEnd(match_id=match_id, winner=result.winner, score=list(result.score), reason=reason,
                         result=_result(result.kind, result.winner, places) if v2[seat] else None)
            )  # fmt: skip
        emit("match_end", {"winner": result.winner, "score": list(result.score), "kind": result.kind, "places": places})
        return record(result.winner, list(result.score), places if n > 2 else None, result.kind, result.adjudicated)
    except AgentFault as f:
        forfeit = Forfeit(seat=seat, code=f.code, detail=f.detail, deal=deal_no, decision=decision)
        emit("forfeit", dataclasses.asdict(forfeit))
        winner, score, places, kind = forfeit_result(match, [seat])
        for other in range(n):
            p = procs[other]
            if other == seat or p.fault is not None:
                continue
            try:
                await p.notify(
                    MatchEnd(match_id=match_id, winner=winner, score=score, reason="forfeit",
                             result=_result(kind, winner, places) if v2[other] else None),
                    1.0,
                )  # fmt: skip
            except AgentFault:
                pass  # another seat's fault after the match is decided changes nothing
        return record(winner, score, places, kind)


def forfeit_result(match: Match, faulted: list[int]) -> tuple[int | None, list, list[int] | None, str]:
    """(winner, score, places, kind) of a match that ``faulted`` seats forfeit (docs:
    protocol/SPEC.md, "Faults"). Two seats: the other seat wins with the target (both
    faulted: nobody). A team game: the faulting seat's team loses and the other team wins
    with the target. Three seats: the faulting seats are placed last; the others by the
    score so far (equal scores share a place; an order of finish keeps the places already
    taken) and the first place wins, when one seat holds it alone."""
    v = match.variant
    n = v.players
    score = list(match.score)
    if n == 2 or v.players == 4:
        sides = {s & 1 if n == 4 else s for s in faulted}
        if len(sides) == 2:
            return None, score, None, "team" if n == 4 else "winner"
        winner = 1 - sides.pop()
        score[winner] = max(score[winner], v.target)
        if n == 2:
            return winner, score, None, "winner"
        return winner, score, _places(v, winner), "team"
    rest = [s for s in range(n) if s not in faulted]
    done = [s for s in match.finished if s not in faulted]
    rest = done + sorted((s for s in rest if s not in done), key=lambda s: -score[s])
    places = [0] * n
    for i, s in enumerate(rest):
        tied = i > 0 and s not in done and rest[i - 1] not in done and score[s] == score[rest[i - 1]]
        places[s] = places[rest[i - 1]] if tied else i + 1
    for s in faulted:
        places[s] = len(rest) + 1
    first = [s for s in range(n) if places[s] == 1]
    kind = "order" if v.form == "dealer_sits_out" else "winner"
    return (first[0] if len(first) == 1 else None), score, places, kind


def _places(variant: Variant, winner: int | None) -> list[int] | None:
    """Each seat's place when one seat or one team won: 1 for the winners, 2 for the rest."""
    if winner is None or variant.players == 2:
        return None
    if variant.players == 4:
        return [1 if s & 1 == winner else 2 for s in range(4)]
    return [1 if s == winner else 2 for s in range(variant.players)]


def _margin(winner: int | None, score: list) -> int | float:
    if winner is None:
        return 0
    return score[winner] - max(x for i, x in enumerate(score) if i != winner)


def _result(kind: str, winner: int | None, places: list[int] | None) -> dict[str, Any]:
    return {"kind": kind, "winner": winner, "places": places}


def _match_start(match_id: str, seed: int, variant: Variant, seat: int, names: list[str], v2: bool) -> MatchStart:
    """A seat's ``match_start``: version 1's fields, and for a version-2 agent who sits
    where (names and teams), its partners and opponents, and the complete rules."""
    n = len(names)
    left = (seat + 1) % n
    if not v2:
        return MatchStart(match_id=match_id, seat=seat, opponent=names[left], seed=agent_seed(seed, seat))
    team = (lambda s: s & 1) if n == 4 else (lambda s: s)
    return MatchStart(
        match_id=match_id,
        seat=seat,
        opponent=names[left],
        seed=agent_seed(seed, seat),
        players=[{"seat": s, "name": names[s], "team": team(s)} for s in range(n)],
        partners=[s for s in range(n) if s != seat and team(s) == team(seat)],
        opponents=[s for s in range(n) if team(s) != team(seat)],
        variant=variant.to_dict(),
    )
