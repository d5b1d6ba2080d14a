"""The results file of one suite run: ``SUITE.json`` (everything) and ``SUITE.csv`` (the records).

JSON layout (``schema`` = ``apsp-bench/1``)::

    {"schema", "suite", "complete", "interrupted", "environment": {date, cpu, gpu,
     versions, git, ...}, "options": {...}, "notes": [...], "plots": [{file, kind,
     lines, labels}], "records": [{suite, backend, n, status, reason, time_median_s,
     ..., "stages": {stage: seconds}, "samples_s": [...]}]}

Every record has ``status``: ``ok`` (measured), ``skipped`` (with ``reason``:
backend missing, predicted over the time limit, ...), or ``failed`` (the error).

>>> r = Results(suite="backends", environment={}, options={})
>>> _ = r.add(backend="scipy-fw", n=64, status="ok", time_median_s=0.01, stages={"solve": 0.01})
>>> flatten(r.records[0])["stage_solve_s"]
0.01
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..io.atomic import atomic_write

SCHEMA = "apsp-bench/1"
#: fields every record carries (others depend on the suite)
RECORD_FIELDS = ("suite", "backend", "n", "status", "reason")
STATUSES = ("ok", "skipped", "failed")


@dataclass
class Results:
    # in the order of the results file's keys (`to_json`)
    suite: str
    complete: bool = False
    interrupted: bool = False
    environment: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    plots: list = field(default_factory=list)
    records: list = field(default_factory=list)

    def add(self, **record) -> dict:
        record.setdefault("suite", self.suite)
        for key in RECORD_FIELDS:
            record.setdefault(key, None)
        if record["status"] not in STATUSES:
            raise ValueError(f"record status must be one of {STATUSES}, got {record['status']!r}")
        self.records.append(record)
        return record

    def ok(self) -> list[dict]:
        return [r for r in self.records if r["status"] == "ok"]

    def to_json(self) -> dict:
        return {"schema": SCHEMA, **vars(self)}

    def save(self, out_dir) -> tuple[Path, Path]:
        """Write ``SUITE.json`` and ``SUITE.csv`` whole (temporary file, then rename)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        json_path = out / f"{self.suite}.json"
        csv_path = out / f"{self.suite}.csv"
        write_text_atomic(json_path, json.dumps(self.to_json(), indent=1, default=_jsonable) + "\n")
        write_text_atomic(csv_path, records_csv(self.records))
        return json_path, csv_path


def load(path) -> Results:
    """Read a results file written by `Results.save`; refuses other JSON with a clear message."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a JSON results file ({exc})") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not an apsp benchmark results file (schema {SCHEMA!r} expected)")
    return Results(suite=data["suite"], environment=data.get("environment", {}),
                   options=data.get("options", {}), records=data.get("records", []),
                   plots=data.get("plots", []), notes=data.get("notes", []),
                   complete=bool(data.get("complete")), interrupted=bool(data.get("interrupted")))


def flatten(record: dict) -> dict:
    """One CSV row: ``stages`` become ``stage_NAME_s`` columns, lists are joined with ';'."""
    row = {}
    for key, value in record.items():
        if key == "stages" and isinstance(value, dict):
            row.update({f"stage_{stage}_s": sec for stage, sec in value.items()})
        elif isinstance(value, (list, tuple)):
            row[key] = ";".join(str(v) for v in value)
        elif isinstance(value, dict):
            row[key] = json.dumps(value, default=_jsonable)
        else:
            row[key] = value
    return row


def records_csv(records: list[dict]) -> str:
    rows = [flatten(r) for r in records]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)  # None as an empty cell
    return buf.getvalue()


def write_text_atomic(path, text: str) -> None:
    with atomic_write(path) as fh:
        fh.write(text.encode())


def _jsonable(value):
    """numpy scalars and other odd values in records, as JSON."""
    return value.item() if hasattr(value, "item") else str(value)
