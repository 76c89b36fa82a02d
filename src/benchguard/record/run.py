"""The run record: what one agent run on one task left behind, in one typed shape.

It is parsed once, leniently, at the edges (the harness's capture, the importers, the
results reader: ``record.edge``), where every bound (``record.bounds``) is enforced.
The harness carries this type from capture to its journal, and detection takes it
(``Detector.scan(record, rulesets)``, which reads it by attribute and never edits it);
scoring (``scoring.pipeline.score_record``, which edits in place) still takes its JSON
mapping (:meth:`RunRecord.to_json`), which ``harness.finish.finish_run`` builds once. On disk it is strict JSON (no
``NaN``) with the field names below, the same keys ``results.json`` has always used,
written in declaration order.

Foreign records (imported logs, older results files) may carry keys this model does not
declare: they are kept (``extra="allow"``) after the same sanitising, and written back
as they came.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from benchguard.record.context import ScanContext
from benchguard.record.rulesets import RulesetTable
from benchguard.record.steps import Step

RunStatus = Literal["success", "error", "timeout", "interrupted"]
RUN_STATUSES: tuple[RunStatus, ...] = ("success", "error", "timeout", "interrupted")
# Statuses under which the agent did no work the harness can credit: the run scores 0.
NO_CREDIT_STATUSES: tuple[RunStatus, ...] = ("error", "interrupted")


class RunRecord(BaseModel):
    """One run. Fields in the order they are written; every one has a default so a
    foreign record with fewer keys still parses (and keeps only the keys it had)."""

    model_config = ConfigDict(extra="allow", validate_assignment=False)

    # The dynamic rulesets the report names by digest (``record.rulesets``), carried
    # with the record in memory (and to a cluster's client) until it is written beside
    # them: a journal's ``rulesets/``, a results file's table. Never a field.
    _rulesets: RulesetTable = PrivateAttr(default_factory=RulesetTable)

    # -- what ran ------------------------------------------------------------------
    # The task's name and folder (its id in rows), which repetition, which agent config.
    name: str = ""
    folder: str = ""
    iteration: int = Field(default=0, ge=0)
    agent: str = ""
    # The prompt the agent was given.
    input: str = ""
    # -- what the agent did --------------------------------------------------------
    # Its final answer (stdout for our protocol), bounded head and tail.
    output: str = ""
    # Its tool calls, bounded (see the module doc).
    trajectory: list[Step] = Field(default_factory=list)
    # -- how it ended --------------------------------------------------------------
    # success: exited 0; error: could not start, crashed, or the harness failed on it;
    # timeout: killed at its time limit (partial work kept); interrupted: stopped by
    # SIGINT/SIGTERM to the harness. None on foreign records that had no status.
    status: RunStatus | None = None
    # Why the run did not succeed, in one line; None on success.
    error: str | None = None
    # ``error`` plus every transcript problem: what a reader should know, in order.
    errors: list[str] = Field(default_factory=list)
    # Lines of the transcript that could not be read, and what the bounds cut.
    transcript_errors: list[str] = Field(default_factory=list)
    # Some captured surface was cut or unreadable: the detector's scan is incomplete.
    transcript_truncated: bool = False
    # The agent's exit code (None: never started, or killed).
    exit_code: int | None = None
    # -- timings -------------------------------------------------------------------
    # Wall time of the agent process, in seconds (start to the end of its sweep).
    duration_s: float = 0.0
    # ISO-8601 UTC times the run started and finished in the harness.
    started_at: str | None = None
    finished_at: str | None = None
    # Processes of this run still alive after it ended, killed by the harness.
    strays_killed: int = 0
    # -- how it is judged ----------------------------------------------------------
    # For a judge: the task's expected answer and rubric.
    expected_output: str | None = None
    rubric: str | None = None
    # One entry per verification check: {name, role, severity, passed, reason}.
    verification_report: list[dict[str, Any]] = Field(default_factory=list)
    # Score entries by key (record.scores): {score, reason, version?, success?}, kept
    # as stored so a malformed gate entry still reads as fired (fail closed).
    scores: dict[str, Any] = Field(default_factory=dict)
    # What scoring could not do for this record.
    scoring_errors: list[str] = Field(default_factory=list)
    # The detector's report (a record.report.CheatingReport dump); {} when none was
    # made. Kept as stored: record.report.stored_status reads it fail-closed.
    cheating_report: dict[str, Any] = Field(default_factory=dict)
    # Whether detection produced a usable report for this record.
    integrity_checked: bool = False
    # The home entries the pre-run snapshot turned into rules (their sources).
    home_snapshot: list[str] = Field(default_factory=list)
    # Where the agent ran, as the harness knew it (home, working directory, known
    # paths; bounded): any later scan reads the commands as the run's own scan did.
    # None on foreign records and on results files older than schema 4.
    scan_context: ScanContext | None = None
    # -- provenance ----------------------------------------------------------------
    validated: bool = False
    # The agent ran inside bubblewrap.
    sandboxed: bool = False
    # Inputs the prompt granted in the home (bound read-only when sandboxed), and those
    # whose content the run changed anyway (possible only unsandboxed; for review).
    granted_inputs: list[str] = Field(default_factory=list)
    granted_inputs_changed: list[str] = Field(default_factory=list)
    # What the edge parser replaced or refused in this record (module doc).
    record_errors: list[str] = Field(default_factory=list)
    # -- evidence (record.evidence) ---------------------------------------------------
    # Which layers produced evidence for this run, sorted ("audit", "sandbox",
    # "transcript"); empty on foreign records, whose only evidence is their log.
    evidence_sources: list[str] = Field(default_factory=list)
    # The system audit's summary (``record.evidence.SystemAudit``); None: the audit was
    # off. Kept as stored whatever its shape: a malformed summary must read as an
    # incomplete audit (detection.harness_evidence), never be replaced by "no audit".
    system_audit: Any = None
    # The task's command checks ran in the grading sandbox (harness.verification).
    checks_sandboxed: bool = False
    # The harness found the transcript channel "tampered" or "missing"
    # (``record.evidence.TranscriptProblem``); kept as stored, read fail-closed like
    # the audit. Written only when set: most records have none.
    transcript_problem: Any = None
    # What the harness's digests saw change that grades the run: ``{complete, events:
    # [{path, what}], events_total, grading_files, deliverables}`` (harness.tampering);
    # None: not taken (a foreign record). Kept as stored, read fail-closed like the
    # audit (a malformed mark is an incomplete scan).
    tampering: Any = None
    # conftest.py, sitecustomize.py, usercustomize.py and *.pth files left in the
    # workspace: never loaded by the grading box; listed for review, never gating.
    hook_files: list[str] = Field(default_factory=list)
    # The code files the run added or changed, read by the harness at the agent's end:
    # ``{files: [{path, text, truncated}], unread, complete}`` (harness.delivered_code);
    # None: not read (a foreign record, an agent that never started). Kept as stored,
    # read fail-closed by detection.delivered_code.
    delivered_code: Any = None
    # -- confinement and home (harness.confine, harness.home) ------------------------
    # Landlock confined the agent's processes; False: the batch ran --unconfined; None
    # on foreign records (unknown). ``landlock_abi``: the ABI used (None unconfined).
    confined: bool | None = None
    landlock_abi: int | None = None
    # The launcher's seccomp filter (harness.seccomp): ``{filter, denied, errno}``; None
    # on foreign records and records from before it (unknown).
    seccomp: Any = None
    # "fresh" (a copy-on-write home of its own) or "persistent" (the shared home).
    home_mode: str | None = None
    # Fresh home: what the run wrote to it, ``{method, kept, files, bytes, written,
    # deleted, listed_complete, complete, problems}`` (names as FileName text; ``kept``
    # relative to the batch directory, None when discarded). None otherwise.
    home_writes: Any = None
    # The run's disk budget (harness.disk_budget): ``{bytes, enforced_by,
    # mount_unavailable, peak_bytes, exceeded}``; None on foreign records (unknown).
    disk_budget: Any = None
    # -- harness integrity (harness.prompt_delivery) ------------------------------------
    # What the agent was handed as its prompt: ``{task: {sha256, bytes}, delivered:
    # [{channel, index, sha256, bytes}], model_request: {sha256, bytes} | None, status:
    # "intact" | "altered", problems}``; None: not recorded (a foreign record, an agent
    # that never started).
    prompt_delivery: Any = None

    def to_json(self, *, complete: bool = True) -> dict[str, Any]:
        """The record as the JSON object written to disk.

        ``complete=False`` writes only the fields the record was given (a foreign
        record keeps its own key set); the harness's records are always complete.
        The report is not copied (it is JSON already, sanitised at the edge); it names
        its dynamic ruleset by digest, held in :attr:`rulesets`.
        """
        exclude = {"cheating_report"}
        if "transcript_problem" not in self.model_fields_set:
            exclude.add("transcript_problem")
        dumped = self.model_dump(mode="json", exclude_unset=not complete, exclude=exclude)
        if not complete and "cheating_report" not in self.model_fields_set:
            return dumped
        ordered: dict[str, Any] = {}
        for key, value in dumped.items():
            if "cheating_report" not in ordered and key not in _BEFORE_REPORT:
                ordered["cheating_report"] = self.cheating_report
            ordered[key] = value
        ordered.setdefault("cheating_report", self.cheating_report)
        return ordered

    @property
    def rulesets(self) -> RulesetTable:
        """The table holding the dynamic ruleset this record's report names."""
        return self._rulesets

    @property
    def label(self) -> str:
        """``folder#iteration``: how messages name a run."""
        return f"{self.folder or self.name or '?'}#{self.iteration}"


# The fields written before ``cheating_report`` (declaration order).
_BEFORE_REPORT = frozenset(
    list(RunRecord.model_fields)[: list(RunRecord.model_fields).index("cheating_report")]
)


def record_task_folder(record: Mapping[str, Any]) -> str:
    """The task a record belongs to: its ``folder``, else its ``name``, else "unknown"."""
    for key in ("folder", "name"):
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return "unknown"


def record_iteration(record: Mapping[str, Any]) -> int:
    """The record's ``iteration``, or 0 when it is missing or not a non-negative int."""
    value = record.get("iteration")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
