"""A stored match as one self-contained HTML replay page (``arena view``, the report's and
the ladder site's replay links), for every preset: two, three and four seats.

The frames come from the engine, never from a second implementation of the rules: the
match is dealt again from its stored seed (`arena.game.Match` with the store's variant),
each stored action is applied in turn, and after every action (and at each deal's start)
one frame per *view* is taken:

- the spectators' view (``"all"``): every hand face up and the face-down cards in order
  (the talon; at a table F3.1's undealt cards before trumps, F3.2's widow before it is
  taken);
- one view per seat (``"0"``, ``"1"``, ...): built from ``observation(state, seat)``
  (`arena.game.table_observation.table_observation` at a table) and nothing else, so it
  holds exactly what that seat knew: its own hand, the cards of the other hands that were
  shown (a marriage, an exchanged turn-up, a trump card in its owner's hand), the count of
  face-down cards, and everything public. In dealer-sits-out (F3.3) a deal is two-handed
  between two of the three seats (`Match.seats`); the seat sitting out sees what is
  public: the frame of the seats at play without their hands. A seat's page (``arena
  view --seat N``) embeds only that view: its source holds no card the seat could not see.

The views' frames are aligned (frame ``i`` is the same moment in every view), so the page
switches view without losing its place. A frame is a small JSON object (the key list is
`FRAME_KEYS`, the same for every form); per-seat facts are lists indexed by seat, per-side
facts lists indexed by side (``match.sides``: the teams 0+2 and 1+3 with four seats, else
each seat alone):

    d, n      the deal (from 0) and the actions of it applied so far (0: just dealt)
    by, a     the seat that acted and its action (wire form), or null at a deal's start
    say       what happened, in words; cards as {KH}, suits as {H} (the page draws them)
    h         per seat: the cards shown face up in the hand (a seat view: the seat's own
              hand, and the other hands' shown cards)
    x         per seat: the hand's face-down cards (0 for spectators)
    talon     face-down cards in no hand (talon, undealt, widow); stock: spectators only,
              them in order (the talon top first)
    up, upby  the turn-up or trump card, or null, and at a table the seat holding it;
              trump: the trump suit (null until set at a table)
    closed    the seat that closed the talon, or null; out: cards a close put out of play
    table     the trick on the table as [seat, card] in play order; won: its winner once
              complete, else null
    tk        per seat: tricks
    pts, pend per side: card points (tricks and credited marriages), marriage points
              pending a first trick
    score     per side: the match's game points, stakes or marks (after the deal on its
              last frame)
    melds     per seat: suits of the marriages shown in this deal
    act       the seat to act, or null; dealer: the deal's dealer
    res       the deal's result (`DealResult.to_dict`, `TableResult.to_dict`) on its last
              frame, else null; in F3.3 in the deal's seats (``map``)
    bids, bid the auction so far as [seat, bid] (0: a pass), and the contract as
              [bidder, bid] (5: the moon), or [] and null
    sit       the seat sitting out (F3.3's dealer, the moon bidder's partner), or null
    widow     F3.2's widow once taken: {cards, by}, else null
    map       F3.3: the match seats of the deal's seats 0 and 1, else null

In the page the views are delta-coded: each frame holds only the keys whose values
changed since the frame before (`deltas`; `expand_views` undoes it, and so does the page's
script on load). The script (``viewer.js``) and style (``viewer.css``) are package data,
inlined into every page: no network, no CDN.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from ..errors import UserError
from ..game import Match, TableState, Variant, observation, parse_action
from ..game.cards import card_str
from ..game.state import IllegalActionError, State
from ..game.table_observation import table_observation
from ..results.store import Store

FRAME_KEYS = ("d", "n", "by", "a", "say", "h", "x", "talon", "stock", "up", "upby", "trump", "closed", "out", "table",
              "won", "tk", "pts", "pend", "score", "melds", "act", "dealer", "res", "bids", "bid", "sit", "widow",
              "map")  # fmt: skip
#: The version of the page's data (``DATA.format``), for readers of the embedded JSON (2:
#: the table keys, card points and scores per side, ``match.sides``).
FORMAT = 2
_REASONS = {
    "out": "went out with 66",
    "false-claim": "a false claim of 66",
    "failed-close": "a failed close",
    "beaten-closer": "the closer was beaten",
    "higher-total": "the higher total",
    "last-trick": "the last trick",
    "drawn": "a drawn hand",
    "played-out": "every card played",
    "more-points": "more card points, no claim",
    "made": "the contract made",
    "set": "the bidder set",
}
#: The table keys of a two-handed frame (one format for every form): no auction, nobody out.
_NO_TABLE = {"upby": None, "bids": [], "bid": None, "sit": None, "widow": None, "map": None}


class ReplayError(UserError):
    """A match that cannot be replayed: unknown id, or stored actions the engine refuses."""


def safe_name(match_id: str) -> str:
    """A file name for a match id: letters, digits, ``.`` and ``-`` kept, every other
    character as ``_`` and its hex code (``random~greedy#0.1`` -> ``random_7egreedy_230.1``),
    so distinct ids never share a file and no URL needs escaping."""
    return re.sub(r"[^A-Za-z0-9.-]", lambda m: "".join(f"_{b:02x}" for b in m.group().encode()), match_id)


# -- frames ---------------------------------------------------------------------------------------


def _trick_pairs(trick: dict[str, Any]) -> list[list[Any]]:
    """A two-handed observation's trick (leader, two cards) as [seat, card] in play order."""
    lead = trick["leader"]
    return [[(lead + i) % 2, c] for i, c in enumerate(trick["cards"])]


def _public(obs: dict[str, Any], done_before: int) -> dict[str, Any]:
    """The public part of a frame, from any seat's observation (all seats' agree on it).
    ``done_before``: tricks completed before the action, to tell a trick just won."""
    n = len(obs["hand_sizes"])
    if len(obs["tricks"]) > done_before:  # the action completed a trick: it stays on the table
        last = obs["tricks"][-1]
        table, won = _trick_pairs(last), last["winner"]
    elif obs["current_trick"] is not None:
        table, won = [[obs["current_trick"]["leader"], obs["current_trick"]["card"]]], None
    else:
        table, won = [], None
    melds: list[list[str]] = [[] for _ in range(n)]
    for m in obs["marriages"]:
        melds[m["seat"]].append(m["suit"])
    return {
        "talon": obs["talon_size"] - (1 if obs["turn_up"] is not None else 0),
        "up": obs["turn_up"],
        "trump": obs["trump"],
        "closed": obs["closed"]["seat"] if obs["closed"] else None,
        "out": obs["out_of_play"],
        "table": table,
        "won": won,
        "tk": list(obs["trick_counts"]),
        "pts": list(obs["points"]),
        "pend": list(obs["pending"]),
        "score": list(obs["score"]),
        "melds": melds,
        "act": obs["to_act"],
        "dealer": obs["dealer"],
        "res": obs["result"],
        **_NO_TABLE,
    }


def seat_frame(obs: dict[str, Any], done_before: int) -> dict[str, Any]:
    """One seat's frame, from its observation alone (the honest view: nothing here reads
    the state): its hand face up, the other hands' shown cards face up and the rest face
    down, the talon by its size."""
    seat = obs["seat"]
    sizes = obs["hand_sizes"]
    shown = [obs["hand"] if s == seat else list(obs["known_cards"][s]) for s in range(len(sizes))]
    frame = _public(obs, done_before)
    frame["h"] = shown
    frame["x"] = [sizes[s] - len(shown[s]) for s in range(len(sizes))]
    return frame


def spectator_frame(state: State, done_before: int, obs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The spectators' frame: every seat's own observation (``obs``, if already made) for
    its hand, and the talon's face-down cards in order (what no seat knows)."""
    obs = obs or [observation(state, s) for s in range(state.players)]
    frame = _public(obs[0], done_before)
    frame["h"] = [o["hand"] for o in obs]
    frame["x"] = [0] * state.players
    frame["stock"] = [card_str(c) for c in state.stock[state.stock_pos :]]
    return frame


def _say(action: str | None, seat: int | None, names: list[str], obs: dict[str, Any], done_before: int) -> str:
    """What an action did, in words, from the public record (the same in every view)."""
    who = names[seat] if seat is not None else ""
    if action is None:
        up = f" (turn-up {{{obs['turn_up']}}})" if obs["turn_up"] else ""
        return (f"Deal {obs['deal'] + 1}: {names[obs['dealer']]} deals; trumps {{{obs['trump']}}}{up}; "
                f"{names[obs['leader']]} leads")  # fmt: skip
    kind, _, arg = action.partition(":")
    if kind == "play":
        text = f"{who} plays {{{arg}}}"
        if len(obs["tricks"]) > done_before:
            t = obs["tricks"][-1]
            text += f"; {names[t['winner']]} wins trick {len(obs['tricks'])}"
    elif kind == "marry":
        m = obs["marriages"][-1]
        text = f"{who} shows the marriage in {{{arg}}} ({m['points']})"
    elif kind == "exchange":
        e = obs["exchanges"][-1]
        text = f"{who} exchanges {{{e['gave']}}} for the turn-up {{{e['took']}}}"
    elif kind == "close":
        text = f"{who} closes the talon"
    elif kind == "declare":
        text = f"{who} declares 66"
    elif kind == "draw":
        text = f"{who} does not close: both draw"
    elif kind == "pass":
        text = f"{who} passes"
    else:
        text = f"{who}: {action}"
    r = obs["result"]
    if r is not None:
        if r["winner"] is None:
            text += f". The deal is drawn ({r['points'][0]}-{r['points'][1]})"
        else:
            gp = r["game_points"]
            text += (f". {names[r['winner']]} wins the deal: {gp} game point{'s' * (gp != 1)} "
                     f"({_REASONS.get(r['reason'], r['reason'])}; card points "
                     f"{'-'.join(map(str, r['points']))})")  # fmt: skip
    return text


def _blank(n: int, sides: int) -> dict[str, Any]:
    """A frame with nothing on the table (a match forfeited before its first deal)."""
    return {"d": 0, "n": 0, "by": None, "a": None, "say": "", "h": [[] for _ in range(n)], "x": [0] * n, "talon": 0,
            "up": None, "trump": None, "closed": None, "out": 0, "table": [], "won": None, "tk": [0] * n,
            "pts": [0] * sides, "pend": [0] * sides, "score": [0] * sides, "melds": [[] for _ in range(n)],
            "act": None, "dealer": None, "res": None, **_NO_TABLE}  # fmt: skip


# -- three- and four-handed deals (`TableState`) ------------------------------------------------------


def _table_public(obs: dict[str, Any], deck: int, done_before: int) -> dict[str, Any]:
    """The public part of a table frame, from any seat's `table_observation`."""
    n = obs["players"]
    if len(obs["tricks"]) > done_before:  # the action completed a trick: it stays on the table
        last = obs["tricks"][-1]
        table, won = last["cards"], last["winner"]
    elif obs["current_trick"] is not None:
        table, won = obs["current_trick"]["cards"], None
    else:
        table, won = [], None
    melds: list[list[str]] = [[] for _ in range(n)]
    pend = [0] * len(obs["points"])
    for m in obs["marriages"]:
        melds[m["seat"]].append(m["suit"])
        if not m["credited"]:
            pend[obs["teams"][m["seat"]]] += m["points"]
    played = sum(len(t["cards"]) for t in obs["tricks"]) + (len(obs["current_trick"]["cards"])
                                                            if obs["current_trick"] else 0)  # fmt: skip
    widow = obs["widow"]
    turn = obs["turn_card"]
    return {
        # face-down cards in no hand: F3.1's undealt cards before trumps, F3.2's widow before it is taken
        "talon": deck - sum(obs["hand_sizes"]) - played - len(widow or ()),
        "up": turn["card"] if turn else None,
        "upby": turn["seat"] if turn else None,
        "trump": obs["trump"],
        "closed": None,
        "out": 0,
        "table": [list(p) for p in table],
        "won": won,
        "tk": list(obs["trick_counts"]),
        "pts": list(obs["points"]),
        "pend": pend,
        "score": list(obs["score"]),
        "melds": melds,
        "act": obs["to_act"],
        "dealer": obs["dealer"],
        "res": obs["result"],
        "bids": [[b["seat"], b["bid"] or 0] for b in obs["bids"]],
        "bid": [obs["bidder"], obs["bid"]] if obs["bidder"] is not None else None,
        "sit": obs["sitting_out"],
        "widow": {"cards": widow, "by": obs["widow_taken"]} if widow is not None else None,
        "map": None,
    }


def table_seat_frame(obs: dict[str, Any], deck: int, done_before: int) -> dict[str, Any]:
    """One seat's frame of a table deal, from its `table_observation` alone: its hand, the
    other hands' shown cards (marriages, the trump card its owner holds), backs for the rest."""
    seat = obs["seat"]
    sizes = obs["hand_sizes"]
    shown = [obs["hand"] if s == seat else list(obs["known_cards"][s]) for s in range(len(sizes))]
    frame = _table_public(obs, deck, done_before)
    frame["h"] = shown
    frame["x"] = [sizes[s] - len(shown[s]) for s in range(len(sizes))]
    return frame


def table_spectator_frame(state: TableState, obs: list[dict[str, Any]], done_before: int) -> dict[str, Any]:
    """The spectators' frame of a table deal: every hand face up, and the face-down cards
    in no hand (F3.1's undealt cards, F3.2's widow before it is taken) in deal order."""
    frame = _table_public(obs[0], state.variant.deck, done_before)
    frame["h"] = [o["hand"] for o in obs]
    frame["x"] = [0] * state.players
    held = set().union(*(o["hand"] for o in obs))
    gone = {c for t in obs[0]["tricks"] for _, c in t["cards"]} | set(obs[0]["widow"] or ())
    if obs[0]["current_trick"]:
        gone |= {c for _, c in obs[0]["current_trick"]["cards"]}
    frame["stock"] = [c for c in map(card_str, state.order) if c not in held and c not in gone]
    return frame


def _side_name(names: list[str], seats: list[int]) -> str:
    return "+".join(names[s] for s in seats)


def _table_say(action: str | None, seat: int | None, phase: str, trump_before: str | None, names: list[str],
               sides: list[list[int]], obs: dict[str, Any], done_before: int) -> str:  # fmt: skip
    """What happened at a table, in words, from the public record (the same in every view)."""
    who = names[seat] if seat is not None else ""
    if action is None:
        text = f"Deal {obs['deal'] + 1}: {names[obs['dealer']]} deals"
        if obs["trump"]:
            text += f"; trumps {{{obs['trump']}}}"
            if obs["turn_card"]:
                text += f" (the turned card {{{obs['turn_card']['card']}}}, {names[obs['turn_card']['seat']]}'s)"
        if phase == "bid":
            text += f"; {names[obs['to_act']]} bids first"
        elif phase == "name":
            text += f"; {names[obs['to_act']]} has seen three cards: names trumps or passes"
        else:
            text += f"; {names[obs['leader']]} leads"
        return text
    kind, _, arg = action.partition(":")
    if kind == "bid":
        text = f"{who} bids {arg}" + (" (the moon: the partner sits out)" if arg == "5" else f" ({int(arg) * 33})")
    elif kind == "pass" and phase == "bid":
        text = f"{who} passes"
    elif kind == "pass" and phase == "name":
        text = f"{who} passes: the turned card {{{obs['turn_card']['card']}}} makes trumps {{{obs['trump']}}}"
    elif kind == "pass" and phase == "meld":
        text = f"{who} shows no marriage"
    elif kind == "pass":
        text = f"{who} does not claim 66"
    elif kind == "trump":
        text = f"{who} names trumps {{{arg}}}"
    elif kind == "marry":
        m = obs["marriages"][-1]
        text = f"{who} shows the marriage in {{{arg}}} ({m['points']})"
    elif kind == "declare":
        text = f"{who} claims 66 for the side"
    elif kind == "play":
        text = f"{who} {'leads' if phase == 'lead' else 'plays'} {{{arg}}}"
        if trump_before is None and obs["trump"] is not None:  # F4.3, F3.2: the first card led sets trumps
            text += f": trumps {{{obs['trump']}}}"
        if len(obs["tricks"]) > done_before:
            t = obs["tricks"][-1]
            text += f"; {names[t['winner']]} wins trick {len(obs['tricks'])}"
            if obs["widow_taken"] is not None and len(obs["tricks"]) == 1:
                text += " and the widow " + " ".join(f"{{{c}}}" for c in obs["widow"])
    else:
        text = f"{who}: {action}"
    if phase == "bid" and obs["phase"] != "bid" and obs["bidder"] is not None:
        text += f". {names[obs['bidder']]} has the contract: {obs['bid']}" + (" (the moon)" if obs["bid"] == 5 else "")
    r = obs["result"]
    if r is not None:
        if r["reason"] == "all-pass":
            return text + ". All pass: the same dealer deals again"
        gains = ", ".join(f"{_side_name(names, ss)} {g:+g}" for ss, g in zip(sides, r["scores"], strict=True))
        pts = "-".join(map(str, r["points"]))
        head = "drawn" if r["winner"] is None else f"won by {_side_name(names, sides[r['winner']])}"
        text += f". The deal is {head} ({_REASONS.get(r['reason'], r['reason'])}; card points {pts}): {gains}"
    return text

# -- a match's frames --------------------------------------------------------------------------------


def sides_of(variant: Variant) -> list[list[int]]:
    """The seats of each side, in the order of per-side facts (card points, scores): the
    teams 0+2 and 1+3 with four players, else each seat alone."""
    if variant.players == 4:
        return [[0, 2], [1, 3]]
    return [[s] for s in range(variant.players)]


def _lift(frame: dict[str, Any], seats: tuple[int, ...], n: int) -> dict[str, Any]:
    """A frame of a two-handed deal of F3.3 (deal seats 0 and 1) in match seats: the deal's
    ``seats`` map them, the third seat sits out with an empty hand. ``res`` stays in deal
    seats (``map`` says how to read it)."""
    def per_seat(xs: list[Any], empty: Any) -> list[Any]:
        out = [empty] * n
        for i, m in enumerate(seats):
            out[m] = xs[i]
        return out

    def seat(x: int | None) -> int | None:
        return None if x is None else seats[x]

    frame = dict(frame)
    for key in ("h", "melds"):
        frame[key] = per_seat(frame[key], [])
    for key in ("x", "tk", "pts", "pend"):
        frame[key] = per_seat(frame[key], 0)
    for key in ("act", "closed", "won"):
        frame[key] = seat(frame[key])
    frame["table"] = [[seats[s], c] for s, c in frame["table"]]
    frame["sit"] = next(s for s in range(n) if s not in seats)
    frame["map"] = list(seats)
    return frame


class _Frames:
    """The views of a match being replayed: `take` adds one aligned frame to each."""

    def __init__(self, variant: Variant, names: list[str]):
        self.variant = variant
        self.names = names
        self.n = len(names)
        self.sides = sides_of(variant)
        self.views: dict[str, list[dict[str, Any]]] = {"all": [], **{str(s): [] for s in range(self.n)}}

    def take(self, match: Match, state: State | TableState, step: int, action: str | None, seat: int | None,
             phase: str, trump_before: str | None, done_before: int) -> None:  # fmt: skip
        """One frame per view after ``action`` by deal seat ``seat`` (None: the deal's start)."""
        if isinstance(state, TableState):
            self._table(state, step, action, seat, phase, trump_before, done_before)
        elif self.n == 2:
            obs = [observation(state, s) for s in range(2)]
            head = {"d": state.deal_no, "n": step, "by": seat, "a": action,
                    "say": _say(action, seat, self.names, obs[0], done_before)}  # fmt: skip
            self.views["all"].append({**head, **spectator_frame(state, done_before, obs)})
            for s in range(2):
                self.views[str(s)].append({**head, **seat_frame(obs[s], done_before)})
        else:
            self._sitout(match, state, step, action, seat, done_before)

    def _table(self, state: TableState, step: int, action: str | None, seat: int | None, phase: str,
               trump_before: str | None, done_before: int) -> None:  # fmt: skip
        obs = [table_observation(state, s) for s in range(self.n)]
        say = _table_say(action, seat, phase, trump_before, self.names, self.sides, obs[0], done_before)
        head = {"d": state.deal_no, "n": step, "by": seat, "a": action, "say": say}
        self.views["all"].append({**head, **table_spectator_frame(state, obs, done_before)})
        for s in range(self.n):
            self.views[str(s)].append({**head, **table_seat_frame(obs[s], self.variant.deck, done_before)})

    def _sitout(self, match: Match, state: State, step: int, action: str | None, seat: int | None,
                done_before: int) -> None:  # fmt: skip
        """F3.3: the two seats at play see their observations; the seat sitting out sees
        what is public (the frame of either, without its hand: only shown cards)."""
        seats = match.seats
        obs = [observation(state, s) for s in range(2)]
        names = [self.names[m] for m in seats]
        say = _say(action, seat, names, obs[0], done_before)
        out = next(s for s in range(3) if s not in seats)
        if action is None:  # the deal's dealer is deal seat 1; the match's dealer may be sitting out
            say = say.replace(f"{names[obs[0]['dealer']]} deals", f"{self.names[match.dealer]} deals", 1)
            say += f"; {self.names[out]} sits out" + (" (finished)" if match.finished else " (the dealer)")
        by = seats[seat] if seat is not None else None
        head = {"d": state.deal_no, "n": step, "by": by, "a": action, "say": say}

        def lifted(frame: dict[str, Any]) -> dict[str, Any]:
            return {**head, **_lift(frame, seats, 3), "score": list(match.score), "dealer": match.dealer}

        self.views["all"].append(lifted(spectator_frame(state, done_before, obs)))
        for s in range(2):
            self.views[str(seats[s])].append(lifted(seat_frame(obs[s], done_before)))
        public = seat_frame(obs[0], done_before)
        public["h"] = [list(obs[1 - s]["known_cards"][s]) for s in range(2)]
        public["x"] = [obs[0]["hand_sizes"][s] - len(public["h"][s]) for s in range(2)]
        self.views[str(out)].append(lifted(public))


def match_frames(variant: Variant, row: dict[str, Any], deals: list[dict[str, Any]]) -> dict[str, Any]:
    """Every frame of a stored match in every view, with its index (first frame of each
    deal, the frame that completes each trick) and the match's facts; `ReplayError` if the
    stored deals do not replay (another seed, dealer or an action the engine refuses)."""
    match_id = row["id"]
    n = variant.players
    names = [row.get(f"seat{s}") or f"seat {s}" for s in range(n)]
    sides = sides_of(variant)
    match = Match(variant, row["seed"])
    fr = _Frames(variant, names)
    views = fr.views
    deal_starts: list[int] = []
    tricks: list[list[int]] = []

    for k, d in enumerate(deals):
        state = match.new_deal()
        if (state.seed, state.dealer) != (d["seed"], d["dealer"]):
            raise ReplayError(f"{match_id}: deal {k} does not replay: stored seed {d['seed']} and dealer "
                              f"{d['dealer']}, the engine deals seed {state.seed} and dealer {state.dealer}")
        if d.get("seat_map") and d["seat_map"] != " ".join(map(str, match.seats)):
            raise ReplayError(f"{match_id}: deal {k} does not replay: stored seats {d['seat_map']!r}, the engine "
                              f"seats {' '.join(map(str, match.seats))}")  # fmt: skip
        deal_starts.append(len(views["all"]))
        tricks.append([])
        fr.take(match, state, 0, None, None, _phase(state), _trump(state), 0)
        for i, action in enumerate(d["actions"].split() if d["actions"] else []):
            seat = state.current_player()
            done = len(state.trick_log)
            phase, trump = _phase(state), _trump(state)
            try:
                state.apply_action(parse_action(action))
            except (IllegalActionError, ValueError) as e:
                raise ReplayError(f"{match_id}: deal {k}, action {i} ({action!r}) does not replay: {e}") from None
            fr.take(match, state, i + 1, action, seat, phase, trump, done)
            if len(state.trick_log) > done:
                tricks[-1].append(len(views["all"]) - 1)
        if not state.is_over():
            raise ReplayError(f"{match_id}: deal {k} ends unfinished after its {len(d['actions'].split())} actions")
        match.finish_deal()
        for frames in views.values():  # the last frame of a deal shows the match score after it
            frames[-1]["score"] = list(match.score)
    if row.get("fault") is not None:
        who = names[row["forfeit_seat"]] if row.get("forfeit_seat") is not None else "a seat"
        text = f"{who} forfeits the match: {row['fault']}"
        if row.get("fault_detail"):
            text += f" ({row['fault_detail']})"
        if row.get("fault_deal") is not None and row["fault_deal"] == len(deals) and not match.is_over():
            state = match.new_deal()  # the deal it happened in: dealt, its actions not stored
            deal_starts.append(len(views["all"]))
            tricks.append([])
            fr.take(match, state, 0, None, None, _phase(state), _trump(state), 0)
            text = f"{views['all'][-1]['say']}. In this deal {text}"
        elif not deals:
            text = f"No deal was played: {text}"
        for frames in views.values():
            if not frames:
                frames.append(_blank(n, len(sides)))
            frames[-1]["say"] = text
            frames[-1]["forfeit"] = row.get("forfeit_seat")
    return {
        "format": FORMAT,
        "match": {
            "id": match_id,
            "variant": variant.name,
            "form": variant.form,
            "players": n,
            "seats": names,
            "sides": sides,
            "score": [_whole(row.get(f"score{t}")) for t in range(len(sides))],
            "kind": row.get("kind") or "winner",
            "winner": row["winner"],
            "places": [row.get(f"place{s}") for s in range(n)] if n > 2 else None,
            "fault": row.get("fault"),
            "fault_detail": row.get("fault_detail"),
            "forfeit_seat": row.get("forfeit_seat"),
        },
        "deals": deal_starts,
        "tricks": tricks,
        "views": views,
    }


def _whole(x: Any) -> Any:
    """A stored score (REAL at a table) as an int when whole: 2.0 is shown as 2."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _phase(state: State | TableState) -> str:
    return state.phase_name if isinstance(state, TableState) else ""


def _trump(state: State | TableState) -> str | None:
    return "CDHS"[state.trump] if isinstance(state, TableState) and state.trump >= 0 else None


# -- the page --------------------------------------------------------------------------------------


def _asset(name: str) -> str:
    return resources.files("arena.report").joinpath(name).read_text(encoding="utf-8")


def deltas(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each frame as the keys whose values differ from the frame before (the first whole):
    about half the size, as most of a frame stays the same from one step to the next."""
    out, prev = [], {}
    for f in frames:
        out.append({k: v for k, v in f.items() if k not in prev or prev[k] != v})
        prev = f
    return out


def expand_views(data: dict[str, Any]) -> dict[str, Any]:
    """The page's data (``DATA``, delta-coded views) with whole frames again, as
    `match_frames` made them: for readers of a page's embedded JSON."""
    views = {}
    for v, frames in data["views"].items():
        whole, prev = [], {}
        for f in frames:
            prev = {**prev, **f}
            whole.append(prev)
        views[v] = whole
    return {**data, "views": views}


def page(data: dict[str, Any], *, seat: int | None = None, title: str | None = None) -> str:
    """The HTML page of ``data`` (`match_frames`): every view, or with ``seat`` only that
    seat's view (no other view's data is embedded). The views are delta-coded (`deltas`)."""
    if seat is not None:
        if not 0 <= seat < data["match"]["players"]:
            raise UserError(f"--seat: the match has seats 0..{data['match']['players'] - 1}, got {seat}")
        data = {**data, "views": {str(seat): data["views"][str(seat)]}}
    data = {**data, "views": {v: deltas(frames) for v, frames in data["views"].items()}}
    m = data["match"]
    sides = m.get("sides") or [[s] for s in range(m["players"])]
    who = " vs ".join("+".join(m["seats"][s] for s in side) for side in sides)
    title = title or f"{who}: {m['id']} ({m['variant']})"
    # JSON in a script element: "</" must not end it early, nor "<!--" open a comment.
    blob = orjson.dumps(data).decode().replace("</", "<\\/").replace("<!--", "<\\!--")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_asset('viewer.css')}</style></head>\n"
        f'<body><div id="app" data-title="{html.escape(title)}"></div>\n'
        f'<script type="application/json" id="replay-data">{blob}</script>\n'
        f"<script>{_asset('viewer.js')}</script>\n</body></html>\n"
    )


def load_match(store: Store, match_id: str) -> tuple[Variant, dict[str, Any], list[dict[str, Any]]]:
    """A stored match's variant, row and deals; `ReplayError` naming an unknown id."""
    found = store.match(match_id)
    if found is None:
        first = next(store.chunks("matches", ["id"], size=3), [])
        some = ", ".join(r[0] for r in first)
        raise ReplayError(f"{store.path}: no match {match_id!r} (ids look like: {some or 'none stored'})")
    row, deals = found
    config = store.config or {}
    variant = Variant.from_dict(config.get("variant") or {"base": "sixty-six"})
    return variant, row, deals


def write_replay(store: Store, match_id: str, path: Path, *, seat: int | None = None) -> Path:
    """Write the replay page of one stored match to ``path`` (folders made as needed)."""
    variant, row, deals = load_match(store, match_id)
    text = page(match_frames(variant, row, deals), seat=seat)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
