"""Secret root seeds: runs given no seed play deals that no agent can rebuild.

Real runs of ``python -m arena`` with the bundled deterministic agents (greedy, random),
stores read back with sqlite3 directly, and the pure engine as an attacker would use it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from test_tournament import ROOT, arena, count_or_zero, ok, one_line_error, results, rows, u64

from arena.game import derive_seed, new_deal
from arena.tournament.secret import commitment, ladder_root

AGENTS = ["greedy", "random"]
FAST = ["--no-sandbox", "--quiet", "--no-report"]


def run(store: Path, *extra: str | Path, pairs: int = 2, agents=AGENTS) -> subprocess.CompletedProcess:
    """``arena tournament`` without a seed unless ``extra`` gives one."""
    return arena("tournament", "--agents", ",".join(agents), "--pairs", str(pairs), "--store", store, *extra)


def meta(store: Path) -> dict[str, str]:
    return {r["key"]: r["value"] for r in rows(store, "SELECT key, value FROM meta")}


def secret_of(store: Path) -> int:
    return int(meta(store)["secret"])


def match_seeds(store: Path) -> dict[str, int]:
    return {r["id"]: u64(r["seed"]) for r in rows(store, "SELECT id, seed FROM matches")}


def forms(secret: int) -> list[str]:
    """The ways a secret could be written down: decimal, hex (both cases, with and without 0x)."""
    h = f"{secret:x}"
    return [str(secret), h, h.upper(), f"{secret:032x}", f"0x{h}"]


# -- a fresh secret per store ---------------------------------------------------------------------------------------
def test_runs_without_a_seed_get_different_128_bit_secrets_and_deals(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ok(run(a, *FAST))
    ok(run(b, *FAST))
    sa, sb = secret_of(a), secret_of(b)
    assert sa != sb
    for s in (sa, sb):
        assert 64 < s.bit_length() <= 128  # randbits(128): fewer than 65 bits once in 2**64
    assert (a.stat().st_mode & 0o777) == 0o600  # the store, which holds it, is private
    config = meta(a)["config"]
    assert '"seed": "secret"' in config and commitment(sa) in config and str(sa) not in config
    assert meta(a)["config_hash"] != meta(b)["config_hash"]
    assert set(match_seeds(a)) == set(match_seeds(b))  # the same match ids...
    assert not set(match_seeds(a).values()) & set(match_seeds(b).values())  # ...other deals
    deals = lambda s: [r["actions"] for r in rows(s, "SELECT actions FROM deals ORDER BY match_id, deal")]  # noqa: E731
    assert deals(a) != deals(b)
    assert ok(arena("secret", a)).stdout == f"{sa}\n"


def test_the_secret_is_in_no_file_the_run_writes_but_the_store(tmp_path):
    out = tmp_path / "run"
    store, events, logs = out / "t.sqlite", out / "events.jsonl", out / "logs"
    p = ok(run(store, "--events", events, "--logs", logs, "--quiet"))  # sandboxed, with the HTML report
    secret = secret_of(store)
    report = out / "t" / "index.html"
    assert report.is_file() and events.is_file()
    assert "secret seed (kept in the store)" in report.read_text()
    assert "warning: seed" not in p.stderr  # no explicit seed, no warning
    written = [f for f in out.rglob("*") if f.is_file() and not f.name.startswith("t.sqlite")]
    assert any(f.suffix == ".csv" for f in written) and any(f.suffix == ".log" for f in written)
    for f in written:
        text = f.read_bytes().decode("latin-1")
        for form in forms(secret):
            assert form not in text, f"{f} holds the secret as {form}"
    for form in forms(secret):
        assert form not in p.stdout + p.stderr
        assert all(form not in r["argv"] for r in rows(store, "SELECT argv FROM runs"))


def test_resume_of_a_killed_run_keeps_the_secret_and_its_seeds(tmp_path):
    a, b, secret_file = tmp_path / "a.sqlite", tmp_path / "b.sqlite", tmp_path / "secret.txt"
    args = ["tournament", "--agents", ",".join(AGENTS), "--pairs", "60", "--concurrency", "2", *FAST]
    proc = subprocess.Popen([sys.executable, "-m", "arena", *args, "--store", str(a)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while count_or_zero(a) < 10:
            assert proc.poll() is None, f"the run ended before it could be killed: {proc.communicate()}"
            assert time.monotonic() < deadline, "the run stored too few matches in 60 s"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    secret, before = secret_of(a), match_seeds(a)
    assert 10 <= len(before) < 120

    ok(arena(*args, "--store", a, "--resume"))
    assert secret_of(a) == secret
    after = match_seeds(a)
    assert len(after) == 120 and {k: after[k] for k in before} == before
    # The same secret from a file gives the same matches from the start.
    ok(arena("secret", a, "--out", secret_file))
    assert (secret_file.stat().st_mode & 0o777) == 0o600
    ok(arena(*args, "--store", b, "--secret-file", secret_file))
    assert results(a) == results(b)


# -- sharing a secret: shards, merge, publishing ---------------------------------------------------------------------
def test_shards_sharing_a_secret_file_merge_and_other_secrets_are_refused(tmp_path):
    first, s1, s2, merged, other = (tmp_path / f"{n}.sqlite" for n in ("first", "s1", "s2", "merged", "other"))
    secret_file = tmp_path / "secret.txt"
    ok(run(first, *FAST, pairs=3))
    secret_file.write_text(ok(arena("secret", first)).stdout)
    ok(run(s1, "--shard", "1/2", "--secret-file", secret_file, *FAST, pairs=3))
    ok(run(s2, "--shard", "2/2", "--secret-file", secret_file, *FAST, pairs=3))
    assert secret_of(s1) == secret_of(s2) == secret_of(first)
    assert ok(arena("merge", merged, s1, s2)).stdout.endswith(f"{merged}: 6 matches\n")
    assert results(merged) == results(first)
    assert secret_of(merged) == secret_of(first)  # kept: the merged store can be resumed and published

    ok(run(other, *FAST, pairs=3))  # the same config, another secret: other deals
    before = results(merged)
    one_line_error(arena("merge", merged, other), "another secret", str(other))
    assert results(merged) == before
    # A secret file that does not match the store it would resume is refused too.
    one_line_error(run(other, "--secret-file", secret_file, "--resume", *FAST, pairs=3), "another secret")


def test_a_published_secret_replays_the_same_deals_and_results(tmp_path):
    original, replay, secret_file = tmp_path / "o.sqlite", tmp_path / "r.sqlite", tmp_path / "published.txt"
    ok(run(original, *FAST, pairs=3))
    printed = ok(arena("secret", original)).stdout
    assert printed.strip() == str(secret_of(original))
    secret_file.write_text(printed)
    ok(run(replay, "--secret-file", secret_file, *FAST, pairs=3))
    assert results(replay) == results(original)
    assert meta(replay)["config_hash"] == meta(original)["config_hash"]  # the hash commits to the secret
    some = rows(original, "SELECT id FROM matches ORDER BY idx")[1]["id"]
    assert "IDENTICAL" in ok(arena("replay", original, some, "--no-sandbox")).stdout

    # A store of an explicit seed has no secret: its seed is in its config.
    plain = tmp_path / "plain.sqlite"
    ok(run(plain, "--seed", "7", *FAST, pairs=1))
    one_line_error(arena("secret", plain), str(plain), "explicit seed 7")
    one_line_error(arena("secret", tmp_path / "nowhere.sqlite"), "no such store")
    # A secret file holding a plain small number is not a secret.
    small = tmp_path / "small.txt"
    small.write_text("7\n")
    one_line_error(run(tmp_path / "never.sqlite", "--secret-file", small, *FAST), "--secret-file", "--seed")
    one_line_error(run(tmp_path / "never.sqlite", "--secret-file", secret_file, "--seed", "7", *FAST),
                   "--secret-file", "seed")  # fmt: skip
    assert not (tmp_path / "never.sqlite").exists()


def test_compare_keeps_a_secret_and_takes_a_secret_file(tmp_path):
    a, b, secret_file = tmp_path / "a.sqlite", tmp_path / "b.sqlite", tmp_path / "s.txt"
    cmp = ["compare", "greedy", "random", "--fixed", "2", *FAST]
    ok(arena(*cmp, "--store", a))
    assert secret_of(a).bit_length() > 64
    ok(arena("secret", a, "-o", secret_file))
    ok(arena(*cmp, "--store", b, "--secret-file", secret_file))
    assert results(a) == results(b)


# -- the explicit seed: kept, and warned about when agents are sandboxed ---------------------------------------------
def test_an_explicit_seed_gives_the_same_deals_and_a_warning_when_sandboxed(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    p = ok(run(a, "--seed", "7", "--quiet", "--no-report", pairs=1))
    warning = [line for line in p.stderr.splitlines() if "warning: seed 7" in line]
    assert len(warning) == 1 and "leave --seed out" in warning[0]
    q = ok(run(b, "--seed", "7", *FAST, pairs=1))
    assert "warning: seed" not in q.stderr  # not sandboxed: trusted agents
    assert results(a) == results(b)
    assert match_seeds(a)["greedy~random#0.0"] == derive_seed(7, "pair", "greedy", "random", 0)
    assert "secret" not in meta(a)


# -- brute force: the principle -----------------------------------------------------------------------------------
def seen(deal_seed: int, dealer: int, seat: int) -> tuple[int, int]:
    """What a seat sees when a deal starts: its hand and the turn-up."""
    st = new_deal("sixty-six", deal_seed, dealer)
    return st.hand[seat], st.turn_up


def observed(store: Path) -> tuple[list[tuple[int, int]], list[int], tuple[str, str], int]:
    """What seat 0 saw of the first two deals of a store's first match, their dealers, the
    pairing and the pair index: what a hostile agent knows."""
    m = rows(store, "SELECT id, pairing, pair_index FROM matches ORDER BY idx")[0]
    ds = rows(store, "SELECT seed, dealer FROM deals WHERE match_id = ? ORDER BY deal", (m["id"],))[:2]
    assert len(ds) == 2  # a match to 7 game points has at least three deals
    views = [seen(u64(d["seed"]), d["dealer"], 0) for d in ds]
    return views, [d["dealer"] for d in ds], tuple(m["pairing"].split("~")), m["pair_index"]


def roots_that_deal(store: Path, limit: int) -> list[int]:
    """A hostile agent's search: root seeds 0..limit whose deals give it the hands (and turn-ups)
    it saw in two deals. (One 6-card hand alone is one of only 134,596.)"""
    views, dealers, (a, b), k = observed(store)
    found = []
    for r in range(limit + 1):
        match_seed = derive_seed(r, "pair", a, b, k)
        if seen(derive_seed(match_seed, "deal", 0), dealers[0], 0) != views[0]:
            continue
        if seen(derive_seed(match_seed, "deal", 1), dealers[1], 0) == views[1]:
            found.append(r)
    return found


def test_no_small_root_seed_rebuilds_a_secret_deal_but_an_explicit_one_is_found(tmp_path):
    secret_store, plain_store = tmp_path / "s.sqlite", tmp_path / "p.sqlite"
    ok(run(secret_store, *FAST, pairs=1))
    ok(run(plain_store, "--seed", "7", *FAST, pairs=1))
    assert roots_that_deal(plain_store, 10) == [7]  # the attack works on a guessable seed...
    assert roots_that_deal(secret_store, 100_000) == []  # ...and finds nothing under a secret


# -- ladders: always a secret; a seed is mixed with it ---------------------------------------------------------------
def plan_first_round(folder: Path) -> list[dict]:
    """Enter the bundled greedy, random and heuristic (as `arena submit` would, without its
    build and check) and plan the first round: the pairs and their seeds."""
    from arena.ladder import rounds as ladder
    from arena.runtime.agents import resolve

    cfg = ladder.load(folder)
    with ladder.open_store(cfg) as store:
        for name in ("greedy", "random", "heuristic"):
            m = resolve(name)
            store.add_entry({**m.row(), "key": f"{name}@{m.version}"})
        return ladder.plan_round(cfg, store)[1]


def test_a_ladder_always_has_a_secret_and_mixes_a_seed_with_it(tmp_path):
    plain, seeded, again = tmp_path / "plain", tmp_path / "seeded", tmp_path / "again"
    ok(arena("ladder", "init", plain))
    ok(arena("ladder", "init", seeded, "--seed", "7"))
    ok(arena("ladder", "init", again, "--seed", "7"))
    assert "\nseed =" not in (plain / "ladder.toml").read_text()
    secrets = {f: int(ok(arena("secret", f)).stdout) for f in (plain, seeded, again)}
    assert len(set(secrets.values())) == 3 and all(s.bit_length() > 64 for s in secrets.values())
    assert "--seed" in (help_ := ok(arena("ladder", "init", "--help")).stdout) and "never used alone" in help_

    pairs = {f: plan_first_round(f) for f in (plain, seeded, again)}
    # The k-th pair planned is seeded derive_seed(root, "ladder-pair", k) (arena.ladder.rounds.plan_round).
    for k, p in enumerate(pairs[plain]):
        assert p["seed"] == derive_seed(secrets[plain], "ladder-pair", k)
    for f in (seeded, again):
        root = ladder_root(7, secrets[f])
        for k, p in enumerate(pairs[f]):
            assert p["seed"] == derive_seed(root, "ladder-pair", k)  # the seed mixed with the secret
            assert p["seed"] != derive_seed(7, "ladder-pair", k)  # never the plain seed alone
            a, b = (key.split("@")[0] for key in (p["a"], p["b"]))
            assert p["seed"] not in {derive_seed(7, "pair", x, y, j) for x, y in ((a, b), (b, a)) for j in range(9)}
    # Two ladders of the same seed deal differently: the secret decides.
    assert not {p["seed"] for p in pairs[seeded]} & {p["seed"] for p in pairs[again]}
