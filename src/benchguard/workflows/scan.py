"""The scan workflow: collect log files (named, standard input, directory trees), scan
them with an engine, apply reviewed dismissals, and say what could not be read.

``benchguard scan`` parses its options, calls :func:`scan_logs` and prints the
:class:`ScanOutcome`; nothing here prints. The exit code (the shared policy of
:mod:`benchguard.workflows.exit_policy`: 2 bad input, 1 flagged, 3 an input gap, 0)
is :attr:`ScanOutcome.exit_code`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from benchguard.detection.detector import Detector
from benchguard.detection.models import Rule
from benchguard.detection.profile_choice import AUTO, ProfileChoice, resolve_profiles
from benchguard.engines import EngineName, FileScan, scan_files
from benchguard.importers.harbor import is_harbor_dir
from benchguard.importers.registry import detect_format
from benchguard.importers.transcript import UnreadableLogError
from benchguard.record.codec import BATCH_FILE, MANIFEST_FILE, MANIFESTS_FILE, ROWS_FILE
from benchguard.workflows._inputs import collect_inputs
from benchguard.workflows._log_head import log_head
from benchguard.workflows._scan_gaps import InputGap, input_gaps
from benchguard.workflows.exit_policy import verdict_exit_code
from benchguard.workflows.foreign import ForeignKnowledge

if TYPE_CHECKING:
    from benchguard.results.dismissals import Dismissal

# Suffixes picked up when walking a directory; a file named on the command line is
# read whatever its name.
WALK_SUFFIXES = (".json", ".jsonl", ".eval", ".traj")
# Files the harness and ``aggregate`` write beside results.json that hold no records.
WALK_SKIP_NAMES = frozenset({ROWS_FILE, MANIFEST_FILE, MANIFESTS_FILE})


@dataclass(frozen=True)
class ScanProgress:
    """How far a scan is: files and bytes done of the files to scan (the walked and
    named files that exist; a file's size is taken before it is scanned)."""

    files_done: int
    files: int
    bytes_done: int
    bytes: int


@dataclass(frozen=True)
class ScanRequest:
    """What to scan and how. ``renamed`` maps a path to the name output shows for it
    (standard input's spool file to ``<stdin>``)."""

    paths: Sequence[Path]
    rules: Sequence[Rule]
    dismissals: Sequence[Dismissal] = ()
    input_format: str | None = None
    engine: EngineName = "serial"
    scheduler: str | None = None
    workers: int | None = None
    renamed: dict[str, str] = field(default_factory=dict)
    # Exit 1 on a record sent to review (only weak findings) as on a flagged one.
    fail_on_review: bool = False
    # The profiles asked for (repeated --profile: their union). When they include
    # ``auto``, each file's rules are chosen from the file itself and ``rules`` is not
    # used; ``extra_rules`` are then appended to every file's choice.
    profiles: tuple[str, ...] = ()
    extra_rules: Path | None = None
    # What the user knows of a foreign log: the benchmark's material (--material,
    # fingerprinted) and the task's real history (--repo with --base-commit or
    # --instances: history findings resolved against it, conclusive or dropped),
    # applied to each record where the engine reads it.
    knowledge: ForeignKnowledge | None = None
    # Called after each file (the serial engine) or once at the end (dask, whose
    # workers report nothing until they are done); never when ``None``.
    on_progress: Callable[[ScanProgress], None] | None = None


@dataclass
class ScanOutcome:
    """Every file's verdicts, and what went wrong: ``missing`` named paths, ``failed``
    named files that could not be read, ``skipped`` walked files in no format we read,
    dismissal entries that matched nothing, and the input gaps."""

    scans: list[FileScan]
    named: set[str]
    missing: list[str] = field(default_factory=list)
    failed: list[FileScan] = field(default_factory=list)
    skipped: list[FileScan] = field(default_factory=list)
    unmatched: list[Dismissal] = field(default_factory=list)
    gaps: list[InputGap] = field(default_factory=list)
    fail_on_review: bool = False
    # Per file, the profiles its rules came from and why (``auto``); empty otherwise.
    choices: dict[str, ProfileChoice] = field(default_factory=dict)

    def profiles_line(self) -> str:
        """The profiles chosen and why, once per distinct choice (for the summary)."""
        seen = list(dict.fromkeys(choice.describe() for choice in self.choices.values()))
        return "; ".join(seen)

    @property
    def flagged(self) -> bool:
        return any(r.report.status == "flagged" for s in self.scans for r in s.records)

    @property
    def review(self) -> int:
        """Records sent to review (only weak findings): printed and counted; exit 0
        unless ``fail_on_review``."""
        return sum(r.report.status == "review" for s in self.scans for r in s.records)

    @property
    def exit_code(self) -> int:
        return scan_exit_code(
            bad_input=bool(self.missing or self.failed),
            flagged=self.flagged,
            gaps=self.gaps,
            review=self.review > 0,
            fail_on_review=self.fail_on_review,
        )


def scan_exit_code(
    *,
    bad_input: bool,
    flagged: bool,
    gaps: Sequence[InputGap],
    review: bool = False,
    fail_on_review: bool = False,
) -> int:
    """2 bad input; else 1 a finding; else 3 an input gap (skipped, unread or empty
    input: never 0 over what was not read); else 0. A finding is never hidden behind
    an incomplete scan, as for ``run`` and ``score``."""
    return verdict_exit_code(
        bad_input=bad_input,
        gated=flagged,
        incomplete=bool(gaps),
        review=review,
        fail_on_review=fail_on_review,
    )


def is_log_file(path: Path) -> bool:
    """Whether a file found by walking a directory is one to scan. In a harness run
    directory that is its results.json alone: the journal (batch.json, runs/*.json) and
    the stored rulesets are the harness's own bookkeeping, not more records."""
    if path.suffix not in WALK_SUFFIXES or path.name in WALK_SKIP_NAMES:
        return False
    for folder in (path.parent, path.parent.parent):
        if (folder / BATCH_FILE).is_file() and (folder / "results.json").is_file():
            return path == folder / "results.json"
    return True


def _readable_input(path: Path) -> bool:
    """A file, or a Harbor job or trial directory (read as one input)."""
    return path.is_file() or is_harbor_dir(path)


def scan_logs(request: ScanRequest) -> ScanOutcome:
    """Scan every input; raises only for an engine that cannot run (an ``EngineError``)."""
    inputs = collect_inputs(request.paths, is_log_file, harbor=True).files
    missing = [
        f"{request.renamed.get(str(item.path), item.path)}: no such file or directory"
        for item in inputs
        if item.named and not _readable_input(item.path)
    ]
    files = [str(item.path) for item in inputs if not item.named or _readable_input(item.path)]
    choices: dict[str, ProfileChoice] = {}
    # One detector for the whole scan (serial engine): the calls below, one per
    # profile choice or per file with progress, share its plans, prefilters (a choice
    # that adds a few patterns extends the last Sets instead of building and warming
    # new ones) and shell readings. A detector's memory is keyed by content alone.
    detector = Detector()
    if AUTO in request.profiles:
        scans, choices = _scan_auto(files, request, detector)
    else:
        counter = _Counter(files, request.on_progress)
        scans = _scan(files, request.rules, request, counter, detector)
    for old, new in request.renamed.items():
        scans = [_renamed(s, old, new) for s in scans]
    named = {request.renamed.get(str(item.path), str(item.path)) for item in inputs if item.named}
    scans, unmatched = _apply_dismissals(scans, request.dismissals)
    skipped = [s for s in scans if s.error_kind == "unknown-format" and s.path not in named]
    # A named file that cannot be read is bad input (2); a walked one is an input gap
    # (3, listed with its reason), as the exit-code table says.
    failed = [s for s in scans if s.error and s not in skipped and s.path in named]
    roots = [request.renamed.get(str(p), str(p)) for p in request.paths]
    gaps = input_gaps(scans, named=named, walked_roots=roots)
    choices = {request.renamed.get(path, path): choice for path, choice in choices.items()}
    return ScanOutcome(
        scans, named, missing, failed, skipped, unmatched, gaps, request.fail_on_review, choices
    )


def choose_profiles(
    path: Path, profiles: Sequence[str], extra_rules: Path | None, input_format: str | None
) -> ProfileChoice:
    """The profiles for one file: ``auto`` recognised from the file (its format as the
    importers detect it, and its head)."""
    format_name = input_format
    if format_name is None:
        try:
            format_name = detect_format(path)
        except (UnreadableLogError, OSError, ValueError):
            format_name = None  # the scan itself reports what it cannot read
    text = log_head(path) if AUTO in profiles else ""
    return resolve_profiles(profiles, text=text, format_name=format_name, extra_rules=extra_rules)


def _scan_auto(
    files: list[str], request: ScanRequest, detector: Detector
) -> tuple[list[FileScan], dict[str, ProfileChoice]]:
    """Each file scanned with the profiles chosen for it; files with one choice are
    scanned together (one engine call per distinct ruleset), results in file order."""
    choices = {
        path: choose_profiles(
            Path(path), request.profiles, request.extra_rules, request.input_format
        )
        for path in files
    }
    groups: dict[tuple[str, ...], list[str]] = {}
    for path in files:
        groups.setdefault(choices[path].names, []).append(path)
    by_path: dict[str, FileScan] = {}
    counter = _Counter(files, request.on_progress)
    for paths in groups.values():
        for scanned in _scan(paths, choices[paths[0]].rules, request, counter, detector):
            by_path[scanned.path] = scanned
    return [by_path[path] for path in files], choices


class _Counter:
    """Files and bytes scanned so far, told to ``report`` as they grow."""

    def __init__(self, files: Sequence[str], report: Callable[[ScanProgress], None] | None) -> None:
        self.report = report
        self.sizes = {path: _size(path) for path in files} if report is not None else {}
        self.files = len(files)
        self.bytes = sum(self.sizes.get(path, 0) for path in files)
        self.files_done = self.bytes_done = 0
        if report is not None and files:
            # Shown before the first file: one big file is otherwise seconds of silence.
            report(ScanProgress(0, self.files, 0, self.bytes))

    def done(self, paths: Sequence[str]) -> None:
        if self.report is None:
            return
        self.files_done += len(paths)
        self.bytes_done += sum(self.sizes.get(path, 0) for path in paths)
        self.report(ScanProgress(self.files_done, self.files, self.bytes_done, self.bytes))


def _size(path: str) -> int:
    """A file's size (a Harbor directory, or a file gone since it was listed: 0)."""
    try:
        return os.stat(path).st_size if os.path.isfile(path) else 0
    except OSError:
        return 0


def _scan(
    paths: Sequence[str],
    rules: Sequence[Rule],
    request: ScanRequest,
    counter: _Counter,
    detector: Detector,
) -> list[FileScan]:
    """``paths`` scanned with ``rules`` by the request's engine; with progress asked
    for and the serial engine, one file at a time so each one done is reported."""
    one_by_one = request.on_progress is not None and request.engine == "serial"
    chunks = [[path] for path in paths] if one_by_one else [list(paths)]
    scans: list[FileScan] = []
    for chunk in chunks:
        scans.extend(
            scan_files(
                chunk,
                rules,
                format_name=request.input_format,
                engine=request.engine,
                scheduler=request.scheduler,
                workers=request.workers,
                knowledge=request.knowledge,
                detector=detector,
            )
        )
        counter.done(chunk)
    return scans


def _renamed(scanned: FileScan, old: str, new: str) -> FileScan:
    """``scanned`` with its spool file's name replaced by how standard input is shown."""
    if scanned.path != old:
        return scanned
    error = scanned.error.replace(old, new) if scanned.error else None
    problems = tuple(p.replace(old, new) for p in scanned.problems)
    return scanned.model_copy(update={"path": new, "error": error, "problems": problems})


def _apply_dismissals(
    scans: list[FileScan], entries: Sequence[Dismissal]
) -> tuple[list[FileScan], list[Dismissal]]:
    """Each record's report with the entries for its run, task and iteration applied;
    and the entries that matched no finding. A file's run id is its directory's name
    (a harness run folder), the way ``score`` names a run without a manifest."""
    if not entries:
        return scans, []
    # On use: a scan without dismissals (most) does not import the results package.
    from benchguard.results.dismissals import apply_dismissals

    used = [False] * len(entries)
    updated: list[FileScan] = []
    for scanned in scans:
        run_id = Path(scanned.path).resolve().parent.name
        records = []
        for rec in scanned.records:
            chosen = [
                (i, e)
                for i, e in enumerate(entries)
                if e.applies_to(run_id=run_id, task=rec.task, iteration=rec.iteration)
            ]
            report, matched = apply_dismissals(rec.report, [e for _, e in chosen])
            for i, entry in chosen:
                used[i] = used[i] or entry.rule in matched
            records.append(rec.model_copy(update={"report": report}))
        updated.append(scanned.model_copy(update={"records": tuple(records)}))
    return updated, [e for e, was_used in zip(entries, used, strict=True) if not was_used]
