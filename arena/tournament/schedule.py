"""Tournament configs and their schedules: which matches, with which seeds. Pure.

A config (TOML, every field also a flag of ``arena tournament``)::

    name = "demo"                        # optional; names the default store
    format = "round-robin"               # head-to-head | round-robin | gauntlet
    agents = ["random", "greedy", "agents/c-cautious"]   # names or folders
    challenger = "greedy"                # gauntlet: the agent that meets all others
    pairs = 10                           # duplicate pairs per pairing
    seed = 7                             # optional: a plain root seed, same seed, same deals;
                                         # without it, a secret drawn for the store (arena.tournament.secret)
    secret_file = "secret.txt"           # or: the secret from a file (shards; replaying a published one)
    concurrency = 4                      # matches in flight (default: the CPU count)
    store = "reports/demo.sqlite"        # default: reports/<name>.sqlite
    variant = "sixty-six"                # or a table: {base = "schnapsen", close_min_talon = 4};
                                         # or a three- or four-handed preset ("four-pagat")
    seating = "rotations"                # three-handed: each deck in every rotation, or "permutations"
    cluster = "local:4"                  # optional: play on Dask (docs/cluster.md); not part of the results
    [time_control]                       # optional: move_ms, bank_ms, first_move_ms, grace_ms, clock
    move_ms = 1000
    [sandbox]                            # optional: enabled, memory_mb, cpu_s, processes, file_mb,
    memory_mb = 1024                     # open_files (see arena.runtime.sandbox; not part of the results)

Each **pair** is two matches with the seats swapped. Both use the match seed
``derive_seed(seed, "pair", a, b, k)`` for pairing (a, b), its names in sorted order, and
pair index k, so deal j of both matches is dealt from the same deck whatever the seating,
and luck cancels within the pair. The names are sorted so that the order of the agents in
a config changes nothing: ``greedy,random`` and ``random,greedy`` play the same deals. A
match id (``a~b#k.g``, g = 0 or 1) is a pure function of the config, which is what lets
``--resume`` skip the matches already stored. Given no seed, the root seed is the
store's secret, bound by `arena.tournament.secret.bind_tournament` before the schedule is made.

A three- or four-handed variant plays tables instead of pairs (`arena.tournament.seating`):
``pairs`` is then the number of deck sets per table, each deck played in every seating of
the set (three rotations, or six permutations with ``seating``; six partnership seatings),
and the formats choose tables of that many agents from the pool.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import UserError, read_toml
from ..game import Variant, VariantError, derive_seed
from ..protocol.codec import TimeControl
from ..runtime.agents import Manifest, resolve, unplayed
from ..runtime.sandbox import Policy
from .seating import SEATINGS, table_schedule
from .secret import commitment, read_secret_file
from .spec import MatchSpec

__all__ = ["FIELDS", "FORMATS", "MatchSpec", "TournamentConfig", "identity_hash", "load_config", "shard"]

FORMATS = ("head-to-head", "round-robin", "gauntlet")
FIELDS = (
    "name", "format", "agents", "challenger", "pairs", "seed", "secret_file", "concurrency", "store", "variant",
    "time_control", "sandbox", "cluster", "seating",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    name: str
    format: str
    agents: tuple[Manifest, ...]
    challenger: str | None
    pairs: int
    #: The root seed: the user's, or a secret (``secret``); None until the store's secret is bound.
    seed: int | None
    concurrency: int
    store: Path
    variant: Variant
    time_control: TimeControl
    source: str = "flags"  # where it came from, for error messages
    sandbox: Policy = Policy()  # how agents are run, not what the results are: not in identity()
    secret: bool = False  # the root seed is a secret: never shown, only its hash is in identity()
    secret_file: Path | None = None  # where the secret came from, if not from the store
    cluster: str | None = None  # a Dask scheduler's address or local[:N] (arena.tournament.cluster); not in identity()
    seating: str = "rotations"  # three-handed tables: each deck in every rotation, or every permutation

    @property
    def players(self) -> int:
        """Seats at a match: 2, or 3 or 4 at a table."""
        return self.variant.players

    @property
    def root(self) -> int:
        """The root seed, once bound; a config given no seed has none before its store is open."""
        if self.seed is None:
            raise ValueError("the secret root seed is not bound yet (arena.tournament.secret.bind_tournament)")
        return self.seed

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.agents]

    def seat_manifests(self) -> dict[str, Manifest]:
        """Every seat name of the schedule -> its agent (a comparison at tables adds a name
        for each reference seat)."""
        return {m.name: m for m in self.agents}

    def distinct_agents(self) -> list[Manifest]:
        """The agents the schedule seats, each once."""
        return list(self.agents)

    def identity(self) -> dict[str, Any]:
        """What defines the tournament's results (not how it is run): hashed, stored. A
        secret seed is named ``"secret"`` with its hash (``secret_sha256``), never itself."""
        seed: dict[str, Any] = (
            {"seed": "secret", "secret_sha256": commitment(self.root)} if self.secret else {"seed": self.root}
        )
        out = {
            "format": self.format,
            "agents": self.names,
            "challenger": self.challenger,
            "pairs": self.pairs,
            **seed,
            "variant": self.variant.to_dict(),
            "time_control": self.time_control.to_dict(),
        }
        if self.players == 3:  # (a two-handed config's identity, and so its stores' hash, is as before)
            out["seating"] = self.seating
        return out

    @property
    def config_hash(self) -> str:
        return identity_hash(self.identity())

    def pairings(self) -> list[tuple[str, str]]:
        names = self.names
        if self.format == "head-to-head":
            return [(names[0], names[1])]
        if self.format == "gauntlet":
            return [(self.challenger, n) for n in names if n != self.challenger]
        return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]

    def schedule(self) -> list[MatchSpec]:
        """Every match, pair-major so that a partial run covers every pairing evenly; at a
        table, ``pairs`` deck sets of every table, set-major (`arena.tournament.seating`)."""
        if self.players > 2:
            return table_schedule(
                self.names, self.players, self.format, self.pairs, self.root,
                challenger=self.challenger, seating=self.seating,
            )  # fmt: skip
        out: list[MatchSpec] = []
        for k in range(self.pairs):
            for a, b in self.pairings():
                seed = derive_seed(self.root, "pair", *sorted((a, b)), k)
                for game, seats in ((0, (a, b)), (1, (b, a))):
                    out.append(MatchSpec(len(out), f"{a}~{b}#{k}.{game}", f"{a}~{b}", k, game, seats, seed))
        return out


def identity_hash(identity: dict[str, Any]) -> str:
    """The hash a store is bound to: SHA-256 of the identity's canonical JSON."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def shard(specs: list[MatchSpec], spec: str | None) -> list[MatchSpec]:
    """The matches of shard ``K/N`` (K from 1): those whose index is K-1 modulo N."""
    if spec is None:
        return specs
    try:
        k, n = (int(x) for x in spec.split("/"))
        if not 1 <= k <= n:
            raise ValueError
    except ValueError:
        raise UserError(f"--shard: expected K/N with 1 <= K <= N, got {spec!r}") from None
    return [m for m in specs if m.index % n == k - 1]


def load_config(
    path: Path | None, overrides: dict[str, Any], time_control_flags: dict[str, Any] | None = None,
    *, tables: bool = True,
) -> TournamentConfig:
    """Read a TOML config (optional) and apply flag overrides; validate everything.

    Errors are one line naming the file (or "flags") and the field, raised before any
    agent process is started. ``tables``: three- and four-handed variants allowed."""
    data: dict[str, Any] = {}
    source = "flags"
    if path is not None:
        source = str(path)
        data = read_toml(path, f"{path}: no such config file")
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise UserError(f"{path}: unknown field '{unknown[0]}' (known: {', '.join(FIELDS)})")
    flagged = {k for k, v in overrides.items() if v is not None}
    data.update({k: overrides[k] for k in flagged})
    tc_flags = {k: v for k, v in (time_control_flags or {}).items() if v is not None}
    if tc_flags:
        base = data.get("time_control", {})
        data["time_control"] = {**base, **tc_flags} if isinstance(base, dict) else base

    def _err(field: str, message: str) -> UserError:
        # Name the flag if the value came from one (or there is no file), else the file's field.
        if field in flagged or path is None or field in tc_flags:
            return UserError(f"--{field.replace('_', '-')}: {message}")
        return UserError(f"{source}: field '{field}' {message}")

    src = source

    fmt = data.get("format", "round-robin")
    if fmt not in FORMATS:
        raise _err("format", f"must be one of {', '.join(FORMATS)}, got {fmt!r}")
    agents = data.get("agents")
    if not isinstance(agents, list) or not all(isinstance(a, str) and a for a in agents):
        raise _err("agents", f"must be a list of agent names or folders, got {agents!r}")
    manifests = []
    for a in agents:
        try:
            manifests.append(resolve(a))
        except UserError as e:
            raise _err("agents", f"names an agent that cannot be used: {e}") from None
    names = [m.name for m in manifests]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise _err("agents", f"names agent {dup!r} twice")
    raw_variant = data.get("variant", "sixty-six")
    try:
        variant = Variant.from_dict({"base": raw_variant} if isinstance(raw_variant, str) else raw_variant)
    except VariantError as e:
        raise _err("variant", f"is not a valid variant: {e}") from None
    problem = unplayed(manifests, variant, tables=tables)
    if problem:
        raise _err("variant", problem)
    players = variant.players
    need = {"head-to-head": (players, players), "round-robin": (players, 64), "gauntlet": (players, 64)}[fmt]
    if not need[0] <= len(names) <= need[1]:
        want = f"exactly {players}" if fmt == "head-to-head" else f"{need[0]} to {need[1]}"
        at = f" of {variant.name} ({players} seats)" if players > 2 else ""
        raise _err("agents", f"must name {want} agents for a {fmt}{at}, got {len(names)}")
    seating = data.get("seating")
    if seating is not None:
        if players != 3:
            raise _err("seating", f"is only for the three-handed games, not {variant.name} ({players} seats)")
        if seating not in SEATINGS:
            raise _err("seating", f"must be one of {', '.join(SEATINGS)}, got {seating!r}")
    challenger = data.get("challenger")
    if challenger is not None and not isinstance(challenger, str):
        raise _err("challenger", f"must be an agent name, got {challenger!r}")
    if fmt == "gauntlet":
        if challenger is None:
            raise _err("challenger", "is needed for a gauntlet (the agent that meets all the others)")
        if challenger not in names:
            try:
                challenger = resolve(challenger).name
            except UserError:
                pass
            if challenger not in names:
                raise _err("challenger", f"must be one of the agents ({', '.join(names)}), got {challenger!r}")
    elif challenger is not None:
        raise _err("challenger", f"is only for a gauntlet, not a {fmt}")
    pairs = data.get("pairs", 10)
    if type(pairs) is not int or pairs < 1:
        raise _err("pairs", f"must be a positive integer, got {pairs!r}")
    seed = data.get("seed")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise _err("seed", f"must be a non-negative integer, got {seed!r}")
    secret_file = data.get("secret_file")
    if secret_file is not None:
        if not isinstance(secret_file, str) or not secret_file:
            raise _err("secret_file", f"must be a file path, got {secret_file!r}")
        if seed is not None:
            raise _err("secret_file", "cannot be used with a seed: the secret is the root seed (leave the seed out)")
        secret_file = Path(secret_file)
        try:
            seed = read_secret_file(secret_file)
        except UserError as e:
            raise _err("secret_file", str(e)) from None
    concurrency = data.get("concurrency", max(2, os.cpu_count() or 2))
    if type(concurrency) is not int or not 1 <= concurrency <= 100_000:
        raise _err("concurrency", f"must be an integer 1..100000, got {concurrency!r}")
    name = data.get("name", "tournament")
    if not isinstance(name, str) or not name or "/" in name:
        raise _err("name", f"must be a non-empty string without '/', got {name!r}")
    store = data.get("store", f"reports/{name}.sqlite")
    if not isinstance(store, str) or not store:
        raise _err("store", f"must be a file path, got {store!r}")
    tc = data.get("time_control", {})
    if not isinstance(tc, dict):
        raise _err("time_control", f"must be a table, got {tc!r}")
    known = [f.name for f in dataclasses.fields(TimeControl)]
    for key, value in tc.items():  # one at a time, to name the field or flag at fault
        if key not in known:
            raise _err("time_control", f"has unknown key {key!r} (known: {', '.join(known)})")
        try:
            TimeControl(**{key: value})
        except ValueError as e:
            raise _err(key if key in tc_flags else "time_control", str(e)) from None
    time_control = TimeControl(**tc)
    sandbox = data.get("sandbox", {})
    if not isinstance(sandbox, dict):
        raise _err("sandbox", f"must be a table, got {sandbox!r}")
    policy = Policy.from_dict(sandbox, f"{source}: [sandbox]")
    cluster = data.get("cluster")
    if cluster is not None and (not isinstance(cluster, str) or not cluster.strip()):
        raise _err("cluster", f"must be a Dask scheduler's address or local[:N], got {cluster!r}")
    return TournamentConfig(
        name=name,
        format=fmt,
        agents=tuple(manifests),
        challenger=challenger,
        pairs=pairs,
        seed=seed,
        concurrency=concurrency,
        store=Path(store),
        variant=variant,
        time_control=time_control,
        source=src,
        sandbox=policy,
        secret=seed is None or secret_file is not None,
        secret_file=secret_file,
        cluster=cluster,
        seating=seating or "rotations",
    )
