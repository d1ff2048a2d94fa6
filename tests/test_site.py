"""``arena ladder site`` and ``arena ladder run --site``: a real ladder's static site, crawled in
headless Chromium (Playwright, the system Chromium): every page loads, every link resolves,
every image loads, and the pages say what the store holds."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import pytest
from running import arena

from arena.ladder.store import LadderStore
from arena.report.replay_page import safe_name

FAST = ["--move-ms", "200", "--first-move-ms", "3000", "--bank-ms", "2000"]


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, Path]:
    """A ladder of random, greedy and an agent that crashes mid-match (entered without the
    conformance check), two rounds of three pairs (every pairing, in all likelihood) played with ``--site``."""
    folder = tmp_path_factory.mktemp("site") / "lad"
    p = arena("ladder", "init", folder, "--concurrency", "2", "--round-pairs", "3", *FAST)
    assert p.returncode == 0, p.stderr
    toml = folder / "ladder.toml"
    toml.write_text(toml.read_text().replace("check = true", "check = false"))
    for a in ("random", "greedy", "tests/agents/broken/crash-mid-match.toml"):
        p = arena("submit", a, "--ladder", folder)
        assert p.returncode == 0, p.stderr
    site = folder.parent / "live"
    p = arena("ladder", "run", "--ladder", folder, "--rounds", "2", "--site", site)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(f"site: {site / 'index.html'}") == 2  # refreshed after each round
    return folder, site


def crawl(page, start: Path) -> dict[str, dict]:
    """Every page reachable from ``start`` by links: what each showed (links, images,
    tables); asserts each loads without a script error, each link resolves to a file and
    each image loads."""
    root = start.parent
    seen: dict[str, dict] = {}
    todo = [start.as_uri()]
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        response = page.goto(url)
        assert response is None or response.ok, url
        info = page.evaluate("""() => ({
          links: [...document.querySelectorAll('a[href]')].map(a => a.href),
          images: [...document.images].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0})),
          title: document.title,
          tables: Object.fromEntries([...document.querySelectorAll('table')].map(t => [t.className,
            [...t.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()))])),
        })""")
        seen[url] = info
        for img in info["images"]:
            assert img["ok"], (url, img["src"])
        for link in info["links"]:
            target, _ = urldefrag(link)
            assert urlparse(target).scheme == "file", (url, link)  # nothing off the site
            path = Path(urlparse(target).path)
            assert path.is_file(), (url, link)
            assert root in path.parents or path == start, (url, link)
            if path.suffix == ".html" and path.parent.name != "replays":
                todo.append(target)
    assert errors == []
    return seen


def test_run_refreshes_the_site_and_every_page_link_and_image_works(played, page):
    folder, site = played
    pages = crawl(page, site / "index.html")
    with LadderStore(folder / "ladder.sqlite") as store:
        entries = store.entries()
        rounds = sorted({p["round"] for p in store.pairs()})
        matches = store.matches(["id", "seat0", "seat1", "fault", "fault_detail", "forfeit_seat"])
    names = {p.rsplit("/", 1)[-1] for p in pages}
    assert {f"{safe_name(e['key'])}.html" for e in entries} <= names
    assert {f"{r}.html" for r in rounds} <= names and "rounds.html" in names and rounds == [0, 1]
    index = pages[(site / "index.html").as_uri()]
    standings = index["tables"]["standings"]
    assert sorted(r[1] for r in standings) == sorted(e["key"] for e in entries)
    assert [r[0] for r in standings] == ["1", "2", "3"] and standings[-1][1] == "crash-mid-match@0"
    assert all(re.fullmatch(r"\[[+-]\d+, [+-]\d+\]", r[3]) and r[7].startswith("active") for r in standings)
    assert len(index["images"]) == 1 and index["images"][0]["src"].endswith("history.svg")
    # an agent's page: its versions, opponents, latest matches (with replays) and faults with details
    crash = pages[(site / "agents" / f"{safe_name('crash-mid-match@0')}.html").as_uri()]
    mine = [m for m in matches if "crash-mid-match@0" in (m["seat0"], m["seat1"])]
    assert crash["tables"]["versions"][0][0].startswith("crash-mid-match@0")
    opp = {r[0]: r for r in crash["tables"]["opponents"]}
    assert sum(int(r[1]) for r in opp.values()) == len(mine) and all(r[2] == "0" for r in opp.values())
    faults = crash["tables"]["faults"]
    forfeits = [m for m in mine if m["fault"]]
    assert len(faults) == len(forfeits) > 0
    assert {(r[0], r[1], r[2]) for r in faults} == {(m["id"], m["fault"], m["fault_detail"]) for m in forfeits}
    recent = crash["tables"]["recent"]
    assert len(recent) == min(10, len(mine))
    replay_links = [x for x in crash["links"] if "/replays/" in x]
    assert replay_links and all(Path(urlparse(x).path).is_file() for x in replay_links)
    # a round's page: its pairs and both matches of each
    with LadderStore(folder / "ladder.sqlite") as store:
        pairs = store.pairs(1)
    r1 = pages[(site / "rounds" / "1.html").as_uri()]
    assert [row[0] for row in r1["tables"]["pairs"]] == [str(p["id"]) for p in pairs]
    for row, p in zip(r1["tables"]["pairs"], pairs, strict=True):
        assert f"L{p['id']}.0" in row[3] and f"L{p['id']}.1" in row[3]
    assert r1["tables"]["after"]  # the ratings after the round
    # a replay linked from the site opens and steps
    page.goto(replay_links[0])
    frames = page.evaluate("JSON.parse(document.getElementById('replay-data').textContent).views.all.length")
    page.keyboard.press("End")
    assert page.evaluate("document.body.dataset.step") == str(frames - 1)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.body.dataset.step") == str(min(1, frames - 1))


def test_ladder_site_writes_the_same_site_on_demand(played, tmp_path, browser_name):
    # (browser_name: every test of this file under pytest-playwright's one parameter, so the
    # module's ladder is made once, not again when the parameter ends)
    folder, site = played
    out = tmp_path / "site"
    p = arena("ladder", "site", "--ladder", folder, "-o", out)
    assert p.returncode == 0, p.stderr
    assert f"site: {out / 'index.html'}" in p.stdout and "python -m http.server" in p.stdout
    ours = sorted(x.relative_to(out) for x in out.rglob("*") if x.is_file())
    theirs = sorted(x.relative_to(site) for x in site.rglob("*") if x.is_file())
    assert ours == theirs
    # written again over itself, a replay page is kept, not rewritten (a stored match never changes)
    replay = next((out / "replays").iterdir())
    before = replay.stat().st_mtime_ns
    assert arena("ladder", "site", "--ladder", folder, "-o", out).returncode == 0
    assert replay.stat().st_mtime_ns == before
    p = arena("ladder", "site", "--ladder", tmp_path / "nowhere")
    assert p.returncode == 2 and "no ladder here" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_a_run_stopped_mid_round_writes_the_site_once_at_its_end(played, tmp_path, browser_name):
    """(Runs last: it plays one more match in the ladder.) No round finishes, so the site is
    written once, when the run ends, and shows the open round."""
    folder, _ = played
    out = tmp_path / "site"
    p = arena("ladder", "run", "--ladder", folder, "--matches", "1", "--site", out)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(f"site: {out / 'index.html'}") == 1
    with LadderStore(folder / "ladder.sqlite") as store:
        n, last = store.count(), store.last_round()
    index = (out / "index.html").read_text()
    assert f"{n:,} matches, 2 rounds finished, 1 open (planned, not all played)" in index
    assert "not played yet" in (out / "rounds" / f"{last}.html").read_text()
