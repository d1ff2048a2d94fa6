"""The conformance suite behind ``arena check``, and its recorded positions.

`positions()` finds, in seeded deals played with the rules engine, one decision for
every phase and action kind in both two-handed presets (and the close-offer phase of a
custom variant); `table_positions()` does the same for every three- and four-handed
preset (bidding, naming trumps, leads with a marriage, follows the rules force, the
partner's meld and the claim, the last trick, ...). Each is a real, reachable state
recorded with the deal that reaches it. They are written to
``protocol/examples/positions.jsonl`` and ``table-positions.jsonl`` beside it (two
files, so that the version-1 test set stays what it was) for agent authors; the tests
check that the files still equal what the engine gives. `check` runs an agent through:
handshake, ping, every recorded position (a legal answer within time), several requests
at once when the agent claims a capacity above 1, a whole match against the random
agent in each game (each seat of a two-handed one, seat 0 at a table), and a clean exit
on ``quit``: all of it only in the games the agent's manifest says it plays
(``variants``), each game's positions in a process started with that game's ``hello``.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import trio

from ..game import State, TableState, Variant, action_str, get_variant, new_deal, observation
from ..game.cards import KING, SUIT_MASK_32, SUIT_OF
from ..protocol.codec import Hello, Request, TimeControl
from ..runtime.agents import Manifest, family, resolve
from ..runtime.process import AgentFault, AgentProcess, open_agent
from ..runtime.sandbox import Sandbox

# protocol/ ships inside the package as arena/spec (an installed wheel); else the checkout's.
_SPEC = Path(__file__).resolve().parent.parent / "spec"
EXAMPLES = (_SPEC if _SPEC.is_dir() else _SPEC.parent.parent / "protocol") / "examples"
POSITIONS_FILE = EXAMPLES / "positions.jsonl"
TABLE_POSITIONS_FILE = EXAMPLES / "table-positions.jsonl"
CLOSE_OFFER = get_variant("sixty-six").with_flags(name="sixty-six-close-offer", exchange_on_close="opponent")


#: The situations recorded, per variant: (label, test on a state and its legal actions).
#: Each is the first decision, in seeded deals played with the engine, that passes its test.
Situation = Callable[[State, list[str]], bool]


def _plays(legal: list[str]) -> list[str]:
    return [a for a in legal if a.startswith("play:")]


def _restricted(st: State, legal: list[str]) -> bool:
    """A follow in the strict phase where the rules forbid some cards of the hand."""
    return st.phase_name == "follow" and st.strict and len(_plays(legal)) < st.hand[st.to_act].bit_count()


def _closed(st: State) -> bool:
    return st.closed_by >= 0


SITUATIONS: dict[str, list[tuple[str, Situation]]] = {
    "sixty-six": [
        ("opening lead: any card, a pending marriage, or close",
         lambda st, legal: st.n_tricks == 0 and st.phase_name == "lead" and any(a.startswith("marry:") for a in legal)),
        ("lead with a trick: exchange, a marriage, close and declare",
         lambda st, legal: st.phase_name == "lead" and {"exchange", "close", "declare"} <= set(legal)
         and any(a.startswith("marry:") for a in legal)),
        ("lead after a marriage: only its K or Q, close or declare",
         lambda st, legal: st.marriage_suit >= 0 and {"close", "declare"} <= set(legal)),
        ("follow with the talon open: any card",
         lambda st, legal: st.phase_name == "follow" and not st.strict and st.n_tricks >= 2),
        ("draw phase: close before drawing, declare or draw", lambda st, legal: st.phase_name == "draw"),
        ("lead after closing: play or declare",
         lambda st, legal: _closed(st) and st.phase_name == "lead" and "declare" in legal and len(_plays(legal)) >= 3),
        ("follow after a close: head the led suit",
         lambda st, legal: _closed(st) and _restricted(st, legal) and len(_plays(legal)) >= 2),
        ("lead with the talon exhausted: a K and Q held, but no more marriages",
         lambda st, legal: not _closed(st) and st.talon_size() == 0 and st.phase_name == "lead"
         and any(st.hand[st.to_act] >> (s * 6 + KING) & 3 == 3 for s in range(4))),
        ("follow with the talon exhausted: head, follow or trump",
         lambda st, legal: not _closed(st) and st.talon_size() == 0 and _restricted(st, legal)
         and len(_plays(legal)) >= 2),
        ("the last trick: one card to lead",
         lambda st, legal: st.phase_name == "lead" and st.hand[st.to_act].bit_count() == 1 and st.marriage_suit < 0),
    ],
    "schnapsen": [
        ("opening lead: jack exchange, a pending marriage, close",
         lambda st, legal: st.n_tricks == 0 and {"exchange", "close"} <= set(legal)
         and any(a.startswith("marry:") for a in legal)),
        ("lead after a marriage: only its K or Q, close or declare",
         lambda st, legal: st.marriage_suit >= 0 and {"close", "declare"} <= set(legal)),
        ("lead after closing: marriages still allowed",
         lambda st, legal: _closed(st) and st.phase_name == "lead" and any(a.startswith("marry:") for a in legal)),
        ("follow after a close: head, follow or trump", lambda st, legal: _closed(st) and _restricted(st, legal)),
        ("lead with the talon exhausted: marriages still allowed",
         lambda st, legal: not _closed(st) and st.talon_size() == 0 and st.phase_name == "lead"
         and any(a.startswith("marry:") for a in legal)),
        ("the last trick: one card to follow with",
         lambda st, legal: st.phase_name == "follow" and st.hand[st.to_act].bit_count() == 1),
    ],
    "sixty-six-close-offer": [
        ("close-offer: the closer's opponent may exchange or pass", lambda st, legal: st.phase_name == "close-offer"),
    ],
}  # fmt: skip


# -- three- and four-handed positions ----------------------------------------------------------
#: As `Situation`, on a `TableState` (a two-handed `State` in three-sitout, whose hands are two-handed).
TableSituation = Callable[[Any, list[str]], bool]


def _led(st: TableState) -> int:
    """The suit led to the trick in progress."""
    return SUIT_OF[st.trick[0][1]]


def _holds(st: TableState, suit: int) -> int:
    """How many cards of ``suit`` the seat to act holds."""
    return (st.hand[st.to_act] & SUIT_MASK_32[suit]).bit_count()


def _beat(st: TableState, legal: list[str]) -> bool:
    """Follow suit and beat: the seat holds the led suit, but only its higher cards are legal."""
    return (st.phase_name == "follow" and SUIT_OF[st.win_card] == _led(st)
            and 2 <= len(_plays(legal)) < _holds(st, _led(st)))  # fmt: skip


def _trump_in(st: TableState, legal: list[str]) -> bool:
    """Void in the led suit: a trump must be played (any trump: the trick is not trumped)."""
    plays = len(_plays(legal))
    return (st.phase_name == "follow" and st.trump >= 0 and _led(st) != st.trump and not _holds(st, _led(st))
            and SUIT_OF[st.win_card] != st.trump and 2 <= plays < st.hand[st.to_act].bit_count())  # fmt: skip


def _over_trump(st: TableState, legal: list[str]) -> bool:
    """Void in the led suit of a trick already trumped: over-trump, with a choice."""
    return (st.phase_name == "follow" and st.trump >= 0 and _led(st) != st.trump and not _holds(st, _led(st))
            and SUIT_OF[st.win_card] == st.trump and 2 <= len(_plays(legal)) < _holds(st, st.trump))  # fmt: skip


def _any_card(st: TableState, legal: list[str]) -> bool:
    """Neither the led suit nor a trump: any card."""
    return (st.phase_name == "follow" and st.trump >= 0 and not _holds(st, _led(st)) and not _holds(st, st.trump)
            and len(_plays(legal)) >= 2)  # fmt: skip


def _partner_ahead(st: TableState, legal: list[str]) -> bool:
    """The partner is winning the trick, and the rules still make this seat head it."""
    return st.players == 4 and st.win_seat == st.to_act ^ 2 and _beat(st, legal)


def _marry_lead(st: TableState, legal: list[str]) -> bool:
    return st.phase_name == "lead" and any(a.startswith("marry:") for a in legal)


def _after_marriage(st: TableState, legal: list[str]) -> bool:
    return st.phase_name == "lead" and st.marriage_suit >= 0 and st.lead_married


def _opening(st: TableState, legal: list[str]) -> bool:
    return st.phase_name == "lead" and st.n_tricks == 0 and st.marriage_suit < 0


def _last_lead(st: TableState, legal: list[str]) -> bool:
    return st.phase_name == "lead" and st.hand[st.to_act].bit_count() == 1


def _last_follow(st: TableState, legal: list[str]) -> bool:
    return st.phase_name == "follow" and st.hand[st.to_act].bit_count() == 1


def _first_bid(st: TableState, legal: list[str]) -> bool:
    return st.phase_name == "bid" and not any(ev[0] == "bid" for ev in st.events)


def _over_bid(st: TableState, legal: list[str]) -> bool:
    return st.phase_name == "bid" and st.bid > 0 and "pass" in legal and any(a.startswith("bid:") for a in legal)


TABLE_SITUATIONS: dict[str, list[tuple[str, TableSituation]]] = {
    "three-pagat": [
        ("trump decision: name a suit or pass, three cards seen", lambda st, legal: st.phase_name == "name"),
        ("opening lead after trumps were named", lambda st, legal: _opening(st, legal) and st.turn_owner < 0),
        ("opening lead holding the turned-up trump", lambda st, legal: _opening(st, legal)
         and st.turn_owner == st.to_act and st.hand[st.to_act] >> st.turn_card & 1),
        ("lead with a marriage to show", _marry_lead),
        ("lead after a marriage: only its K or Q", _after_marriage),
        ("follow: follow suit and beat the trick", _beat),
        ("follow, void in the led suit: trump", _trump_in),
        ("follow a trumped trick, void: over-trump", _over_trump),
        ("follow with neither the suit nor a trump: any card", _any_card),
        ("the last trick: one card to follow with", _last_follow),
    ],
    "three-cutthroat": [
        ("bidding: the first bid, or pass", _first_bid),
        ("bidding: bid over a bid, or pass", _over_bid),
        ("opening lead: the bidder's first card sets trumps", lambda st, legal: _opening(st, legal) and st.trump < 0),
        ("lead with a marriage to show", _marry_lead),
        ("lead after a marriage: only its K or Q", _after_marriage),
        ("follow: follow suit and beat the trick", _beat),
        ("follow, void in the led suit: trump", _trump_in),
        ("lead after the first trick took the widow", lambda st, legal: st.phase_name == "lead" and st.n_tricks == 1
         and st.widow_taken >= 0 and st.marriage_suit < 0 and not _marry_lead(st, legal)),
        ("the last trick: one card to lead", _last_lead),
    ],
    # Two-handed hands between the dealer's neighbours: Sixty-Six's decisions.
    "three-sitout": SITUATIONS["sixty-six"],
    "four-pagat": [
        ("opening lead: the cut card shown in the dealer's hand", _opening),
        ("lead with a marriage to show", lambda st, legal: _marry_lead(st, legal) and "declare" not in legal),
        ("meld: the leader's partner shows a marriage or passes",
         lambda st, legal: st.phase_name == "meld" and len(legal) > 1),
        ("meld without a marriage: pass", lambda st, legal: st.phase_name == "meld" and legal == ["pass"]),
        ("lead with a trick for the team: claim 66, show a marriage or play",
         lambda st, legal: _marry_lead(st, legal) and "declare" in legal),
        ("follow: follow suit and beat the trick", _beat),
        ("follow with the partner winning: head the trick all the same", _partner_ahead),
        ("follow, void in the led suit: trump", _trump_in),
        ("follow a trumped trick, void: over-trump", _over_trump),
        ("the last trick: one card to lead", _last_lead),
        ("after the last trick: claim 66 or pass", lambda st, legal: st.phase_name == "last"),
    ],
    "kreuzmariage": [
        ("opening lead: eight cards of the 32-card pack", _opening),
        ("follow: follow suit and beat the trick", _beat),
        ("follow with the partner winning: head the trick all the same", _partner_ahead),
        ("follow, void in the led suit: trump", _trump_in),
        ("follow a trumped trick, void: over-trump", _over_trump),
        ("follow with neither the suit nor a trump: any card", _any_card),
        ("the last trick: one card to follow with", _last_follow),
    ],
    "four-bidding": [
        ("bidding: the first bid, or pass", _first_bid),
        ("bidding: bid over a bid, the moon, or pass", lambda st, legal: _over_bid(st, legal) and "bid:5" in legal),
        ("opening lead: the bidder's first card sets trumps", lambda st, legal: _opening(st, legal) and st.trump < 0),
        ("lead with a marriage to show", _marry_lead),
        ("lead after a marriage: only its K or Q", _after_marriage),
        ("follow: follow suit and beat the trick", _beat),
        ("follow with the partner winning: head the trick all the same", _partner_ahead),
        ("follow, void in the led suit: trump", _trump_in),
        ("a moon: the bidder's partner sits out, three play",
         lambda st, legal: st.bid == 5 and st.phase_name == "follow" and len(_plays(legal)) >= 2),
        ("the last trick: one card to lead", _last_lead),
    ],
}  # fmt: skip


def _find(variant: Variant, situations: list[tuple[str, Any]], max_seed: int = 5000) -> list[dict[str, Any]]:
    """Play seeded deals with a seeded random player and keep the first decision of each
    situation. Nobody claims 66, so deals run long; in the two-handed games odd seeds
    never close either. The dealer is ``seed`` modulo the seats (a dealer-sits-out hand
    is dealt by its seat 1, as `arena.game.Match` deals it)."""
    found: dict[str, dict[str, Any]] = {}
    for seed in range(max_seed):
        rng = random.Random(seed)
        avoid = {"declare", "close"} if seed % 2 and not variant.is_table else {"declare"}
        dealer = 1 if variant.form == "dealer_sits_out" else seed % variant.players
        st = new_deal(variant, seed, dealer)
        while not st.is_over():
            legal = st.legal_action_strings()
            for label, test in situations:
                if label not in found and test(st, legal):
                    found[label] = {
                        "label": label,
                        "variant": variant.to_dict(),
                        "deal": {"seed": seed, "dealer": dealer, "actions": [action_str(a) for a in st.history]},
                        "observation": observation(st, st.current_player()),
                        "legal": legal,
                    }
            if len(found) == len(situations):
                return [found[label] for label, _ in situations]
            st.apply_action(rng.choice([a for a in legal if a not in avoid] or legal))
    missing = [label for label, _ in situations if label not in found]
    raise RuntimeError(f"{variant.name}: no deal below seed {max_seed} reaches {missing}")


def positions() -> list[dict[str, Any]]:
    """Every recorded two-handed position as ``{"label", "variant", "deal", "observation", "legal"}``.

    Each is a real decision of a real deal: ``deal`` gives its seed, dealer and the actions
    from the deal's start (`new_deal` plus those actions is the position), so an agent that
    rebuilds the whole world from an observation can use every one of them."""
    out = []
    for variant in (get_variant("sixty-six"), get_variant("schnapsen"), CLOSE_OFFER):
        out += _find(variant, SITUATIONS[variant.name])
    return out


def table_positions() -> list[dict[str, Any]]:
    """The recorded positions of the three- and four-handed presets, in the same form.

    ``deal`` is again ``{"seed", "dealer", "actions"}``: `new_deal(variant, seed, dealer)`
    (a `TableState`; in ``three-sitout`` the two-handed hand, dealt by its seat 1 as a
    match deals it) followed by the actions. ``variant`` is the preset's, so the agent is
    checked in the game it declares; the observation and its ``seat`` are the deal's."""
    out = []
    for name, situations in TABLE_SITUATIONS.items():
        out += _find(get_variant(name), situations)
    return out


def write_positions(path: Path = POSITIONS_FILE, table_path: Path | None = None) -> None:
    """Write `positions()` to ``path`` and `table_positions()` to ``table_path`` (default:
    ``table-positions.jsonl`` beside it)."""
    table_path = table_path or path.with_name(TABLE_POSITIONS_FILE.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    for where, found in ((path, positions()), (table_path, table_positions())):
        where.write_text("".join(json.dumps(p, separators=(",", ":")) + "\n" for p in found))


TRANSCRIPT_FILE = EXAMPLES / "greedy-vs-random.jsonl"
TRANSCRIPT_MATCH = dict(agents=("greedy", "random"), seed=3, variant="sixty-six", match_id="example")


async def record_transcript() -> list[dict[str, Any]]:
    """Play the example match and return every line both seats sent and received, as
    ``{"dir": "to-agent" | "from-agent", "seat": s, "msg": {...}}``, seat 0 first
    (`arena.play.transcripts.record_match`, which records the table examples too)."""
    from .transcripts import record_match  # it reads EXAMPLES from here

    m = TRANSCRIPT_MATCH
    return await record_match(m["agents"], m["seed"], get_variant(m["variant"]), match_id=m["match_id"])


def write_transcript(path: Path = TRANSCRIPT_FILE) -> None:
    from .transcripts import dumps

    path.write_text(dumps(trio.run(record_transcript)))


def load_positions(path: Path = POSITIONS_FILE) -> list[dict[str, Any]]:
    """The recorded positions of ``path`` (default: the two-handed ones); where the file is
    not shipped (an installed wheel has no ``protocol/``), the same positions from the
    engine (the tests keep the two equal)."""
    if not path.is_file() and path in (POSITIONS_FILE, TABLE_POSITIONS_FILE):
        return json.loads(json.dumps(positions() if path == POSITIONS_FILE else table_positions()))
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
    games: Sequence[str] | None = None,
) -> list[Item]:
    """Run the conformance suite, the agent in ``sandbox`` (default: a new default one);
    ``report`` sees each item as it is decided. ``games`` limits it to those of the games
    the agent plays (a ladder checks its own game only)."""
    if sandbox is None:
        with Sandbox() as sandbox:
            return await check(
                manifest, report, time_control=time_control, opponent=opponent, logs=logs, sandbox=sandbox,
                games=games,
            )  # fmt: skip
    checked = [g for g in manifest.variants if games is None or g in games]
    tc = time_control or TimeControl(move_ms=1000, bank_ms=0, first_move_ms=5000, grace_ms=200)
    items: list[Item] = []

    def add(name: str, ok: bool, detail: str) -> None:
        item = Item(name, ok, detail)
        items.append(item)
        report(item)

    by_variant: dict[str, list[dict[str, Any]]] = {}
    for p in load_positions() + load_positions(TABLE_POSITIONS_FILE):
        if family(Variant.from_dict(p["variant"])) in checked:  # only the games it plays (and is checked in)
            by_variant.setdefault(p["variant"]["name"], []).append(p)
    first = True
    unstarted: set[str] = set()  # games the agent failed to start in (no match is tried)
    for vname, group in by_variant.items():
        variant = Variant.from_dict(group[0]["variant"])
        hello = Hello.for_game(variant.to_dict(), tc.to_dict(), 12345)
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
            if agent is None:  # it never said ready: in no game at all, or not in this one
                add("handshake" if first else f"start ({vname})", False, f"{f.code}: {f.detail}")
                if first:
                    return items
                unstarted.add(family(variant))
                continue
            # otherwise the item that met the fault has reported it
        if agent is not None:
            clean = agent.stopped_by == "quit" and agent.exit_code == 0
            how = {"quit": f"exit status {agent.exit_code}", None: "unknown"}.get(agent.stopped_by, agent.stopped_by)
            if first or not clean:
                add("quit", clean, f"stopped by {how}" if clean else f"did not exit cleanly on quit ({how})")
        first = False
    from .duel import duel

    opp = resolve(opponent)
    for vname in (g for g in checked if g not in unstarted):
        variant = get_variant(vname)
        # two-handed: a match in each seat; at a table, one (seat 0), the others the opponent
        for seat in range(2 if variant.players == 2 else 1):
            lineup = [opp] * variant.players
            lineup[seat] = manifest
            rec = await duel(
                lineup, 1000 + seat, variant, tc, match_id=f"check-{vname}-{seat}", logs=logs, sandbox=sandbox
            )
            f = rec.forfeit
            if f is not None and f.seat == seat:
                add(f"match ({vname}, seat {seat})", False, f"{f.code}: {f.detail}")
            elif f is not None:
                add(f"match ({vname}, seat {seat})", False, f"the {opponent} opponent faulted: {f.code}: {f.detail}")
            else:
                slowest = max(rec.latency_ms[seat], default=0.0)
                add(
                    f"match ({vname}, seat {seat})",
                    True,
                    f"{_outcome(rec, seat)} against {opponent}, "
                    f"{len(rec.latency_ms[seat])} decisions, slowest {slowest:.1f} ms",
                )
    return items


def _outcome(rec: Any, seat: int) -> str:
    """How ``seat`` did, in words: won or lost and the score; a place at a table of more."""
    if len(rec.latency_ms) == 2:
        return f"{'won' if rec.winner == seat else 'lost'} {rec.score[seat]}-{rec.score[seat ^ 1]}"
    score = ", ".join(f"{x:g}" for x in rec.score)
    limit = ", adjudicated at the deal limit" if rec.adjudicated else ""
    return f"place {rec.places[seat]} of {len(rec.latency_ms)} (score {score}{limit})"


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
