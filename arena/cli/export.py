"""``arena export STORE``: the matches and deals tables as CSV, Parquet or JSON lines.

Every column gets its native type, in every format (docs/store.md lists them): seeds are
unsigned 64-bit integers (the store keeps them as signed: SQLite has no unsigned type),
integer columns that may be missing are nullable (pandas ``Int64``), ``started`` and
``finished`` are UTC timestamps (ISO 8601 text in CSV and JSON lines), and the list
columns (``latencies``, ``cpu``, ``actions``) are lists; CSV cannot hold a list, so there
they are JSON text. The match key is ``match_id`` in both tables (the store's
``matches.id``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..results.store import Store, unpack_ms

#: Columns that hold lists, and how to read them from the store (packed milliseconds, or text).
LIST_COLUMNS = {"latencies": unpack_ms, "cpu": unpack_ms, "actions": str.split}
TIME_COLUMNS = ("started", "finished")
SEED_COLUMNS = ("seed",)
RENAMED = {"matches": {"id": "match_id"}}
#: Rows read, typed and written at a time (a chunk of matches, its latencies as Python lists, takes about 5 kB a row).
CHUNK = 5_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="a results store (.sqlite)")
    p.add_argument("--format", choices=("csv", "parquet", "jsonl"), default="csv", help="default: csv")
    p.add_argument("-o", "--out", type=Path, help="output folder (default: next to the store, STORE-export/)")


def typed_table(rows: list[dict[str, Any]] | list[tuple], columns: list[tuple[str, str, bool]], table: str) -> Any:
    """A store table's rows as a pandas DataFrame of native types: ``UInt64`` seeds, nullable
    ``Int64`` integers, ``float64`` reals, UTC ``datetime64`` times, lists for the list
    columns, text as the ``string`` dtype; the match key renamed to ``match_id``."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=[name for name, _, _ in columns])
    for name, declared, _ in columns:
        if name in SEED_COLUMNS:
            df[name] = pd.array([int(x) for x in df[name]], dtype="UInt64")
        elif name in TIME_COLUMNS:
            df[name] = pd.to_datetime(df[name].astype("float64"), unit="s", utc=True).dt.round("us")
        elif name in LIST_COLUMNS:
            parse = LIST_COLUMNS[name]
            df[name] = [None if x is None else parse(x) for x in df[name]]
        elif declared == "INTEGER":
            df[name] = df[name].astype("Int64")
        elif declared == "REAL":
            df[name] = df[name].astype("float64")
        elif declared == "TEXT":
            df[name] = df[name].astype("string")  # a string column even when every value is missing
    return df.rename(columns=RENAMED.get(table, {}))


def _plain(value: Any) -> Any:
    """A cell as a JSON value: None for missing, ISO 8601 for a time, Python numbers."""
    import numpy as np
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else float(value)
    return value


class _Jsonl:
    """JSON lines, a chunk at a time."""

    def __init__(self, path: Path):
        self.f = path.open("w")

    def write(self, df: Any) -> None:
        for rec in df.to_dict("records"):
            self.f.write(json.dumps({k: _plain(v) for k, v in rec.items()}, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.f.close()


class _Csv:
    """CSV, a chunk at a time: the header with the first."""

    def __init__(self, path: Path):
        self.f = path.open("w", newline="")
        self.header = True

    def write(self, df: Any) -> None:
        out = df.copy()
        for name in out.columns:
            if name in LIST_COLUMNS:
                out[name] = [None if x is None else json.dumps(x) for x in out[name]]
            elif name in TIME_COLUMNS:
                out[name] = [_plain(x) for x in out[name]]
        out.to_csv(self.f, index=False, header=self.header)
        self.header = False

    def close(self) -> None:
        self.f.close()


class _Parquet:
    """Parquet with explicit list types (an empty list or table still has them), a row
    group per chunk, every chunk in the first one's schema."""

    def __init__(self, path: Path):
        self.path = path
        self.writer = None

    def write(self, df: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        types = {"latencies": pa.list_(pa.list_(pa.float64())), "cpu": pa.list_(pa.list_(pa.float64())),
                 "actions": pa.list_(pa.string())}  # fmt: skip
        t = pa.Table.from_pandas(df, preserve_index=False)
        for name, typ in types.items():
            if name in df.columns:
                t = t.set_column(t.schema.get_field_index(name), name, pa.array(list(df[name]), type=typ))
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, t.schema)
        self.writer.write_table(t.cast(self.writer.schema))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _write(writer: Any, frames: Any) -> int:
    """Write typed chunks; returns the rows written."""
    n = 0
    try:
        for df in frames:
            writer.write(df)
            n += len(df)
    finally:
        writer.close()
    return n


def run(args: argparse.Namespace) -> int:
    if args.format == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UserError("--format parquet needs pyarrow: pip install 'sixtysix-arena[parquet]'") from None
    out = args.out or args.store.with_name(args.store.stem + "-export")
    writer = {"csv": _Csv, "parquet": _Parquet, "jsonl": _Jsonl}[args.format]
    with Store(args.store, create=False) as store:
        out.mkdir(parents=True, exist_ok=True)
        for name in ("matches", "deals"):
            # a chunk at a time, so memory stays flat however large the store; an empty
            # table still gets its typed header
            columns = store.columns(name)
            chunks = (typed_table(rows, columns, name) for rows in store.chunks(name, size=CHUNK))
            first = next(chunks, None)
            frames = itertools.chain([typed_table([], columns, name) if first is None else first], chunks)
            path = out / f"{name}.{args.format}"
            n = _write(writer(path), frames)
            print(f"{path}: {n} rows")
    return 0
