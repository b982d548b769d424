"""A columnar snapshot of a repository's PR DataFrame, kept in the cache beside the rows it came from.

Why: building the DataFrame from SQL costs one Python object per cell (3,000 PRs x 26 columns ~ 15 ms),
while a snapshot decodes whole columns at once (~3 ms) — as fast as pandas reading a CSV. The snapshot is
an optimisation only: the store deletes it in the same transaction as any write to the repository's
PRs, rebuilds it after a sync, and falls back to SQL whenever it is missing or unreadable.

Format (no pickle: a cache file must never execute code): 4-byte header length, a JSON header
(row count, columns with kind/dtype/offset/length, a fingerprint of the column list), then the
column bodies: raw little-endian arrays for numbers, booleans and times; JSON lists for text.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

FORMAT = 1


def fingerprint(columns: list[str]) -> str:
    return hashlib.sha1(f"{FORMAT}:{','.join(columns)}".encode()).hexdigest()[:12]


def encode(df: pd.DataFrame) -> bytes:
    header, parts, offset = [], [], 0
    for name in df.columns:
        col = df[name]
        dtype = str(col.dtype)
        if col.dtype.kind in "biuf":
            arr = col.to_numpy()
            raw, kind, npdt = arr.tobytes(), "array", arr.dtype.str
        elif col.dtype.kind == "M":
            arr = (col.dt.tz_localize(None) if getattr(col.dt, "tz", None) is not None else col).to_numpy()
            raw, kind, npdt = arr.view("int64").tobytes(), "time", arr.dtype.str
        else:
            values = [None if v is None or (isinstance(v, float) and v != v) else v for v in col.tolist()]
            raw, kind, npdt = json.dumps(values, ensure_ascii=False).encode(), "json", None
        tz = str(col.dt.tz) if col.dtype.kind == "M" and col.dt.tz is not None else None
        header.append(
            {"name": name, "kind": kind, "dtype": dtype, "np": npdt, "tz": tz, "at": offset, "len": len(raw)}
        )
        parts.append(raw)
        offset += len(raw)
    head = json.dumps({"format": FORMAT, "rows": len(df), "fingerprint": fingerprint(list(df.columns)),
                       "columns": header}).encode()  # fmt: skip
    return len(head).to_bytes(4, "little") + head + b"".join(parts)


def decode(blob: bytes, columns: list[str]) -> pd.DataFrame | None:
    """The DataFrame, or None when the snapshot is of another format or column list (then use SQL)."""
    size = int.from_bytes(blob[:4], "little")
    head = json.loads(blob[4 : 4 + size])
    if head.get("format") != FORMAT or head.get("fingerprint") != fingerprint(columns):
        return None
    body = memoryview(blob)[4 + size :]
    rows = head["rows"]
    data = {}
    for c in head["columns"]:
        raw = body[c["at"] : c["at"] + c["len"]]
        if c["kind"] == "array":
            data[c["name"]] = pd.Series(np.frombuffer(raw, dtype=c["np"]).copy(), dtype=c["dtype"])
        elif c["kind"] == "time":
            values = pd.DatetimeIndex(np.frombuffer(raw, dtype="int64").copy().view(c["np"]))
            if c["tz"]:
                values = values.tz_localize("UTC").tz_convert(c["tz"])
            data[c["name"]] = pd.Series(values, dtype=c["dtype"])
        else:
            data[c["name"]] = pd.Series(json.loads(bytes(raw)), dtype=c["dtype"] if rows else object)
        if len(data[c["name"]]) != rows:
            return None
    return pd.DataFrame(data, columns=columns)
