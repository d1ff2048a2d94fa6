"""``arena view`` at a table: replays of the three- and four-handed presets, made by real
table tournaments, checked frame by frame against an independent replay through the engine
(scores per side, tricks of 3 or 4 cards, the auction, who sits out), the honesty of each
seat's page, the report's links, and a four-handed replay stepped through in headless
Chromium (Playwright, the system Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from running import arena, cards_in, page_data

from arena.game import Match, TableState, Variant, parse_action
from arena.game.cards import KING, QUEEN, card_str, cards_str
from arena.report.replay_page import FRAME_KEYS, expand_views, match_frames, page, safe_name
from arena.results.store import Store

THREE = ("three-pagat", "three-cutthroat", "three-sitout")
FOUR = ("four-pagat", "kreuzmariage", "four-bidding")


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    """One store per table preset: a real tournament of one deck set (3 or 6 matches)."""
    folder = tmp_path_factory.mktemp("view-tables")
    out = {}
    for variant in THREE + FOUR:
        agents = "random,greedy,heuristic" if variant in THREE else "random,greedy,heuristic,node-greedy"
        path = folder / f"{variant}.sqlite"
        p = arena("tournament", "--agents", agents, "--variant", variant, "--pairs", "1", "--seed", "3",
                  "--store", path, "--quiet", "--no-report", "--no-sandbox")  # fmt: skip
        assert p.returncode == 0, p.stderr
        out[variant] = path
    return out


def stored(path: Path, match_id: str | None = None):
    with Store(path, create=False) as s:
        variant = Variant.from_dict(s.config["variant"])
        ids = [r["id"] for r in s.matches(["id"])]
        found = s.match(match_id or ids[0])
        assert found
        return variant, found[0], found[1], ids


class Step:
    """The engine at one frame: the deal's state (a clone) and the match seats of its seats."""

    def __init__(self, state, seats: tuple[int, ...], dealer: int, score: list):
        self.state, self.seats, self.dealer, self.score = state, seats, dealer, score


def engine_steps(variant: Variant, row: dict, deals: list[dict]) -> list[Step]:
    """The engine's state at every frame of a match (each deal's start and after each of
    its actions), replayed here independently of the viewer's code."""
    match = Match(variant, row["seed"])
    out = []
    for d in deals:
        st = match.new_deal()
        out.append(Step(st.clone(), match.seats, match.dealer, list(match.score)))
        for a in d["actions"].split():
            st.apply_action(parse_action(a))
            out.append(Step(st.clone(), match.seats, match.dealer, list(match.score)))
        match.finish_deal()
        out[-1].score = list(match.score)
    return out


def hand_of(step: Step, seat: int) -> list[str]:
    """Match seat ``seat``'s hand at a step (empty while it sits out of a dealer-sits-out deal)."""
    st = step.state
    if isinstance(st, TableState):
        return cards_str(st.hand[seat])
    return cards_str(st.hand[step.seats.index(seat)]) if seat in step.seats else []


def seen_by(steps: list[Step], seat: int) -> list[set[str]]:
    """The cards match seat ``seat`` has seen by each frame, within the frame's deal: its own
    hands, every card played, the trump card, the cards of marriages and exchanges shown,
    the widow once taken."""
    out: list[set[str]] = []
    seen: set[str] = set()
    deal = None
    for step in steps:
        st = step.state
        if st.deal_no != deal:
            seen, deal = set(), st.deal_no
        seen |= set(hand_of(step, seat))
        if isinstance(st, TableState):
            for _, cards, _ in st.trick_log:
                seen |= {card_str(c) for _, c in cards}
            seen |= {card_str(c) for _, c in st.trick}
            if st.turn_card >= 0:
                seen.add(card_str(st.turn_card))
            if st.widow_taken >= 0:
                seen |= set(cards_str(st.widow))
        else:
            if st.turn_up >= 0:
                seen.add(card_str(st.turn_up))
            for _, lc, fc, _ in st.trick_log:
                seen |= {card_str(lc), card_str(fc)}
            if st.lead_card >= 0:
                seen.add(card_str(st.lead_card))
        for ev in st.events:
            if ev[0] == "marriage":
                seen |= {card_str(ev[2] * 6 + KING), card_str(ev[2] * 6 + QUEEN)}
            elif ev[0] == "exchange":
                seen |= {card_str(ev[2]), card_str(ev[3])}
        out.append(set(seen))
    return out


def sides_of(n: int) -> list[list[int]]:
    return [[0, 2], [1, 3]] if n == 4 else [[s] for s in range(n)]


# -- frames against the engine and the store ---------------------------------------------------------


@pytest.mark.parametrize("variant", THREE + FOUR)
def test_every_preset_replays_its_first_match_to_the_stored_result(variant, stores, tmp_path):
    path = stores[variant]
    v, row, deals, _ = stored(path)
    out = tmp_path / "r.html"
    p = arena("view", path, row["id"], "-o", out)
    assert p.returncode == 0, p.stderr
    data = page_data(out)
    n = v.players
    views = data["views"]
    assert set(views) == {"all", *map(str, range(n))} and len({len(f) for f in views.values()}) == 1
    assert data["match"]["seats"] == [row[f"seat{s}"] for s in range(n)] and data["match"]["sides"] == sides_of(n)
    steps = engine_steps(v, row, deals)
    frames = views["all"]
    assert len(frames) == len(steps) == sum(len(d["actions"].split()) + 1 for d in deals)
    nsides = len(sides_of(n))
    assert all(set(f) == set(FRAME_KEYS) for f in frames)  # one format for every form
    assert all(set(f) == set(FRAME_KEYS) - {"stock"} for s in range(n) for f in views[str(s)])
    for i, (f, step) in enumerate(zip(frames, steps, strict=True)):
        st = step.state
        assert [f["h"][s] for s in range(n)] == [hand_of(step, s) for s in range(n)], (variant, i)
        assert f["dealer"] == step.dealer and f["d"] == st.deal_no
        assert len(f["score"]) == len(f["pts"]) == nsides and len(f["tk"]) == n
        if isinstance(st, TableState):
            assert f["pts"] == [st.count(t) for t in range(nsides)] and f["tk"] == list(st.tricks)
            assert f["sit"] == next((s for s in range(n) if st.active and s not in st.active), None)
            assert f["trump"] == ("CDHS"[st.trump] if st.trump >= 0 else None)
            assert f["bid"] == ([st.bidder, st.bid] if st.bidder >= 0 else None)
        else:  # dealer-sits-out: a two-handed deal between two of the three seats
            assert f["map"] == list(step.seats) and f["sit"] == ({0, 1, 2} - set(step.seats)).pop()
            assert [f["pts"][m] for m in step.seats] == [st.count(0), st.count(1)] and f["pts"][f["sit"]] == 0
    # each deal's end against the store: its result, its tricks, the gains per side
    for k, d in enumerate(deals):
        end = frames[data["deals"][k] + len(d["actions"].split())]
        res = end["res"]
        assert res["winner"] == d["winner"] and res["reason"] == d["reason"]
        assert res["points"] == [d[f"points{t}"] for t in range(len(res["points"]))]
        assert len(data["tricks"][k]) == sum(d[f"tricks{t}"] or 0 for t in range(3))
        if v.is_table:
            assert res["scores"] == pytest.approx([d[f"gain{t}"] for t in range(nsides)])
            assert (res["bidder"], res["bid"] or None) == (d["bidder"], d["bid"])
            for t in data["tricks"][k]:  # a completed trick lies on the table: one card per seat at play
                f = frames[t]
                active = n - (f["sit"] is not None)
                assert len(f["table"]) == active and len({s for s, _ in f["table"]}) == active
                assert f["won"] in {s for s, _ in f["table"]}
        else:
            assert end["map"] == [int(x) for x in d["seat_map"].split()]
    # the last frame: the stored match score, per side
    assert frames[-1]["score"] == pytest.approx([row[f"score{t}"] for t in range(nsides)])
    assert data["match"]["score"] == pytest.approx([row[f"score{t}"] for t in range(nsides)])


def test_table_moments_are_shown_in_words(stores):
    """Bids, the contract and the moon, trump naming, the partner's marriage, the claim,
    the widow, who sits out: what the spectators read under the trick."""
    said = {}
    for variant in THREE + FOUR:
        v, row, deals, _ = stored(stores[variant])
        said[variant] = "\n".join(f["say"] for f in match_frames(v, row, deals)["views"]["all"])
    assert re.search(r"\w+ bids \d \(\d+\)", said["four-bidding"]) and "has the contract" in said["four-bidding"]
    assert "the moon" in said["four-bidding"]  # seed 3: bid in deal 3 of the first match
    assert re.search(r"\w+ names trumps \{[CDHS]\}|passes: the turned card", said["three-pagat"])
    assert "the widow {" in said["three-cutthroat"] and "bids first" in said["three-cutthroat"]
    assert "shows the marriage in" in said["four-pagat"] and "claims 66 for the side" in said["four-pagat"]
    assert "sits out (the dealer)" in said["three-sitout"]
    assert "(the turned card {" in said["kreuzmariage"]


# -- a seat's view, kept honest ------------------------------------------------------------------


@pytest.mark.parametrize("variant", THREE + FOUR)
def test_a_seat_page_holds_only_cards_that_seat_could_see(variant, stores):
    """Every card in seat s's frame i is one s had seen by then (the other seats' hidden
    cards are not in it), and seat s's page (``--seat``) holds no card s never saw in a
    deal among that deal's frames; the spectators' frames do hold such cards."""
    v, row, deals, _ = stored(stores[variant])
    data = match_frames(v, row, deals)
    steps = engine_steps(v, row, deals)
    hidden_somewhere = 0
    for seat in range(v.players):
        seen = seen_by(steps, seat)
        frames = data["views"][str(seat)]
        for i, step in enumerate(steps):
            f = frames[i]
            assert "stock" not in f
            assert cards_in(f) <= seen[i], (variant, seat, i, cards_in(f) - seen[i])
            others = {c for s in range(v.players) if s != seat for c in hand_of(step, s)} - seen[i]
            assert not cards_in(f) & others
            assert f["h"][seat] == hand_of(step, seat)
            for s in range(v.players):  # the others' cards: shown ones face up, the rest as backs
                assert len(f["h"][s]) + f["x"][s] == len(hand_of(step, s))
            hidden_somewhere += len(cards_in(data["views"]["all"][i]) - seen[i])
        # the page of that seat: its view only; a deal's frames hold no card the seat never saw in it
        text = page(data, seat=seat)
        blob = re.search(r'id="replay-data">(.*?)</script>', text, re.S).group(1)
        assert '"stock"' not in blob and '"all"' not in blob
        one = expand_views(json.loads(blob.replace("<\\/", "</")))
        assert list(one["views"]) == [str(seat)]
        last = {st.state.deal_no: seen[i] for i, st in enumerate(steps)}
        for f in one["views"][str(seat)]:
            assert cards_in(f) <= last[f["d"]], (variant, seat, f["d"])
    assert hidden_somewhere > 0


def test_a_seat_page_from_the_command_line(stores, tmp_path):
    v, row, deals, _ = stored(stores["four-bidding"])
    out = tmp_path / "seat3.html"
    p = arena("view", stores["four-bidding"], row["id"], "-o", out, "--seat", "3")
    assert p.returncode == 0 and p.stdout.strip() == f"replay: {out}"
    data = page_data(out)
    assert list(data["views"]) == ["3"]
    steps = engine_steps(v, row, deals)
    seen = seen_by(steps, 3)
    for i, f in enumerate(data["views"]["3"]):  # every card of the page's frames: seen by seat 3 at that step
        assert cards_in(f) <= seen[i], (i, cards_in(f) - seen[i])
    others = {c for s in (0, 1, 2) for c in hand_of(steps[0], s)}  # at the deal: 18 cards it cannot see
    assert len(others) == 18 and not others & cards_in(data["views"]["3"][0])
    p = arena("view", stores["four-bidding"], row["id"], "--seat", "4", "-o", out)
    assert p.returncode == 2 and p.stderr.strip() == "arena: error: --seat: the match has seats 0..3, got 4"


# -- the report ------------------------------------------------------------------------------------


def test_the_report_links_table_matches_to_their_replays(stores, tmp_path):
    path = stores["three-cutthroat"]
    out = tmp_path / "rep"
    p = arena("report", path, "-o", out, "--replays", "2")
    assert p.returncode == 0, p.stderr
    assert 'href="matches.html"' in (out / "index.html").read_text()
    links = re.findall(r'<a href="(replays/[^"]+)">([^<]+)</a>', (out / "matches.html").read_text())
    _, _, _, ids = stored(path)
    assert [mid for _, mid in links] == ids[::-1][:2]  # the cap: the two most recent
    assert sorted(x.name for x in (out / "replays").iterdir()) == sorted(h.split("/")[1] for h, _ in links)
    for href, mid in links:
        assert href == f"replays/{safe_name(mid)}.html" and page_data(out / href)["match"]["id"] == mid


def test_a_table_ladder_site_links_its_matches_to_their_replays(tmp_path):
    folder = tmp_path / "lad"
    fast = ["--move-ms", "200", "--first-move-ms", "3000", "--bank-ms", "2000"]
    p = arena("ladder", "init", folder, "--variant", "three-cutthroat", "--concurrency", "2", "--round-pairs", "1",
              *fast)  # fmt: skip
    assert p.returncode == 0, p.stderr
    for a in ("random", "greedy", "heuristic"):
        assert arena("submit", a, "--ladder", folder).returncode == 0
    assert arena("ladder", "run", "--ladder", folder, "--rounds", "1", "--quiet").returncode == 0
    assert arena("ladder", "site", "--ladder", folder).returncode == 0
    agent = (folder / "site" / "agents" / f"{safe_name('greedy@1.0.0')}.html").read_text()
    links = re.findall(r'<a href="\.\./(replays/[^"]+)">([^<]+)</a>', agent)
    assert "each with its replay" in agent and sorted(mid for _, mid in links) == ["L1.0", "L1.1", "L1.2"]
    with Store(folder / "ladder.sqlite", create=False) as store:
        for href, mid in links:
            row, _ = store.match(mid)
            data = page_data(folder / "site" / href)
            assert data["match"]["id"] == mid and data["match"]["players"] == 3
            assert data["views"]["all"][-1]["score"] == pytest.approx([row[f"score{s}"] for s in range(3)])


# -- in the browser ----------------------------------------------------------------------------------

PROBE = """() => {
  const seat = (s) => ({
    hand: [...document.querySelectorAll(`.hand[data-seat="${s}"] .card`)].map(c => c.dataset.card),
    tk: Number(document.querySelector(`.stats[data-seat="${s}"] [data-field=tk]`).textContent),
    cls: document.querySelector(`.seat[data-seat="${s}"]`).className,
    badges: document.querySelector(`.seat[data-seat="${s}"] .name`).textContent,
  });
  const side = (t) => ({
    pts: Number(document.querySelector(`#sides tr[data-side="${t}"] [data-field=pts]`).textContent.split(" ")[0]),
    tk: Number(document.querySelector(`#sides tr[data-side="${t}"] [data-field=tk]`).textContent),
    score: Number(document.querySelector(`#sides tr[data-side="${t}"] [data-field=score]`).textContent),
  });
  const contract = document.querySelector('#contract');
  return {
    step: Number(document.body.dataset.step), view: document.body.dataset.view,
    seats: [0, 1, 2, 3].map(seat), sides: [side(0), side(1)],
    trick: [...document.querySelectorAll('#trick .card')].map(c => [c.className.match(/at-(\\w+)/)[1], c.dataset.card]),
    won: document.querySelector('#trick').dataset.won,
    trump: document.querySelector('#trumps').dataset.trump,
    bids: [...document.querySelectorAll('ul.bids li')].map(l => l.textContent),
    contract: contract ? contract.textContent : null,
    say: document.querySelector('#say').textContent,
    all: [...document.querySelectorAll('[data-card]')].map(c => c.dataset.card).filter(c => c !== 'back'),
    hash: location.hash,
  };
}"""
PLACES = ["bottom", "left", "top", "right"]  # clockwise from the viewer: seat + 1 sits at its left


def check_step(seen: dict, step: Step, names: list[str], view: int | None = None) -> None:
    """The DOM of a four-handed replay against the engine's state at this step."""
    st = step.state
    me = view or 0
    for s in range(4):
        hand = hand_of(step, s)
        if view is None or view == s:
            assert seen["seats"][s]["hand"] == hand, (seen["step"], s)
        else:
            assert len(seen["seats"][s]["hand"]) == len(hand)
        assert seen["seats"][s]["tk"] == st.tricks[s]
        assert ("to-act" in seen["seats"][s]["cls"]) == (st.to_act == s)
        assert ("dealer" in seen["seats"][s]["badges"]) == (s == step.dealer)
        assert ("sits out" in seen["seats"][s]["badges"]) == bool(st.active and s not in st.active)
    for t in range(2):
        assert seen["sides"][t]["pts"] == st.count(t) and seen["sides"][t]["tk"] == st.team_tricks(t)
        assert seen["sides"][t]["score"] == step.score[t]
    assert seen["trump"] == ("CDHS"[st.trump] if st.trump >= 0 else "")
    if st.trick:  # the trick being played, each card before its player's place round the table
        assert seen["trick"] == [[PLACES[(s - me) % 4], card_str(c)] for s, c in st.trick]
    bids = [(ev[1], ev[2]) for ev in st.events if ev[0] == "bid"]
    assert len(seen["bids"]) == len(bids)
    for text, (s, b) in zip(seen["bids"], bids, strict=True):
        said = "pass" if b == 0 else "moon" if b == 5 else f"bid {b}"
        assert text.startswith(names[s] + ":") and said in text
    if st.bidder >= 0:
        assert seen["contract"].startswith(f"Contract: {names[st.bidder]}")


def test_stepping_through_a_four_handed_deal_in_chromium(stores, tmp_path, page):
    path = stores["four-bidding"]
    v, row, deals, _ = stored(path)
    out = tmp_path / "r.html"
    assert arena("view", path, row["id"], "-o", out).returncode == 0
    data = page_data(out)
    steps = engine_steps(v, row, deals)
    names = [row[f"seat{s}"] for s in range(4)]
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(out.as_uri())
    seen = page.evaluate(PROBE)
    assert seen["step"] == 0 and seen["hash"] == "#step=0&view=all" and seen["say"].startswith("Deal 1: ")
    check_step(seen, steps[0], names)
    n = len(deals[0]["actions"].split())
    for i in range(1, n + 1):  # deal 1, action by action: clicks on odd steps, the Right key on even
        page.click("#next") if i % 2 else page.keyboard.press("ArrowRight")
        seen = page.evaluate(PROBE)
        assert seen["step"] == i
        check_step(seen, steps[i], names)
        st, before = steps[i].state, steps[i - 1].state
        if len(st.trick_log) > len(before.trick_log):  # a trick completed: its four cards round the table, its winner
            _, cards, w = st.trick_log[-1]
            assert seen["trick"] == [[PLACES[s], card_str(c)] for s, c in cards] and seen["won"] == str(w)
    d0 = deals[0]
    assert seen["sides"][d0["winner"]]["score"] == d0[f"gain{d0['winner']}"]
    assert "The deal is won by " + "+".join(names[s] for s in (d0["winner"], d0["winner"] + 2)) in seen["say"]
    # the deal with the moon: the bidder's partner sits out, three cards a trick
    moon = next(k for k, d in enumerate(deals) if d["bid"] == 5)
    page.goto(out.as_uri() + f"#deal={moon + 1}&trick=1")
    page.reload()
    seen = page.evaluate(PROBE)
    assert seen["step"] == data["tricks"][moon][0]
    check_step(seen, steps[seen["step"]], names)
    assert len(seen["trick"]) == 3 and "moon" in seen["contract"]
    assert sum("sits out" in s["badges"] for s in seen["seats"]) == 1
    # keys: PageDown the next deal, Down the next trick, End, Home
    page.keyboard.press("PageDown")
    assert page.evaluate(PROBE)["step"] == data["deals"][moon + 1]
    page.keyboard.press("ArrowDown")
    assert page.evaluate(PROBE)["step"] == data["tricks"][moon + 1][0]
    page.keyboard.press("End")
    seen = page.evaluate(PROBE)
    assert seen["step"] == len(steps) - 1 and [s["score"] for s in seen["sides"]] == [row["score0"], row["score1"]]
    page.keyboard.press("Home")
    assert page.evaluate(PROBE)["step"] == 0
    # seat 2's view: its cards at the bottom, its partner's (seat 0) at the top, only cards it had seen
    page.goto(out.as_uri() + "#step=0&view=2")
    page.reload()
    sees = seen_by(steps, 2)
    for i in range(n + 1):
        if i:
            page.keyboard.press("ArrowRight")
        seen = page.evaluate(PROBE)
        assert seen["view"] == "2" and seen["step"] == i
        check_step(seen, steps[i], names, view=2)
        assert set(seen["all"]) <= sees[i], (i, set(seen["all"]) - sees[i])
    page.keyboard.press("v")  # the next view: seat 3
    assert page.evaluate(PROBE)["view"] == "3"
    assert errors == []
