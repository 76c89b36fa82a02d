"""Foreign logs as scorable results: an imported file becomes a results document and
the manifest of the setup that produced it.

``benchguard score`` reads a results.json as it is; any other log ``scan`` reads
(Inspect ``.eval``/``.json``, verifiers traces, SWE-agent and mini-swe-agent
trajectories, Claude Code stream-json) is imported and scored the same way, so the
gate, rows, dismissals, ``aggregate`` and the leaderboard work on it unchanged.

The setup is named from the log itself: the model it records (Inspect's
``eval.model``, a verifiers episode's or mini-swe-agent's model name when present, else
``unknown``), the tool that wrote it as the harness, and the task it ran as the
augmentation. The run id is the log file's name (Inspect, vf-eval and mini-swe-agent
name their logs uniquely), the time the file's modification time. Records keep the
log's own names (``task/sample#epoch`` for Inspect), which is what rows and dismissals
call the task.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchguard.importers.transcript import ImportedFile
from benchguard.results.aggregate import iso_t
from benchguard.results.io import ResultsDocument
from benchguard.results.rows import Manifest, setup_id_for

# Where a record's source block may name the model and the task, in order of trust.
_MODEL_KEYS = ("model", "model_name")
_TASK_KEYS = ("task", "env", "instance_id")
UNKNOWN = "unknown"


def imported_document(imported: ImportedFile) -> tuple[ResultsDocument, Manifest]:
    """The records of ``imported`` as a results document, and the manifest naming the
    setup from the log's model, format and task."""
    path = imported.path
    records: list[Any] = [dict(record) for record in imported.records]
    model = _most_common(records, _MODEL_KEYS)
    task = _most_common(records, _TASK_KEYS)
    augmentation = (task,) if task != UNKNOWN else ()
    modified = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC)
    t = iso_t(modified)
    manifest = Manifest(
        run_id=path.name,
        t=t,
        setup_id=setup_id_for(model, imported.format, augmentation),
        model=model,
        harness=imported.format,
        augmentation=augmentation,
    )
    document = ResultsDocument(
        records=records,
        run_id=manifest.run_id,
        t=t,
        manifest=manifest.to_json(),
        extra={"imported_from": {"path": str(path), "format": imported.format}},
        rulesets=imported.rulesets,
    )
    return document, manifest


def _most_common(records: Sequence[Any], keys: Sequence[str]) -> str:
    """The value most records' source names under the first of ``keys`` that any
    has (ties: the first met), or ``unknown``."""
    for key in keys:
        counts: Counter[str] = Counter()
        for record in records:
            value = _source(record).get(key)
            if isinstance(value, str) and value.strip():
                counts[value.strip()] += 1
        if counts:
            return counts.most_common(1)[0][0]
    return UNKNOWN


def _source(record: Any) -> Mapping[str, Any]:
    source = record.get("source") if isinstance(record, Mapping) else None
    return source if isinstance(source, Mapping) else {}
