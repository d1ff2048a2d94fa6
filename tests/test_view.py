"""``arena view``: a stored match's replay page, its frames against the engine, the honesty of a
seat's view, and the page in headless Chromium driven by Playwright (the system Chromium)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from running import arena, cards_in, page_data

from arena.game import Match, Variant, parse_action
from arena.game.cards import KING, QUEEN, card_str, cards_of
from arena.report.replay_page import deltas, expand_views, match_frames, safe_name
from arena.results.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """Sixty-Six: random, greedy and an agent that crashes mid-match (forfeits)."""
    path = tmp_path_factory.mktemp("view") / "rr.sqlite"
    p = arena("tournament", "--agents", "random,greedy,tests/agents/broken/crash-mid-match.toml", "--pairs", "1",
              "--seed", "3", "--store", path, "--quiet", "--no-report", "--no-sandbox")  # fmt: skip
    assert p.returncode == 0, p.stderr
    return path


@pytest.fixture(scope="module")
def schnapsen(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("view") / "sch.sqlite"
    p = arena("tournament", "--agents", "random,greedy", "--variant", "schnapsen", "--pairs", "1", "--seed", "4",
              "--store", path, "--quiet", "--no-report", "--no-sandbox")  # fmt: skip
    assert p.returncode == 0, p.stderr
    return path


def stored(path: Path, match_id: str | None = None):
    with Store(path, create=False) as s:
        variant = Variant.from_dict(s.config["variant"])
        ids = [r["id"] for r in s.matches(["id"])]
        found = s.match(match_id or ids[0])
        assert found
        return variant, found[0], found[1], ids


def engine_states(variant: Variant, row: dict, deals: list[dict]) -> list:
    """The engine's state at every frame of a match (deal starts and after each action),
    independently of the viewer's code."""
    match = Match(variant, row["seed"])
    out = []
    for d in deals:
        st = match.new_deal()
        out.append(st.clone())
        for a in d["actions"].split():
            st.apply_action(parse_action(a))
            out.append(st.clone())
        match.finish_deal()
    return out


def seen_by(states: list, seat: int) -> list[set[str]]:
    """The cards ``seat`` has seen by each frame (within the frame's deal): its own hands,
    every card played, the turn-up, the cards of shown marriages and exchanges."""
    out, seen, deal = [], set(), None
    for st in states:
        if st.deal_no != deal:
            seen, deal = set(), st.deal_no
        seen |= {card_str(c) for c in cards_of(st.hand[seat])}
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


# -- frames against the engine ---------------------------------------------------------------------


@pytest.mark.parametrize("which", ["store", "schnapsen"])
def test_frames_replay_every_stored_match_and_agree_with_the_store(which, request):
    path = request.getfixturevalue(which)
    _, _, _, ids = stored(path)
    forfeits = 0
    for match_id in ids:
        variant, row, deals, _ = stored(path, match_id)
        data = match_frames(variant, row, deals)
        views = data["views"]
        assert set(views) == {"all", "0", "1"} and len({len(v) for v in views.values()}) == 1
        coded = {v: deltas(f) for v, f in views.items()}  # as the page holds them: smaller, and exact
        assert expand_views({"views": coded})["views"] == views
        if len(views["all"]) > 3:
            assert sum(map(len, coded["all"])) < sum(map(len, views["all"])) * 0.7
        extra = 1 if row["fault"] is not None and row["fault_deal"] == len(deals) else 0
        assert len(views["all"]) == sum(len(d["actions"].split()) + 1 for d in deals) + extra
        assert data["deals"][: len(deals)] == [sum(len(x["actions"].split()) + 1 for x in deals[:k])
                                               for k in range(len(deals))]  # fmt: skip
        for k, d in enumerate(deals):
            end = views["all"][data["deals"][k] + len(d["actions"].split())]
            assert end["res"]["winner"] == d["winner"] and end["res"]["game_points"] == d["game_points"]
            assert end["res"]["points"] == [d["points0"], d["points1"]] and end["res"]["reason"] == d["reason"]
            assert len(data["tricks"][k]) == d["tricks0"] + d["tricks1"]
        if row["fault"] is None:
            assert views["all"][-1]["score"] == [row["score0"], row["score1"]]
        else:
            forfeits += 1
            assert "forfeits the match: crash" in views["all"][-1]["say"]
            assert views["all"][-1]["forfeit"] == row["forfeit_seat"]
    assert forfeits == (4 if which == "store" else 0)


def test_a_seat_view_holds_only_cards_that_seat_had_seen(store):
    """Every card in seat s's frame i is one s had seen by then; the spectators' frames show
    cards that the seat views do not (so the check is not empty)."""
    _, _, _, ids = stored(store)
    hidden_somewhere = 0
    for match_id in ids:
        variant, row, deals, _ = stored(store, match_id)
        data = match_frames(variant, row, deals)
        states = engine_states(variant, row, deals)
        for seat in (0, 1):
            seen = seen_by(states, seat)
            for i, st in enumerate(states):
                frame = data["views"][str(seat)][i]
                assert "stock" not in frame
                assert cards_in(frame) <= seen[i], (match_id, seat, i, cards_in(frame) - seen[i])
                assert frame["h"][seat] == [card_str(c) for c in cards_of(st.hand[seat])]
                assert len(frame["h"][1 - seat]) + frame["x"][1 - seat] == st.hand[1 - seat].bit_count()
                hidden_somewhere += len(cards_in(data["views"]["all"][i]) - seen[i])
    assert hidden_somewhere > 0


def test_a_seat_page_embeds_no_card_the_seat_could_not_see(store, tmp_path):
    variant, row, deals, _ = stored(store)
    out = tmp_path / "seat1.html"
    p = arena("view", store, row["id"], "-o", out, "--seat", "1")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"replay: {out}"
    data = page_data(out)
    assert list(data["views"]) == ["1"]
    states = engine_states(variant, row, deals)
    seen = seen_by(states, 1)
    last = {st.deal_no: seen[i] for i, st in enumerate(states)}  # all seat 1 saw of each deal
    text = out.read_text()
    blob = re.search(r'id="replay-data">(.*?)</script>', text, re.S).group(1)
    assert '"stock"' not in blob and '"all"' not in blob and '"0":' not in blob
    for frame in data["views"]["1"]:
        assert cards_in(frame) <= last[frame["d"]]
    # the whole page: every card string in it is one seat 1 saw in some deal
    in_page = set(re.findall(r'"([ATKQJ9][CDHS])"', text))
    assert in_page <= set().union(*last.values())
    # against the store's own deals: a card seat 1 never saw in deal 0 is not in deal 0's frames
    unseen0 = {card_str(c) for c in range(24)} - last[0]
    assert unseen0 and not unseen0 & set().union(*(cards_in(f) for f in data["views"]["1"] if f["d"] == 0))


def test_view_writes_next_to_the_store_by_default_and_errors_name_what_is_wrong(store, tmp_path):
    copy = tmp_path / "runs" / "rr.sqlite"
    copy.parent.mkdir()
    shutil.copyfile(store, copy)
    _, row, _, _ = stored(copy)
    p = arena("view", copy, row["id"])
    assert p.returncode == 0, p.stderr
    want = tmp_path / "runs" / "rr" / "replays" / f"{safe_name(row['id'])}.html"
    assert p.stdout.strip() == f"replay: {want}" and want.is_file()
    text = want.read_text()
    assert not re.search(r'(src|href)="(https?:)?//', text) and "http://" not in text and "https://" not in text
    p = arena("view", copy, "nobody~nothing#9.9")
    assert p.returncode == 2
    assert p.stderr.strip() == (f"arena: error: {copy}: no match 'nobody~nothing#9.9' (ids look like: "
                                f"{', '.join(stored(copy)[3][:3])})")  # fmt: skip
    p = arena("view", tmp_path / "nope.sqlite", "x")
    assert p.returncode == 2 and p.stderr.strip() == f"arena: error: {tmp_path / 'nope.sqlite'}: no such store"
    p = arena("view", copy, row["id"], "--seat", "2")
    assert p.returncode == 2 and p.stderr.strip() == "arena: error: --seat: the match has seats 0..1, got 2"


def test_safe_names_are_distinct_and_need_no_escaping():
    ids = ["random~greedy#0.1", "random_7egreedy_230.1", "L12.0", "a@1~b@2#3.0"]
    names = [safe_name(i) for i in ids]
    assert len(set(names)) == len(ids) and all(re.fullmatch(r"[A-Za-z0-9._-]+", n) for n in names)


# -- in the browser ----------------------------------------------------------------------------------

PROBE = """() => {
  const seat = (s) => ({
    hand: [...document.querySelectorAll(`.hand[data-seat="${s}"] .card`)].map(c => c.dataset.card),
    pts: Number(document.querySelector(`.stats[data-seat="${s}"] [data-field=pts]`).textContent),
    tk: Number(document.querySelector(`.stats[data-seat="${s}"] [data-field=tk]`).textContent),
    score: Number(document.querySelector(`.stats[data-seat="${s}"] [data-field=score]`).textContent),
  });
  return {
    step: Number(document.body.dataset.step), view: document.body.dataset.view,
    seats: [seat(0), seat(1)],
    trick: [...document.querySelectorAll('#trick .card')].map(c => c.dataset.card),
    won: document.querySelector('#trick').dataset.won,
    talon: Number(document.querySelector('#talon').dataset.size),
    say: document.querySelector('#say').textContent,
    hash: location.hash,
    all: [...document.querySelectorAll('[data-card]')].map(c => c.dataset.card).filter(c => c !== 'back'),
    text: document.body.innerText,
  };
}"""


def check_frame(seen: dict, st, score: list[int], *, seat_view: int | None = None) -> None:
    """The DOM against the engine's state at this step."""
    for s in (0, 1):
        hand = [card_str(c) for c in cards_of(st.hand[s])]
        if seat_view is None or seat_view == s:
            assert seen["seats"][s]["hand"] == hand, (seen["step"], s)
        else:
            assert len(seen["seats"][s]["hand"]) == len(hand)
        assert seen["seats"][s]["pts"] == st.count(s) and seen["seats"][s]["tk"] == st.tricks[s]
        assert seen["seats"][s]["score"] == score[s]
    if st.lead_card >= 0:
        assert seen["trick"] == [card_str(st.lead_card)]
    stock_left = len(st.stock) - st.stock_pos if st.closed_by < 0 else None
    if stock_left is not None:
        assert seen["talon"] == stock_left


def test_stepping_through_a_deal_in_chromium_shows_the_engine_state(store, tmp_path, page):
    variant, row, deals, _ = stored(store)
    out = tmp_path / "r.html"
    assert arena("view", store, row["id"], "-o", out).returncode == 0
    data = page_data(out)
    states = engine_states(variant, row, deals)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(out.as_uri())
    seen = page.evaluate(PROBE)
    assert seen["step"] == 0 and seen["view"] == "all" and seen["hash"] == "#step=0&view=all"
    assert seen["say"].startswith("Deal 1: ")
    check_frame(seen, states[0], [0, 0])
    n = len(deals[0]["actions"].split())
    for i in range(1, n + 1):  # deal 1, action by action: clicks on odd steps, the Right key on even
        if i % 2:
            page.click("#next")
        else:
            page.keyboard.press("ArrowRight")
        seen = page.evaluate(PROBE)
        assert seen["step"] == i
        st = states[i]
        check_frame(seen, st, data["views"]["all"][i]["score"])
        if len(st.trick_log) > len(states[i - 1].trick_log):  # a trick completed: both cards, its winner
            lead, lc, fc, w = st.trick_log[-1]
            assert seen["trick"] == [card_str(lc), card_str(fc)] and seen["won"] == str(w)
    d0 = deals[0]
    assert f"wins the deal: {d0['game_points']} game point" in seen["say"] or d0["winner"] is None
    assert seen["seats"][d0["winner"]]["score"] == d0["game_points"] + d0["carried"]
    page.keyboard.press("ArrowRight")
    assert page.evaluate(PROBE)["say"].startswith("Deal 2: ")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(PROBE)["step"] == n - 1
    # PageDown / PageUp: deals; End / Home; Down: the next completed trick
    page.keyboard.press("PageDown")
    assert page.evaluate(PROBE)["step"] == data["deals"][1]
    page.keyboard.press("ArrowDown")
    assert page.evaluate(PROBE)["step"] == data["tricks"][1][0]
    page.keyboard.press("End")
    assert page.evaluate(PROBE)["step"] == len(data["views"]["all"]) - 1
    page.keyboard.press("Home")
    assert page.evaluate(PROBE)["step"] == 0
    # play, then pause: it moves on by itself
    page.select_option("#speed", "300")
    page.keyboard.press(" ")
    page.wait_for_function("Number(document.body.dataset.step) >= 3", timeout=5000)
    page.click("#play")
    stopped = page.evaluate(PROBE)["step"]
    page.wait_for_timeout(700)
    assert page.evaluate(PROBE)["step"] == stopped
    assert errors == []


def test_jump_links_and_the_address_open_the_page_at_a_step(store, tmp_path, page):
    variant, row, deals, _ = stored(store)
    out = tmp_path / "r.html"
    assert arena("view", store, row["id"], "-o", out).returncode == 0
    data = page_data(out)
    states = engine_states(variant, row, deals)
    page.goto(out.as_uri() + "#deal=2&trick=3")
    seen = page.evaluate(PROBE)
    assert seen["step"] == data["tricks"][1][2] and seen["hash"] == f"#step={seen['step']}&view=all"
    check_frame(seen, states[seen["step"]], data["views"]["all"][seen["step"]]["score"])
    page.click('#jumps a[data-step]:nth-child(2)')  # trick 2 of the deal shown
    assert page.evaluate(PROBE)["step"] == data["tricks"][1][1]
    page.select_option("#deal", "0")
    assert page.evaluate(PROBE)["step"] == 0
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    assert page.eval_on_selector_all("#log li", "ls => ls.map(l => Number(l.dataset.step))") == list(range(7))
    page.click('#log li[data-step="4"]')  # the log holds the deal so far; a line is a link to its step
    assert page.evaluate(PROBE)["step"] == 4
    # a link to a step in seat 1's view
    page.goto(out.as_uri() + "#step=7&view=1")
    page.reload()
    seen = page.evaluate(PROBE)
    assert seen["step"] == 7 and seen["view"] == "1"
    check_frame(seen, states[7], data["views"]["1"][7]["score"], seat_view=1)
    # the seat's view in the DOM: only cards seat 1 had seen, the rest face down
    sees = seen_by(states, 1)
    for i in range(len(states)):
        page.keyboard.press("Home") if i == 0 else page.keyboard.press("ArrowRight")
        got = page.evaluate(PROBE)
        assert got["step"] == i and set(got["all"]) <= sees[i], (i, set(got["all"]) - sees[i])
        shown = {r + s for r, s in re.findall(r"(10|[AKQJ9])([♣♦♥♠])", got["text"])}
        assert {c.replace("10", "T").translate(str.maketrans("♣♦♥♠", "CDHS")) for c in shown} <= sees[i]
        if i == 12:
            break
    page.keyboard.press("v")  # the next view: back to the spectators
    assert page.evaluate(PROBE)["view"] == "all"


def test_a_seat_page_in_the_browser_has_that_view_only(store, tmp_path, page):
    variant, row, deals, _ = stored(store)
    out = tmp_path / "s0.html"
    assert arena("view", store, row["id"], "-o", out, "--seat", "0").returncode == 0
    page.goto(out.as_uri())
    seen = page.evaluate(PROBE)
    assert seen["view"] == "0"
    assert page.eval_on_selector_all("#view option", "os => os.map(o => o.value)") == ["0"]
    states = engine_states(variant, row, deals)
    check_frame(seen, states[0], [0, 0], seat_view=0)
    assert seen["seats"][1]["hand"] == ["back"] * 6


# -- the report's links ---------------------------------------------------------------------------------


def test_the_report_links_its_listed_matches_to_their_replays(store, tmp_path, page):
    out = tmp_path / "rep"
    p = arena("report", store, "-o", out, "--replays", "4")
    assert p.returncode == 0, p.stderr
    index = (out / "index.html").read_text()
    assert 'href="matches.html"' in index
    listing = (out / "matches.html").read_text()
    links = re.findall(r'<a href="(replays/[^"]+)">([^<]+)</a>', listing)
    with Store(store, create=False) as s:
        rows = {r["id"]: r for r in s.matches(["id", "idx", "fault"])}
    faulted = sorted((r for r in rows.values() if r["fault"]), key=lambda r: -r["idx"])[:2]
    others = sorted((r for r in rows.values() if r not in faulted), key=lambda r: -r["idx"])[:2]
    assert sorted(i for _, i in links) == sorted(r["id"] for r in faulted + others)  # forfeits first: half the cap
    assert {"random~greedy#0.0", "random~greedy#0.1"} - {i for _, i in links}  # so not every match
    assert sorted(x.name for x in (out / "replays").iterdir()) == sorted(h.split("/")[1] for h, _ in links)
    for href, mid in links:  # every link resolves, and the page replays that match
        assert href == f"replays/{safe_name(mid)}.html" and page_data(out / href)["match"]["id"] == mid
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((out / "index.html").as_uri())
    page.click("#matches-link")
    page.click(f'a[href="{links[0][0]}"]')
    assert page.evaluate("document.body.dataset.step") == "0" and errors == []
    assert arena("report", store, "-o", tmp_path / "none", "--replays", "0").returncode == 0
    assert not (tmp_path / "none" / "matches.html").exists() and "matches.html" not in (
        tmp_path / "none" / "index.html").read_text()
    # A report written again over the same folder keeps only the replays it links.
    assert arena("report", store, "-o", out, "--replays", "2").returncode == 0
    again = re.findall(r'<a href="replays/([^"]+)">', (out / "matches.html").read_text())
    assert len(again) == 2 and sorted(x.name for x in (out / "replays").iterdir()) == sorted(again)
    assert arena("report", store, "-o", out, "--replays", "0").returncode == 0
    assert not (out / "matches.html").exists() and list((out / "replays").iterdir()) == []


def test_the_report_lists_at_most_the_cap_forfeits_first():
    import pandas as pd

    from arena.report.replays import chosen

    frame = pd.DataFrame({"id": range(1000), "fault": [("crash" if i % 7 == 0 else None) for i in range(1000)]})
    picked = chosen(frame, 100)
    assert len(picked) == 100
    faults = [i for i in range(999, -1, -1) if i % 7 == 0][:50]  # the 50 latest forfeits, then the latest others
    assert list(picked["id"]) == sorted(faults + [i for i in range(999, -1, -1) if i not in faults][:50], reverse=True)
    assert chosen(frame, 0).empty
