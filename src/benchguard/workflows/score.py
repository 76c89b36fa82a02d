"""The score workflow: rescan stored or imported records, apply reviewed dismissals,
gate, finalize, and write results.json, rows.json and manifest.json per input.

``benchguard score`` parses its options, calls :func:`score_files` and prints the
:class:`ScoreOutcome`; nothing here prints. Inputs are results.json files (either
layout; directories are walked for them) or any other log ``scan`` reads (imported, its
outputs in ``<log name>.benchguard/``). A bad input is recorded in ``bad`` and every
good one is still scored and written.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, CheatingReport, Rule
from benchguard.detection.profile_choice import AUTO, ProfileChoice
from benchguard.engines import EngineName, scan_records
from benchguard.engines.work import record_label
from benchguard.importers.registry import detect_format, import_path
from benchguard.importers.results_json import FORMAT_NAME as RESULTS_FORMAT
from benchguard.importers.transcript import UnreadableLogError
from benchguard.record.codec import RESULTS_FILE
from benchguard.record.run import record_task_folder
from benchguard.results.aggregate import MANIFEST_FILENAME, ROWS_FILENAME, iso_t
from benchguard.results.dismissals import Dismissal
from benchguard.results.imported import imported_document
from benchguard.results.io import (
    ResultsDocument,
    ResultsFileError,
    dumps,
    read_manifest,
    read_results,
    write_files_atomic,
)
from benchguard.results.rescore import (
    BatchScan,
    rescan_documents,
    rescore_records,
    unmatched_messages,
)
from benchguard.results.rows import Manifest, ResultRow, build_rows, setup_id_for
from benchguard.workflows._inputs import collect_inputs
from benchguard.workflows.exit_policy import REVIEW_STATUS, verdict_exit_code
from benchguard.workflows.foreign import ForeignKnowledge
from benchguard.workflows.scan import choose_profiles

# Beside an imported log, the folder its scored outputs are written to.
IMPORTED_SUFFIX = ".benchguard"

# The file name is defined once in record.codec (this name is kept for importers).
RESULTS_FILENAME = RESULTS_FILE


@dataclass
class ScoreInput:
    """One results file (or imported log) being scored, and where its outputs go."""

    path: Path
    document: ResultsDocument
    manifest: Manifest
    target: Path
    # Outputs of an imported log go to a folder of their own named after it.
    subdir: str = ""
    # What the importer could not read (a Harbor trial with no trajectory): each
    # needs attention, since it has no row.
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoreRequest:
    """What to score and how: the inputs, the rules and dismissals already loaded."""

    paths: Sequence[Path]
    rules: Sequence[Rule]
    dismissals: Sequence[Dismissal] = ()
    out_dir: Path | None = None
    engine: EngineName = "serial"
    scheduler: str | None = None
    workers: int | None = None
    # The profiles asked for; with ``auto`` each input's rules are chosen from the
    # input itself (``rules`` is then not used) and ``extra_rules`` appended.
    profiles: tuple[str, ...] = ()
    extra_rules: Path | None = None
    # What the user knows of a foreign log (--material, --repo with --base-commit or
    # --instances), as for ``scan``: applied in the rescan, before dismissals and the
    # gate.
    knowledge: ForeignKnowledge | None = None


@dataclass
class ScoreOutcome:
    """What scoring did: each input written with its rows; ``notes`` (a record kept
    without a row), ``warnings`` (a dismissal that matched nothing, as ``scan`` warns),
    ``incomplete`` (exit 3: a record not scored, a rescan that failed or was cut) and
    ``bad`` (exit 2: an input not scored). A gated or flagged row exits 1, as ``scan``
    and ``run`` do (:mod:`benchguard.workflows.exit_policy`)."""

    scored: list[tuple[ScoreInput, list[ResultRow]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    # The hook for a status that asks for review without gating: such a row exits 0
    # unless this is set (by an option that asks to fail on it), then 1.
    fail_on_review: bool = False

    @property
    def attention(self) -> list[str]:
        """Everything that needs a look besides bad input (incomplete, then warnings)."""
        return [*self.incomplete, *self.warnings]

    @property
    def rows(self) -> list[ResultRow]:
        return [row for _, rows in self.scored for row in rows]

    @property
    def gated(self) -> bool:
        return any(r.catastrophic or r.integrity_status == "flagged" for r in self.rows)

    # Per input, the profiles its rules came from and why (``auto``).
    choices: dict[str, ProfileChoice] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return verdict_exit_code(
            bad_input=bool(self.bad),
            gated=self.gated,
            incomplete=bool(self.incomplete),
            review=any(r.integrity_status == REVIEW_STATUS for r in self.rows),
            fail_on_review=self.fail_on_review,
        )


def score_files(request: ScoreRequest) -> ScoreOutcome:
    """Score every input; raises only for a problem that stops all of them (an engine
    that cannot run, as a :class:`benchguard.errors.EngineError`)."""
    outcome = ScoreOutcome()
    # A directory under -o is not walked: a second run must not score its own outputs.
    found = collect_inputs(request.paths, is_results_file, exclude=request.out_dir, harbor=True)
    outcome.bad.extend(f"{path}: no {RESULTS_FILENAME} files found" for path in found.empty_dirs)
    inputs = _read_inputs([item.path for item in found.files], outcome.bad)
    inputs = _assign_targets(inputs, request.out_dir, outcome.bad)
    if not inputs:
        return outcome
    scan_batch = _engine_scan(request.engine, request.scheduler, request.workers, request.knowledge)
    if AUTO in request.profiles:
        verdicts = _rescan_auto(inputs, request, scan_batch, outcome.choices)
    else:
        verdicts = rescan_documents([i.document for i in inputs], request.rules, scan_batch)
    entries = tuple(request.dismissals)
    used = [False] * len(entries)
    for item, fresh in zip(inputs, verdicts, strict=True):
        document, manifest = item.document, item.manifest
        outcome.incomplete.extend(item.problems)
        outcome.notes.extend(
            f"{item.path}: record {position} is not an object; kept as it is, with no row"
            for position in document.non_object_positions()
        )
        rescored = rescore_records(
            document.records,
            verdicts=fresh,
            dismissals=entries,
            run_id=manifest.run_id,
            rulesets=document.rulesets,
        )
        used = [a or b for a, b in zip(used, rescored.dismissals_used, strict=True)]
        outcome.incomplete.extend(f"{item.path}: {m}" for m in rescored.errors)
        outcome.warnings.extend(f"{item.path}: {m}" for m in rescored.stale_dismissals)
        rows = build_rows(document.records, manifest)
        if document.layout == "object":
            document.manifest = manifest.to_json()
            document.run_id, document.t = manifest.run_id, manifest.t
        try:
            write_files_atomic(
                {
                    item.target / RESULTS_FILENAME: dumps(document.to_json()),
                    item.target / ROWS_FILENAME: dumps([row.to_json() for row in rows]),
                    item.target / MANIFEST_FILENAME: dumps(manifest.to_json()),
                }
            )
        except OSError as exc:
            outcome.bad.append(f"{item.target}: cannot write outputs: {exc.strerror or exc}")
            continue
        outcome.scored.append((item, rows))
    outcome.warnings.extend(unmatched_messages(entries, used))
    return outcome


def _rescan_auto(
    inputs: list[ScoreInput],
    request: ScoreRequest,
    scan_batch: BatchScan,
    choices: dict[str, ProfileChoice],
) -> list[Any]:
    """Each input rescanned with the profiles chosen for it (one batch per distinct
    choice), verdicts in input order."""
    for item in inputs:
        choices[str(item.path)] = choose_profiles(
            item.path, request.profiles, request.extra_rules, None
        )
    groups: dict[tuple[str, ...], list[int]] = {}
    for position, item in enumerate(inputs):
        groups.setdefault(choices[str(item.path)].names, []).append(position)
    verdicts: list[Any] = [None] * len(inputs)
    for positions in groups.values():
        rules = choices[str(inputs[positions[0]].path)].rules
        fresh = rescan_documents([inputs[p].document for p in positions], rules, scan_batch)
        for position, verdict in zip(positions, fresh, strict=True):
            verdicts[position] = verdict
    return verdicts


def is_results_file(path: Path) -> bool:
    """Whether a file found by walking a directory is one to score (never the
    rows.json/manifest.json a previous run wrote beside it)."""
    return path.name == RESULTS_FILENAME


def _read_inputs(files: Sequence[Path], bad: list[str]) -> list[ScoreInput]:
    inputs = []
    for path in files:
        try:
            inputs.append(read_score_input(path))
        except (ResultsFileError, UnreadableLogError) as exc:
            bad.append(str(exc))
    return inputs


def read_score_input(path: Path) -> ScoreInput:
    """A results.json as it is; any other log ``scan`` reads, imported (its outputs go
    to ``<log name>.benchguard/`` beside it)."""
    try:
        log_format = detect_format(path)
    except UnreadableLogError:
        # Not a log we recognise: the results reader names exactly what is wrong.
        log_format = RESULTS_FORMAT
    if log_format == RESULTS_FORMAT:
        document = read_results(path)
        return ScoreInput(path, document, manifest_for(path, document), path.parent)
    imported = import_path(path, log_format)
    document, manifest = imported_document(imported)
    subdir = f"{path.name}{IMPORTED_SUFFIX}"
    return ScoreInput(
        path, document, manifest, path.parent / subdir, subdir, tuple(imported.problems)
    )


def _assign_targets(
    inputs: list[ScoreInput], out_dir: Path | None, bad: list[str]
) -> list[ScoreInput]:
    """Each input's output directory: beside it, or under ``out_dir`` at its location
    relative to the inputs' common directory. Two inputs that would write the same
    directory are refused (the first keeps it): one would silently overwrite the other."""
    if out_dir is not None and inputs:
        parents = [Path(os.path.abspath(item.path.parent)) for item in inputs]
        base = Path(os.path.commonpath(parents))
        for item, parent in zip(inputs, parents, strict=True):
            item.target = out_dir / parent.relative_to(base) / item.subdir
    kept: list[ScoreInput] = []
    owners: dict[Path, Path] = {}
    for item in inputs:
        key = Path(os.path.abspath(item.target))
        if key in owners:
            bad.append(
                f"{item.path}: its outputs would overwrite those of {owners[key]} in "
                f"{item.target}; score it on its own with -o DIR"
            )
            continue
        owners[key] = item.path
        kept.append(item)
    return kept


def _engine_scan(
    engine: str,
    scheduler: str | None,
    workers: int | None,
    knowledge: ForeignKnowledge | None = None,
) -> BatchScan:
    def scan_batch(
        records: Sequence[Mapping[str, Any]],
        rules: Sequence[Rule],
        dynamic_rules: Sequence[Sequence[Rule]],
    ) -> list[CheatingReport]:
        if knowledge is not None:
            # The material's fingerprints after each record's stored dynamic rules.
            dynamic_rules = [
                (*dynamic, *knowledge.rules_for(record))
                for record, dynamic in zip(records, dynamic_rules, strict=True)
            ]
        reports = scan_records(
            records,
            rules,
            engine="dask" if engine == "dask" else "serial",
            scheduler=scheduler,
            workers=workers,
            dynamic_rules=dynamic_rules,
        )
        if knowledge is None:
            return reports
        return [
            knowledge.resolve(record, f"{record_label(record, i)} {record_task_folder(record)}", r)
            for i, (record, r) in enumerate(zip(records, reports, strict=True))
        ]

    return scan_batch


def manifest_for(results: Path, document: ResultsDocument) -> Manifest:
    """The document's own manifest, else manifest.json beside it, else one derived from
    the file (run id = directory name, t = the file's modification time)."""
    if document.manifest is not None:
        try:
            return Manifest.model_validate(document.manifest)
        except ValidationError as exc:
            raise ResultsFileError(results, f"invalid manifest: {exc.errors()[0]['msg']}") from None
    beside = results.parent / MANIFEST_FILENAME
    if beside.is_file():
        return read_manifest(beside)
    modified = dt.datetime.fromtimestamp(results.stat().st_mtime, tz=dt.UTC)
    return Manifest(
        run_id=document.run_id or results.resolve().parent.name,
        t=document.t or iso_t(modified),
        setup_id=setup_id_for("unknown", "unknown"),
        model="unknown",
        harness="unknown",
    )


def stored_report(record: dict[str, Any]) -> CheatingReport:
    """The record's report as the gate left it; one that cannot be read is shown as a
    flagged, incomplete report (fail closed)."""
    try:
        return CheatingReport.model_validate(record.get("cheating_report"))
    except ValidationError:
        return CheatingReport(
            detector_version=0,
            status="flagged",
            categories=(SCAN_INCOMPLETE_CATEGORY,),
            incomplete=True,
            incomplete_reason="stored report unreadable",
        )
