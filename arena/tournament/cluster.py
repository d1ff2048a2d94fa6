"""A tournament on a Dask cluster: the client's side of ``arena tournament --cluster``
(and of ``arena compare`` and ``arena ladder run``, which play their matches the same way).

The client splits the matches still to play into **chunks of whole duplicate pairs** and
submits each as one Dask task (`arena.tournament.cluster_worker.run_chunk`), which plays it
on a worker with the same Trio runner and agent pools as a local run and returns the
records. The client writes them to its store as each chunk arrives, in this process
only: the store keeps one writer, resume skips what is stored, and the store refuses a
match stored twice. A match's result depends only on its spec (seeds are pure functions of
the config, a pool's processes serve each match afresh), so where and in what order the
chunks run changes nothing in the tables but the timing columns.

**Chunk size** (`chunk_pairs`). A chunk costs a fixed amount besides its matches: the
task's scheduling round trip (about 10 ms on one machine; ``bench/cluster.py`` measures it)
and the worker's checks of the agents it already has. Starting the agents' processes is
paid once per worker and run, not per chunk: a worker keeps a run's sandbox and agent pools
between its chunks (`arena.tournament.cluster_worker`). A chunk is therefore at least
``2 * concurrency`` pairs (``4 * concurrency`` matches: four rounds of the matches a worker
thread has in flight, so that the round trip is a small share of a chunk even for the
fastest agents), and otherwise the pairs to play over ``4 *`` the worker threads (four
chunks per thread: the last chunks end near together, and a lost worker costs at most a
quarter of its share), at most `MAX_CHUNK_PAIRS` (a fault never repeats much work).
Every chunk is submitted at once; Dask's scheduler hands them to workers as threads free up.

**Faults and retries.** A worker that dies (SIGKILL, a lost machine) takes its running
chunks with it, unreturned; Dask's scheduler runs them again on another worker, up to
``distributed.scheduler.allowed-failures`` times (default 3) per chunk, after which the
run ends with one line. Nothing of a lost chunk was written, and a chunk's records are
written once, when its result arrives, so a retry neither loses nor doubles a match. An
error raised by a task (a worker missing ``node``, a bad build) is not retried: it would
fail the same way; it ends the run with its one line. A lost scheduler ends the run with
one line (`ClusterLost`); ``--resume`` goes on from the store on any cluster. When the run
ends early (an SPRT decided, an error, Ctrl-C), the client cancels the chunks not started
and sets a Dask ``Event`` that the chunks still playing ask about every second: they stop
their matches, and nothing of theirs is written. Every wait
on the cluster has a deadline (`POLL_S`, `CONNECT_S`, `CLOSE_S`).

Dask is imported only when a cluster is used (`require_dask`), so the arena runs without it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from .cluster_worker import AgentArchive, ChunkResult, RunSettings, pack, run_chunk
from .runner import Finished
from .schedule import MatchSpec, TournamentConfig

if TYPE_CHECKING:
    from distributed import Client

#: How to get Dask, said when ``--cluster`` is used without it.
INSTALL = "pip install 'sixtysix-arena[cluster]'"
#: Chunks aimed at per worker thread (see the module's docstring).
CHUNKS_PER_THREAD = 4
#: The most duplicate pairs in one chunk.
MAX_CHUNK_PAIRS = 256
#: The most pairs in a chunk of ``arena compare``: its SPRT reads pairs in order and
#: stops the run when it decides, so smaller chunks waste less past the decision.
COMPARE_CHUNK_PAIRS = 32
#: Deadline to reach the scheduler and for a first worker to join.
CONNECT_S = 60.0
#: How long one wait for finished chunks lasts before the client looks at the cluster again.
POLL_S = 0.5
#: Deadline to close the client and a LocalCluster (then its worker processes are killed).
CLOSE_S = 20.0
#: How often the client asks the scheduler which workers are there (joins and losses).
WORKERS_S = 2.0

_LOCAL = re.compile(r"^local(?::(\d+))?$")


class ClusterLost(UserError):
    """The scheduler went away: the run stops; what was stored stays."""


@dataclasses.dataclass(frozen=True)
class Target:
    """Where to run: a scheduler's address, or a LocalCluster of ``workers`` processes."""

    address: str | None
    workers: int = 0

    def __str__(self) -> str:
        return self.address if self.address is not None else f"local:{self.workers}"


def parse_target(spec: str, where: str = "--cluster") -> Target:
    """``local``, ``local:N`` (N worker processes; default: the CPU count) or a scheduler's
    address (``tcp://host:8786``, ``tls://...``, ``host:8786``)."""
    import os

    if not isinstance(spec, str) or not spec.strip():
        raise UserError(f"{where}: expected ADDRESS or local[:N], got {spec!r}")
    m = _LOCAL.match(spec.strip())
    if m:
        n = int(m.group(1)) if m.group(1) else (os.cpu_count() or 1)
        if not 1 <= n <= 1024:
            raise UserError(f"{where}: local:N needs 1 <= N <= 1024, got {spec!r}")
        return Target(None, n)
    if spec.startswith("local"):
        raise UserError(f"{where}: expected local or local:N (N worker processes), got {spec!r}")
    return Target(spec.strip())


def require_dask() -> None:
    """`UserError` saying how to install Dask when it is not here."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise UserError(f"--cluster needs Dask, which is not installed: {INSTALL}") from None


def pairs_of(specs: list[MatchSpec]) -> list[list[MatchSpec]]:
    """``specs`` grouped by duplicate pair (pairing, pair index), in schedule order; a pair
    one of whose matches is stored already is a group of one."""
    groups: dict[tuple[str, int], list[MatchSpec]] = {}
    for s in specs:
        groups.setdefault((s.pairing, s.pair_index), []).append(s)
    return list(groups.values())


def chunk_pairs(pairs: int, threads: int, concurrency: int, most: int = MAX_CHUNK_PAIRS) -> int:
    """Duplicate pairs per chunk, for ``pairs`` to play on ``threads`` worker threads
    that each play ``concurrency`` matches at once, at most ``most`` (the rule: the
    module's docstring; a comparison asks for smaller chunks, `COMPARE_CHUNK_PAIRS`)."""
    spread = math.ceil(pairs / (CHUNKS_PER_THREAD * max(threads, 1)))
    return max(1, min(max(2 * concurrency, spread), most, pairs))


def make_chunks(specs: list[MatchSpec], size: int) -> list[list[MatchSpec]]:
    """``specs`` in chunks of ``size`` whole duplicate pairs, in schedule order."""
    pairs = pairs_of(specs)
    return [[s for p in pairs[i : i + size] for s in p] for i in range(0, len(pairs), size)]


@dataclasses.dataclass
class WorkerStats:
    """One worker's share so far: what the progress display and the events say."""

    matches: int = 0
    chunks: int = 0
    seconds: float = 0.0  # busy time: the sum of its chunks' lengths

    @property
    def rate(self) -> float:
        return self.matches / self.seconds if self.seconds > 0 else 0.0


@dataclasses.dataclass
class ClusterReport:
    """What happened on the cluster in one run."""

    chunks: int = 0
    chunk_pairs: int = 0
    workers: dict[str, WorkerStats] = dataclasses.field(default_factory=dict)
    lost_workers: list[str] = dataclasses.field(default_factory=list)

    def lines(self) -> list[str]:
        """One line per worker: matches, chunks, matches/s while busy."""
        return [
            f"worker {w}: {s.matches} matches in {s.chunks} chunks, {s.rate:.1f} matches/s"
            for w, s in sorted(self.workers.items())
        ]


@contextlib.contextmanager
def connect(target: Target) -> Iterator[Client]:
    """A Dask client of ``target`` (a LocalCluster started here, of single-threaded worker
    processes), closed with deadlines on the way out, whatever happens; its workers too
    when the cluster is local."""
    require_dask()
    from distributed import Client, LocalCluster

    quiet_dask_logs()
    with contextlib.ExitStack() as stack:
        if target.address is None:
            cluster = LocalCluster(
                n_workers=target.workers, threads_per_worker=1, processes=True,
                dashboard_address=":0", scheduler_kwargs={"dashboard": False},  # no dashboard, no clash on its port
                memory_limit=0,  # agents are their own processes, limited by the sandbox
                silence_logs=logging.CRITICAL,
            )  # fmt: skip
            stack.callback(cluster.close, timeout=CLOSE_S)
            address: Any = cluster
        else:
            address = target.address
        try:
            client = Client(address, timeout=CONNECT_S)
        except (OSError, TimeoutError) as e:
            raise UserError(f"--cluster {target}: cannot reach the Dask scheduler ({e})") from None
        except ValueError as e:  # Dask's words for a malformed address (an unknown scheme, a bad port)
            raise UserError(f"--cluster {target}: not a Dask scheduler's address ({e})") from None
        stack.callback(_close_client, client)
        yield client


def quiet_dask_logs() -> None:
    """Silence Dask's own log lines here (its config gives some loggers their own level):
    the arena says each fault in one line of its own."""
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in ("distributed", "tornado", "dask")]
    for name in ["distributed", "tornado", "dask", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def event_hooks(emit: Callable[..., None]) -> dict[str, Callable[..., None]]:
    """``on_chunk`` and ``on_worker`` for `play_on_cluster` that put the cluster's events
    (``chunk_finished``, ``worker_joined``, ``worker_lost``) in an event stream's ``emit``."""

    def on_chunk(result: ChunkResult, stats: WorkerStats) -> None:
        emit("chunk_finished", worker=result.worker, matches=len(result.finished), seconds=round(result.seconds, 3),
             worker_matches=stats.matches, worker_rate=round(stats.rate, 3))  # fmt: skip

    def on_worker(what: str, worker: str) -> None:
        emit(f"worker_{what}", worker=worker)

    return {"on_chunk": on_chunk, "on_worker": on_worker}


def _close_client(client: Client) -> None:
    with contextlib.suppress(Exception):  # a lost scheduler: nothing left to close cleanly
        client.close(timeout=CLOSE_S)


@contextlib.contextmanager
def answering(client: Client) -> Iterator[None]:
    """Calls to the scheduler outside the wait for chunks: when it is lost, Dask raises a
    timeout, a closed connection or a closed pool, each said here as `ClusterLost`."""
    if client.status != "running":
        raise ClusterLost(f"lost the Dask scheduler ({client.status}): the run stops here")
    try:
        yield
    except (OSError, RuntimeError) as e:  # TimeoutError and Dask's CommClosedError are OSErrors
        why = client.status if client.status != "running" else f"it does not answer: {e}"
        raise ClusterLost(f"lost the Dask scheduler ({why}): the run stops here") from None


def ship(client: Client, archives: list[AgentArchive]) -> list[Any]:
    """Send agents' archives to the cluster, each once (a worker fetches one when a chunk
    needs it); the futures that name them in tasks. Kept by the caller as long as chunks
    need them: a ladder ships each entry once per run, not once per round."""
    with answering(client):
        return client.scatter(archives, broadcast=False, hash=False)


def play_on_cluster(
    client: Client,
    cfg: TournamentConfig | RunSettings,
    todo: list[MatchSpec],
    write: Callable[[Finished], None],
    *,
    note: Callable[[str], None] = lambda line: None,
    warn: Callable[[str], None] | None = None,
    on_chunk: Callable[[ChunkResult, WorkerStats], None] | None = None,
    on_worker: Callable[[str, str], None] | None = None,
    tick: Callable[[], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    chunk_size: int | None = None,  # the most pairs in a chunk (default `MAX_CHUNK_PAIRS`)
    report: ClusterReport | None = None,
    shipped: list[Any] | None = None,
    run: str | None = None,
    logs: Path | None = None,
) -> int:
    """Play ``todo`` on the cluster of ``client``; hand each match to ``write`` (in this
    thread) as its chunk arrives; returns how many were handed over. ``cfg``: a
    tournament's config, or `RunSettings`; ``shipped``: the agents of ``todo``, sent by
    `ship` (default: ``cfg.agents``, sent now); ``run``: the key under which workers keep
    the agents' processes between chunks (default: new, this call's; a ladder gives one
    for all its rounds); ``logs``: the folder the agents' stderr from the workers is
    appended to (`append_logs`), as a local run writes it. ``note`` gets lines for the
    user (a worker lost), ``warn`` the runner's (an agent taken out), ``on_chunk`` each chunk with its worker's totals,
    ``on_worker`` ("joined" or "lost", address); ``tick`` is called at least every
    `POLL_S` (to redraw progress). ``should_stop`` is asked after each match: yes stops
    the chunks not yet returned (their matches are not written). `ClusterLost` when the
    scheduler goes away; `UserError` with a task's own line."""
    from distributed import Event, KilledWorker, wait
    from distributed.client import FutureCancelledError, FuturesCancelledError

    report = report if report is not None else ClusterReport()
    warn = warn if warn is not None else (lambda line: note(f"arena: {line}"))
    if not todo:
        return 0
    with answering(client):
        try:
            client.wait_for_workers(1, timeout=CONNECT_S)
        except TimeoutError:
            if client.status != "running":
                raise
            raise UserError(f"no Dask worker joined the cluster in {CONNECT_S:g} s") from None
        threads = sum(client.nthreads(callback_timeout=CONNECT_S).values())
        size = chunk_pairs(len(pairs_of(todo)), threads, cfg.concurrency, chunk_size or MAX_CHUNK_PAIRS)
        chunks = make_chunks(todo, size)
        report.chunks, report.chunk_pairs = len(chunks), size
        aliases = None
        if shipped is None:
            assert isinstance(cfg, TournamentConfig)
            shipped = ship(client, [pack(m) for m in cfg.distinct_agents()])  # fetched once per worker that needs it
            # seat names that are not agent names (a table comparison's reference seats)
            aliases = {seat: m.name for seat, m in cfg.seat_manifests().items() if seat != m.name} or None
        token = f"{cfg.config_hash[:12]}-{time.time_ns():x}"  # keys unique to this call: no result reused
        stop = f"arena-stop-{token}"  # set when this call ends: chunks still playing stop their matches
        pending: dict[Any, list[MatchSpec]] = {}
        for chunk in chunks:
            key = f"arena-chunk-{token}-{chunk[0].index}"
            pending[client.submit(run_chunk, cfg, chunk, shipped, run or token, stop, aliases, key=key, pure=False,
                                  retries=0)] = chunk  # fmt: skip
        known = set(client.nthreads(callback_timeout=CONNECT_S))
    next_look = time.monotonic() + WORKERS_S
    written = 0

    def lost(why: str) -> ClusterLost:
        return ClusterLost(f"lost the Dask scheduler{why}: the run stops here")

    def look() -> None:
        """Compare the workers with those seen last: say who left and who joined."""
        nonlocal known
        try:
            now = set(client.nthreads(callback_timeout=POLL_S * 4))
        except Exception:  # the scheduler is slow or gone: the next wait tells which
            return
        for w in sorted(known - now):
            report.lost_workers.append(w)
            note(f"arena: lost Dask worker {w}; its unfinished chunks run again on the others")
            if on_worker is not None:
                on_worker("lost", w)
        for w in sorted(now - known):
            if on_worker is not None:
                on_worker("joined", w)
        known = now

    try:
        while pending:
            try:
                done, _ = wait(list(pending), timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            except FuturesCancelledError:  # the client cancels every future when it loses the scheduler
                raise lost("") from None
            for fut in done:
                chunk = pending.pop(fut)
                if fut.status == "cancelled":
                    raise lost("")
                try:
                    result: ChunkResult = fut.result(timeout=CONNECT_S)
                except FutureCancelledError:
                    raise lost("") from None
                except OSError as e:  # the result was done but the scheduler went before it was fetched
                    if fut.status == "error":  # the chunk itself raised it: not the scheduler's loss
                        raise
                    why = client.status if client.status != "running" else f"it does not answer: {e}"
                    raise lost(f" ({why})") from None
                except UserError as e:
                    raise UserError(str(e)) from None
                except KilledWorker:
                    raise UserError(
                        f"the chunk of matches {chunk[0].match_id}..{chunk[-1].match_id} was on workers that died "
                        f"{_allowed_failures()} times; the run stops here"
                    ) from None
                stats = report.workers.setdefault(result.worker, WorkerStats())
                stats.chunks += 1
                stats.seconds += result.seconds
                stats.matches += len(result.finished)
                for line in result.warnings:
                    warn(f"{line} (on worker {result.worker})")
                if logs is not None and result.logs:
                    append_logs(logs, result.worker, result.logs)
                if on_chunk is not None:
                    on_chunk(result, stats)
                for f in sorted(result.finished, key=lambda f: f.spec.index):
                    write(f)
                    written += 1
                    if should_stop is not None and should_stop():
                        return written
            if client.status != "running":
                raise lost(f" ({client.status})")
            if tick is not None:
                tick()
            if time.monotonic() >= next_look:
                next_look = time.monotonic() + WORKERS_S
                look()
        look()  # a worker lost since the last look (its chunks ran again meanwhile) is said too
        return written
    finally:
        if pending and client.status == "running":  # the SPRT decided, an error, Ctrl-C: stop the cluster's work
            with contextlib.suppress(Exception):
                Event(stop, client=client).set()
                client.cancel(list(pending), force=True)


def append_logs(folder: Path, worker: str, logs: dict[str, bytes]) -> None:
    """Append what a worker's agents wrote to stderr to ``folder``, one file per process
    and worker (``WORKER-LABEL-N.log``, readable by this user only, as a local run's)."""
    host = "".join(c if c.isalnum() or c in ".-" else "_" for c in worker.split("://")[-1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in logs.items():
        safe = "".join(c if c.isalnum() or c in ".-_" else "_" for c in name)
        fd = os.open(folder / f"{host}-{safe}", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "ab") as f:
            f.write(data)


def _allowed_failures() -> int:
    import dask

    return int(dask.config.get("distributed.scheduler.allowed-failures"))
