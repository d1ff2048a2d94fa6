"""A stored match as one self-contained HTML replay page (``arena view``, the report's and
the ladder site's replay links).

The frames come from the engine, never from a second implementation of the rules: the
match is dealt again from its stored seed (`arena.game.Match` with the store's variant),
each stored action is applied in turn, and after every action (and at each deal's start)
one frame per *view* is taken:

- the spectators' view (``"all"``): every hand face up and the face-down talon in order;
- one view per seat (``"0"``, ``"1"``, ...): built from ``observation(state, seat)`` and
  nothing else, so it holds exactly what that seat knew: its own hand, the cards of the
  other hands that were shown (a marriage's partner, an exchanged turn-up), the talon's
  size, and everything public. A seat's page (``arena view --seat N``) embeds only that
  view: its source holds no card the seat could not see.

The views' frames are aligned (frame ``i`` is the same moment in every view), so the page
switches view without losing its place. A frame is a small JSON object (the key list is
`FRAME_KEYS`; per-seat facts are lists indexed by seat, so three- and four-handed forms fit
the same shape):

    d, n      the deal (from 0) and the actions of it applied so far (0: just dealt)
    by, a     the seat that acted and its action (wire form), or null at a deal's start
    say       what happened, in words; cards as {KH}, suits as {H} (the page draws them)
    h         per seat: the cards shown face up in the hand (a seat view: the seat's own
              hand, and the other hands' shown cards)
    x         per seat: the hand's face-down cards (0 for spectators)
    talon     face-down talon cards left; stock: spectators only, the talon top first
    up        the turn-up card, or null; trump: the trump suit
    closed    the seat that closed the talon, or null; out: cards a close put out of play
    table     the trick on the table as [seat, card] in play order; won: its winner once
              complete, else null
    tk, pts, pend   per seat: tricks, card points (tricks and credited marriages),
              marriage points pending a first trick
    score     per seat: the match's game points (after the deal on its last frame)
    melds     per seat: suits of the marriages shown in this deal
    act       the seat to act, or null; dealer: the deal's dealer
    res       the deal's result (as `arena.game.DealResult.to_dict`) on its last frame, else null

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
from ..game import Match, Variant, observation, parse_action
from ..game.cards import card_str
from ..game.state import IllegalActionError, State
from ..results.store import Store

FRAME_KEYS = ("d", "n", "by", "a", "say", "h", "x", "talon", "stock", "up", "trump", "closed", "out", "table", "won",
              "tk", "pts", "pend", "score", "melds", "act", "dealer", "res")  # fmt: skip
#: The version of the page's data (``DATA.format``), for readers of the embedded JSON.
FORMAT = 1
_REASONS = {
    "out": "went out with 66",
    "false-claim": "a false claim of 66",
    "failed-close": "a failed close",
    "beaten-closer": "the closer was beaten",
    "higher-total": "the higher total",
    "last-trick": "the last trick",
    "drawn": "a drawn hand",
}


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


def match_frames(variant: Variant, row: dict[str, Any], deals: list[dict[str, Any]]) -> dict[str, Any]:
    """Every frame of a stored match in every view, with its index (first frame of each
    deal, the frame that completes each trick) and the match's facts; `ReplayError` if the
    stored deals do not replay (another seed, dealer or an action the engine refuses)."""
    match_id = row["id"]
    names = [row["seat0"], row["seat1"]]
    n = len(names)
    if variant.players != n or variant.is_table or variant.form != "two_handed":
        raise ReplayError(f"{match_id}: only two-handed matches can be viewed yet (variant {variant.name})")
    match = Match(variant, row["seed"])
    views: dict[str, list[dict[str, Any]]] = {"all": [], **{str(s): [] for s in range(n)}}
    deal_starts: list[int] = []
    tricks: list[list[int]] = []

    def take(state: State, step: int, action: str | None, seat: int | None, done_before: int) -> None:
        obs = [observation(state, s) for s in range(n)]
        say = _say(action, seat, names, obs[0], done_before)
        head = {"d": state.deal_no, "n": step, "by": seat, "a": action, "say": say}
        views["all"].append({**head, **spectator_frame(state, done_before, obs)})
        for s in range(n):
            views[str(s)].append({**head, **seat_frame(obs[s], done_before)})

    for k, d in enumerate(deals):
        state = match.new_deal()
        if (state.seed, state.dealer) != (d["seed"], d["dealer"]):
            raise ReplayError(f"{match_id}: deal {k} does not replay: stored seed {d['seed']} and dealer "
                              f"{d['dealer']}, the engine deals seed {state.seed} and dealer {state.dealer}")
        deal_starts.append(len(views["all"]))
        tricks.append([])
        take(state, 0, None, None, 0)
        for i, action in enumerate(d["actions"].split() if d["actions"] else []):
            seat = state.current_player()
            done = len(state.trick_log)
            try:
                state.apply_action(parse_action(action))
            except (IllegalActionError, ValueError) as e:
                raise ReplayError(f"{match_id}: deal {k}, action {i} ({action!r}) does not replay: {e}") from None
            take(state, i + 1, action, seat, done)
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
            take(state, 0, None, None, 0)
            text = f"{views['all'][-1]['say']}. In this deal {text}"
        elif not deals:
            text = f"No deal was played: {text}"
        for frames in views.values():
            if not frames:
                frames.append({"d": 0, "n": 0, "by": None, "a": None, "say": "", "h": [[] for _ in names],
                               "x": [0] * n, "talon": 0, "up": None, "trump": None, "closed": None, "out": 0,
                               "table": [], "won": None, "tk": [0] * n, "pts": [0] * n, "pend": [0] * n,
                               "score": [0] * n, "melds": [[] for _ in names], "act": None, "dealer": None,
                               "res": None})  # fmt: skip
            frames[-1]["say"] = text
            frames[-1]["forfeit"] = row.get("forfeit_seat")
    return {
        "format": FORMAT,
        "match": {
            "id": match_id,
            "variant": variant.name,
            "players": n,
            "seats": names,
            "score": [row["score0"], row["score1"]],
            "winner": row["winner"],
            "fault": row.get("fault"),
            "fault_detail": row.get("fault_detail"),
            "forfeit_seat": row.get("forfeit_seat"),
        },
        "deals": deal_starts,
        "tricks": tricks,
        "views": views,
    }


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
    title = title or f"{' vs '.join(m['seats'])}: {m['id']} ({m['variant']})"
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
