"""``arena export STORE``: the matches and deals tables as CSV, Parquet or JSON lines."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import UserError
from ..store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="a results store (.sqlite)")
    p.add_argument("--format", choices=("csv", "parquet", "jsonl"), default="csv")
    p.add_argument("-o", "--out", type=Path, help="output folder (default: next to the store, STORE-export/)")


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    out = args.out or args.store.with_name(args.store.stem + "-export")
    with Store(args.store, create=False) as store:
        tables = {"matches": pd.DataFrame(store.matches()), "deals": pd.DataFrame(store.deals())}
    if args.format == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UserError("--format parquet needs pyarrow: pip install 'sixtysix-arena[parquet]'") from None
    out.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        # Seeds are unsigned 64-bit: keep them exact as text in formats that would round them.
        df = df.assign(seed=df["seed"].astype(str)) if "seed" in df and args.format != "jsonl" else df
        path = out / f"{name}.{args.format}"
        if args.format == "csv":
            df.to_csv(path, index=False)
        elif args.format == "parquet":
            df.to_parquet(path, index=False)
        else:
            df.to_json(path, orient="records", lines=True)
        print(f"{path}: {len(df)} rows")
    return 0
