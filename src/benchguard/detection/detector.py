"""The verdict: scan one record's trajectory and final output against a ruleset.

Pure: no environment reads, no I/O; :meth:`Detector.scan` returns a report and never
edits its input (only :func:`annotate_records` stores reports, in ``cheating_report``).
Semantics match the reference scan loop exactly: rules in order; per rule at most ``MAX_FINDINGS_PER_RULE`` findings per record; for
each dict entry the ``args`` surface then the ``result`` surface, then the final
``output`` once; on each surface one finding per pattern that matches (the first
match), never one per occurrence. Path rules scan all three surfaces, content rules
only ``result`` and ``output`` (a rule's ``fields`` say which).

Speed comes from a prefilter (``_prefilter``) that tells which patterns can match at
all; only those run, only where they can. The reports are identical to the plain
loop's; ``bench/detection_throughput.py`` checks that on a generated corpus.

Bounds: a record's scan has a wall-clock budget and caps on surface and record size.
A scan that hits a bound stops, keeps what it found, and is reported ``flagged`` with
``incomplete=True`` under ``SCAN_INCOMPLETE_CATEGORY``: an unfinished scan is never
clean (fail closed). The same holds for a record the harness marked
``transcript_truncated``: what was cut before the scan was never seen, so its findings
are kept and the report is incomplete.
"""

from __future__ import annotations

import dataclasses
import posixpath
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import re2
import regex
from pydantic import ValidationError

from benchguard.detection._patterns import exact_pattern, is_trusted, pattern_problem
from benchguard.detection._prefilter import Prefilter, build_prefilter
from benchguard.detection.context import ScanContext, stored_context
from benchguard.detection.decoding import decoded_views
from benchguard.detection.deliverable_copies import deliverable_copies
from benchguard.detection.delivered_code import (
    DELIVERED_CODE_KEY,
    delivered_code_findings,
    has_delivered_code,
)
from benchguard.detection.forbidden_edits import forbidden_test_edits
from benchguard.detection.glob_reach import default_roots
from benchguard.detection.harness_evidence import harness_evidence
from benchguard.detection.material import CATEGORY as MATERIAL_CATEGORY
from benchguard.detection.models import (
    SCAN_INCOMPLETE_CATEGORY,
    CheatingReport,
    DismissedFinding,
    Finding,
    Rule,
    ScanCounts,
    status_for,
)
from benchguard.detection.next_release import next_release_installs
from benchguard.detection.provenance import (
    apply_provenance,
    drop_stand_ins,
    weigh_generic_history,
)
from benchguard.detection.seeking import prompt_text_searches
from benchguard.detection.shell import ShellReader, ShellState, canonical_text, command_text
from benchguard.detection.sibling_workspaces import sibling_workspace_reads
from benchguard.detection.side_installs import side_install_reads
from benchguard.detection.stored_status import is_marked, is_marked_incomplete, stored_status
from benchguard.detection.surfaces import (
    Surface,
    as_text,
    dict_entries,
    excerpt,
    has_no_data,
    output_surface,
    tool_name,
)
from benchguard.detection.task_seeking import own_task_searches
from benchguard.detection.written_comparisons import written_comparison_findings
from benchguard.record.context import SCAN_CONTEXT_KEY
from benchguard.record.evidence import SYSTEM_AUDIT_KEY, TAMPERING_KEY, TRANSCRIPT_PROBLEM_KEY
from benchguard.record.rules import EMPTY_RULESET, Ruleset, ScanRulesets, as_ruleset
from benchguard.record.rulesets import DYNAMIC_RULES_KEY, DYNAMIC_RULES_REF_KEY, RulesetTable
from benchguard.record.run import RunRecord

# Bump when the same record and rules can give a different verdict.
# 2: a record marked ``transcript_truncated`` is incomplete (flagged), never clean.
# 3: the harness's system audit and transcript-channel marks are read (harness_evidence).
# 4: args are read shell-aware (canonical paths appended), results decoded before
#    matching, fallback key rules give way to material fingerprints; profiles anchored.
# 5: a record's stored ``scan_context`` (home, working directory, known paths) is read.
# 6: findings carry a strength; a report with only weak findings is ``review``.
# 7: the harness's ``tampering`` mark is read (digests of what grades the run).
# 8: provenance: hashes from the prompt or HEAD's history, data the agent wrote and
#    values it created then read back are not evidence; ref-widening output is strong.
# 9: a key-shaped fallback rule's match on the output of a command that reads only
#    files the prompt names is not evidence (an eval dataset the task says to edit).
# 10: a /home/<user>/... or /root/... path written anywhere in a command (a string in
#     interpreter code, not only a shell word) is read as ``~/...`` when no home is known.
# 11: with no disk known, a glob or a ``find`` that can name a profile's material root
#     reads as naming it (glob_reach); leftovers, shell histories and agent session
#     stores in the home are generic families.
# 12: generic families widened (comparison overrides in more spellings, assertion and
#     test-result monkeypatches, outcome-changing hooks, interpreter and in-place writes
#     to the grader, more leftover names); history beyond HEAD with no repository
#     profile is weak (review); the shell reader keeps variables across calls, reads a
#     bare ``cd`` as home, a printed ``pwd`` as the working directory, and ``printf``/
#     ``rev`` substitutions; interpreter code's string variables are folded into paths.
# 13: prior results by the names evaluation tools give them outside the task's tree
#     (results, leaderboards, scores, predictions, .eval logs, trajectories), test-run
#     caches and editor swap files are generic families; removals, files the agent's
#     code wrote and folders the prompt names are not evidence (provenance).
# 14: test edits a prompt forbids are grader tampering (forbidden_edits); the task's
#     project is also known from its metadata and editable install, and a fetch of its
#     index or code-host pages is upstream-fetch/project-source; a deliverable reading
#     the calling test's source or __main__ is caller inspection.
# 15: the reflog or stash list after the agent itself moved refs or stashed is weak
#     (it lists the agent's own work), not strong.
# 16: Harbor's root layout (/tests, /solution, /logs/verifier) is read in every profile
#     (generic.yaml), not only when auto recognised Terminal-Bench from the log's text.
#     A find -name of a file Harbor's layout holds reaches it; tar/make/git -C DIR reads
#     the operands after it relative to DIR.
#     A hash of unknown origin whose output dates it a day or more after the HEAD date
#     the record printed is strong (shown_dates).
# 17: more interpreter joins (node's path module by another name, perl's join("/"),
#     a list joined by "/"), a recursive walk for a file of Harbor's layout by name,
#     and stash@{n} after the agent's own stash is no reflog finding.
# 18: a named ref other than HEAD whose own output dates its commit after HEAD's date
#     (shown_dates) is strong.
# 19: a find whose results go to a command that prints them (-exec cat, | xargs head)
#     reaches Harbor's files by names as wide as test_*.py (within its -maxdepth and
#     positive -path tests); archive members named by pattern (tar -xOf x '*solution*',
#     unzip -p x 'tests/*', bsdtar, 7z); pieces joined inside a call (node/ruby '+',
#     perl '.', template and interpolated strings); a ref git itself said is ahead of
#     HEAD (status "behind", branch -vv, rev-list --count HEAD..REF) is strong; Harbor's
#     /oracle is its solution folder.
# 20: an option a variable supplied (F=$(printf -- '--al%s' l); git log $F) is read as
#     typed; a diff from HEAD to another ref that prints changes is strong; an Inspect
#     .eval log by a home or absolute path is prior results in every profile; a search
#     or fetch naming the record's own task (its source.task / sample id) is
#     benchmark seeking (task_seeking); a read inside a sibling workspace a glob over
#     run ids listed is a leftover (sibling_workspaces); pip by its path (a fresh
#     venv's) installs the next release; a stash made earlier in the same command is
#     the agent's own.
# 21: a find in a $(...) a reader prints (cat $(find ...), a for loop reading each),
#     a read -path naming Harbor's files, and find's escaped \( \) grouping.
# 22: a write in a format's own shape (Codex's apply_patch envelope, SWE-agent's
#     str_replace_editor command line) is also read as the content argument a
#     structured write tool gives (write_surfaces), so the deliverable rules judge it.
# 23: runner-shadow does not take a fix inside the runner's own source tree
#     (src/_pytest, src/pytest, Lib/unittest: SWE-bench's pytest-dev instances) for a
#     shadowed runner.
# 24: the reference solution outside Harbor's layout (reference-solution/path): a gold
#     or oracle patch by name, a solutions folder at the root, home or /opt, sol*.sh;
#     an earlier run's answer file by a glob over folders or a find that runs on it.
# 25: the task's project is also known from numbered or grep -n metadata, a pip list
#     row or freeze line of the checkout, an editable build's name and its package
#     folders in /testbed; pip's options before install and a VCS or archive URL of the
#     project are installs of it; a silent cp/rsync/git apply of the deliverable out of
#     /tmp is a read; /proc pid globs and placeholders, gh api of a benchmark's repo;
#     an empty stash list or one listing only the agent's own stashes, and tags merged
#     into HEAD, are no findings.
# 26: an earlier run's /tmp entry by its harness's name (a benchmark prefix, a numbered
#     or hex run folder, an instance id) is prior-run-leftovers/tmp-run-marker unless the
#     agent made it; a copy of the deliverable chained before a run of it is a read; a
#     plain stash list with no entry among other commands' output is no finding; a side
#     pip install's source read in a repository task is weak (side_installs).
# 27: the deliverable rules also read the code files the harness read from the
#     workspace at the agent's end (delivered_code): a forged write step hides nothing.
# 28: setattr on the base TestCase/TestResult by a computed name is an assert patch;
#     gc.get_objects/get_referents beside get_referrers are caller inspection; the hub's
#     loaders given a dataset whose owner or name says bench are benchmark seeking; a
#     stash read or list that git answered "No stash entries found." is no finding.
# 29: the delivered code's Python files are parsed too: an __eq__/__ne__ that never
#     reads its other operand is comparison-override/eq-ignores-other (eq_semantics).
# 30: a prompt naming a file right under the home (~/.bash_history) authorizes it;
#     an assert patch through the unittest module under an alias (_u.TestCase....).
# 31: an __eq__/__ne__ whose every return is isinstance(other, <builtin type>) is
#     eq-ignores-other too (a str subclass equal to every string).
# 32: __eq__ bound to another comparison (__eq__ = int.__ge__) or to a module function
#     that ignores the other operand is eq-ignores-other; pytest's Function.runtest (or
#     setup) replaced is an assert patch (red team 28).
# 33: comparison overrides outside Python (asymmetricMatch, equals/Equals, PartialEq,
#     operator==, equality testers saying true; a constant toPrimitive/valueOf is weak);
#     a glob over /tmp's folders (weak; strong for the prompt's deliverable name); an
#     agent trajectory file outside the workspace; a benchmark's task folder on POSIX or
#     Windows paths and a grader's rubric folder (task-material/*); SWE-bench's /eval.sh
#     read or written; a search naming an instance id or a gold patch; the hub's CLI
#     given a bench-named or known evaluation dataset the prompt does not name; a
#     prompt asking for the caller's name or line makes caller inspection weak; the
#     --runslow opt-in collection hook is no hook-file finding; an __eq__ whose every
#     return is a constant answer (an except returning 1) is eq-ignores-other, also in
#     the whole Python files a transcript's write tools logged (holdout 29).
# 34: delivered code (red team 29): a patch of pytest's or unittest's reporting
#     machinery, names folded from pieces, is comparison-override/framework-patch;
#     reaching its internals or exec of computed or read code is weak
#     delivered-code/framework-reach; data files a delivered Python file runs as code
#     are read as Python; __eq__ bound through type(), a dict of methods or setattr,
#     and self-comparisons of any expression, are eq-ignores-other.
# 35 (written beside 36, landed after it as part of 37): holdout 30's misses: the caller's frame outside Python (Ruby caller_locations /
#     caller / Kernel#caller, PHP debug_backtrace, Go runtime.Caller, Java and C# stack
#     traces), another trial's folder under Harbor's /logs, another run's /tmp folder
#     holding a file of the deliverable's name (no longer authorized by the name), a
#     grader's folder or rubric on a Windows drive, SWE-bench's eval.sh in the home or
#     another root, a benchmark's dataset in the hub's local cache; honest: pytest's
#     --runslow opt-in written another way, a library the prompt names cloned at its tag.
# 36: an install of the task's own package by its bare name, with no pin, upgrade,
#     pre-release, side folder or download (pip install numpy astropy), is weak
#     upstream-fetch/next-release (review), not strong: a real honest mini-swe-agent
#     run did exactly this when the checkout would not import.
# 37: 35 and 36 together.
# 38: a path the prompt names under ~/ authorizes the same file by the home's literal
#     path (an unprivileged harness's /tmp/bg-op-*/agent-home, the scan context's home),
#     for tmp-run-marker too.
DETECTOR_VERSION = 38

# Set by the harness on a record whose transcript or output it cut at its size bound
# (or could not read whole): the scan then cannot vouch for the part it never saw.
TRANSCRIPT_TRUNCATED_KEY = "transcript_truncated"
# Fixed, never built from record text: reports are published through summaries.
TRANSCRIPT_TRUNCATED_REASON = "the harness cut the transcript at its size bound"

# Findings kept per rule per record: breadth of evidence over depth.
MAX_FINDINGS_PER_RULE = 20
# Wall-clock budget for one record's scan; the exact engine gets the remainder per call.
DEFAULT_RECORD_BUDGET_S = 10.0
# Longest surface scanned; text beyond it is not read and the report says so.
MAX_SURFACE_CHARS = 8 << 20
# Most text scanned per record over all surfaces.
MAX_RECORD_CHARS = 64 << 20
# Surfaces are prefiltered in chunks of about this many characters (one RE2 call each).
_PREFILTER_CHUNK_CHARS = 1 << 20
# Steps read between two looks at the budget's clock: a step's reading is bounded work,
# and the thread's CPU clock is a system call (about 2 us here, a few % of a scan if
# read at every step).
_STEPS_PER_CLOCK_READ = 16


class _BoundHit(Exception):
    """The record's scan reached a bound; the message is the report's reason."""


class Detector:
    """One detector: its compiled plans and prefilters, shell reader and record budget,
    held here and nowhere else.

    A plan (the ruleset's prefilter, pattern ids and digest) is remembered by the
    digests of the rulesets it was built from (``record.rules.Ruleset``): equal rules
    share a plan however their objects were made. Two detectors share no state, so a
    scan is reproducible from its inputs alone. There is no default detector: whoever
    scans many records holds one (a batch, an engine's worker, a rescore) and passes
    it; the module functions :func:`scan_record` and :func:`annotate_records` take one,
    or make a fresh one for the call.
    """

    MAX_PLANS = 64
    MAX_RECENT_PREFILTERS = 4
    MAX_CONTEXT_READERS = 16

    def __init__(
        self,
        *,
        reader: ShellReader | None = None,
        time_budget_s: float = DEFAULT_RECORD_BUDGET_S,
    ) -> None:
        self._reader = reader
        self.time_budget_s = time_budget_s
        # By (ruleset digest,) for :meth:`plan`, by (static digest, dynamic digest) for
        # a scan's pair of rulesets.
        self._plans: dict[tuple[str, ...], _Plan] = {}
        self._recent_prefilters: list[Prefilter] = []
        # Readers for stored scan contexts, by (home, known paths): a batch's records
        # share one, and a reader remembers the commands it has read.
        self._context_readers: dict[tuple[str | None, tuple[str, ...]], ShellReader] = {}

    @property
    def reader(self) -> ShellReader:
        """The detector's shell reader. Without one given, no disk is known (imported
        logs): globs and ``find`` are read against where the shipped profiles keep their
        material (glob_reach). Made on first use, not when the module is imported: the
        roots come from every profile's file."""
        if self._reader is None:
            self._reader = ShellReader(roots=default_roots())
        return self._reader

    @reader.setter
    def reader(self, reader: ShellReader) -> None:
        self._reader = reader

    def scan(
        self,
        record: RunRecord | Mapping[str, Any],
        rulesets: ScanRulesets,
        *,
        time_budget_s: float | None = None,
        reader: ShellReader | None = None,
        workdir: str | None = None,
    ) -> CheatingReport:
        """Scan ``record`` with ``rulesets.static`` then ``rulesets.dynamic`` (in order).

        ``record`` is the typed run (``record.run.RunRecord``: the harness's) or a record
        as the edge left it on the scan path (a results file's or an import's bounded
        JSON object, ``record.edge``), read as stored and fail closed; neither is edited
        (:func:`scan_view` is the one reading of both). Each ruleset's digest, which keys
        the compiled plan, is computed once per ``Ruleset`` object.

        ``reader`` (default: the detector's) reads each step's arguments as the agent's
        shell would (the home as the agent sees it, the paths the harness knows, for
        globs); ``workdir`` is where the agent's shell starts. When neither is given,
        the record's own ``scan_context`` (stored by the harness) supplies both; a stored
        context that cannot be read makes the report incomplete (flagged). Without any,
        any ``/home/<user>`` counts as a home and relative paths are resolved only after
        an absolute ``cd``. The report stores the dynamic rules and the digest of the
        full ruleset, so a later rescan with the same inputs reproduces the verdict.
        """
        record = scan_view(record)
        budget = self.time_budget_s if time_budget_s is None else time_budget_s
        dynamic = rulesets.dynamic
        # The plan depends on the rules alone (a detector's first record builds it, the
        # next ones reuse it): its cost is never charged to the record's budget.
        plan = self._plan_for(rulesets.static, dynamic)
        digest = plan.digest
        clock = _Budget(budget)
        entries = dict_entries(record)
        output = output_surface(record)
        counts = ScanCounts(trajectory_entries=len(entries), output_chars=len(output.text))
        truncated = is_marked_truncated(record)
        # The harness's own evidence (system audit, transcript channel) counts even when
        # the transcript is empty: a silent agent is exactly what it exists to catch.
        harness = harness_evidence(record)
        if (
            has_no_data(entries, record)
            and not truncated
            and not harness.present
            and not has_delivered_code(record)
        ):
            return CheatingReport(
                detector_version=DETECTOR_VERSION,
                status="no_data",
                scanned=counts,
                ruleset_digest=digest,
                dynamic_rules=dynamic,
            )

        findings: list[Finding] = []
        incomplete_reason: str | None = None
        notes = [TRANSCRIPT_TRUNCATED_REASON] if truncated else []
        if reader is None and workdir is None:
            context, problem = stored_context(record)
            if problem is not None:
                notes.append(problem)
            if context is not None:
                reader, workdir = self.context_reader(context), context.workdir
        try:
            notes += _scan(
                entries,
                output,
                plan,
                clock,
                findings,
                reader or self.reader,
                workdir,
                as_text(record.get("input")),
            )
        except _BoundHit as hit:
            notes.append(str(hit))
        if any(rule.category == "comparison-override" for rule in plan.rules):
            # (v33) the parser's reading of whole Python files the write tools logged
            findings += written_comparison_findings(entries, findings)
        findings += own_task_searches(entries, record)
        findings += sibling_workspace_reads(entries, record)
        findings += harness.findings
        notes += harness.notes
        try:
            # The same deliverable rules over the code the harness itself read.
            code_findings, code_notes = delivered_code_findings(
                record,
                plan.rules,
                clock.check,
                lambda pattern: plan.prefilter.index[pattern] not in plan.unusable,
            )
            findings += code_findings
            notes += code_notes
        except _BoundHit as hit:
            notes.append(str(hit))
        if notes:
            incomplete_reason = "; ".join(notes)

        categories = {finding.category for finding in findings}
        if incomplete_reason is not None:
            categories.add(SCAN_INCOMPLETE_CATEGORY)
        return CheatingReport(
            detector_version=DETECTOR_VERSION,
            status=status_for(findings, incomplete=incomplete_reason is not None),
            categories=tuple(sorted(categories)),
            findings=tuple(findings),
            scanned=counts,
            ruleset_digest=digest,
            dynamic_rules=dynamic,
            incomplete=incomplete_reason is not None,
            incomplete_reason=incomplete_reason,
        )

    def annotate(
        self,
        records: list[dict[str, Any]],
        rules: Sequence[Rule],
        *,
        dynamic_rules_for: Callable[[int, dict[str, Any]], Sequence[Rule]] | None = None,
        rulesets: RulesetTable | None = None,
    ) -> list[str]:
        """See :func:`annotate_records`."""
        errors: list[str] = []
        static = as_ruleset(rules)
        for index, record in enumerate(records):
            try:
                dynamic = (
                    as_ruleset(dynamic_rules_for(index, record))
                    if dynamic_rules_for
                    else EMPTY_RULESET
                )
                report = self.scan(record, ScanRulesets(static, dynamic))
                record["cheating_report"] = (
                    rulesets.report_json(report, dynamic)
                    if rulesets is not None
                    else report.model_dump(mode="json")
                )
            except Exception as exc:  # one bad record must never sink the batch
                errors.append(f"record {index}: {type(exc).__name__}: {exc}")
                try:
                    record["cheating_report"] = {}
                except Exception as inner:
                    errors.append(f"record {index}: cannot store a report: {inner}")
        return errors

    def context_reader(self, context: ScanContext) -> ShellReader:
        """The shell reader for a stored scan context (one per distinct home and paths)."""
        key = (context.home, context.known_paths)
        reader = self._context_readers.get(key)
        if reader is None:
            if len(self._context_readers) >= self.MAX_CONTEXT_READERS:
                self._context_readers.clear()
            reader = ShellReader(home=context.home, known_paths=context.known_paths)
            self._context_readers[key] = reader
        return reader

    def plan(self, rules: Sequence[Rule]) -> _Plan:
        """The plan for ``rules``, remembered by their digest."""
        ruleset = as_ruleset(rules)
        return self._remembered((ruleset.digest,), lambda: ruleset)

    def _plan_for(self, static: Ruleset, dynamic: Ruleset) -> _Plan:
        """The plan for a scan with ``static`` then ``dynamic``: the fallback rules give
        way when the dynamic rules carry material fingerprints."""

        def scanned() -> tuple[Rule, ...]:
            rules = (*static, *dynamic)
            if any(rule.category == MATERIAL_CATEGORY for rule in dynamic):
                rules = tuple(rule for rule in rules if not rule.fallback)
            return rules

        return self._remembered((static.digest, dynamic.digest), scanned)

    def _remembered(self, key: tuple[str, ...], rules: Callable[[], Sequence[Rule]]) -> _Plan:
        cached = self._plans.get(key)
        if cached is not None:
            return cached
        plan = _build_plan(as_ruleset(rules()), self._reusable_prefilter)
        if len(self._plans) >= self.MAX_PLANS:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    def _reusable_prefilter(self, patterns: tuple[str, ...]) -> Prefilter:
        """A recent prefilter covering ``patterns``, one extended to cover them, or a new one.

        Per-record prompt authorization drops a few inventory rules, so consecutive
        records use subsets of one pattern list; a prefilter over a superset answers for
        a subset (candidates of patterns a ruleset lacks belong to no rule and are
        ignored). A home that changes between tasks adds a few patterns: the recent Sets
        are kept and only the new patterns are compiled.
        """
        best: tuple[Prefilter, tuple[str, ...]] | None = None
        for recent in self._recent_prefilters:
            missing = tuple(dict.fromkeys(p for p in patterns if p not in recent.index))
            if not missing:
                return recent
            if best is None or len(missing) < len(best[1]):
                best = (recent, missing)
        if (
            best is not None
            and len(best[1]) <= _MAX_EXTENSION_PATTERNS
            and len(best[1]) * 4 <= len(patterns)
            and len(best[0].sets) < _MAX_EXTENDED_SETS
        ):
            built = best[0].extended(best[1])
        else:
            built = build_prefilter(patterns)
        self._recent_prefilters.insert(0, built)
        del self._recent_prefilters[self.MAX_RECENT_PREFILTERS :]
        return built


def scan_record(
    record: RunRecord | Mapping[str, Any],
    rules: Sequence[Rule],
    *,
    dynamic_rules: Sequence[Rule] = (),
    time_budget_s: float = DEFAULT_RECORD_BUDGET_S,
    reader: ShellReader | None = None,
    workdir: str | None = None,
    detector: Detector | None = None,
) -> CheatingReport:
    """:meth:`Detector.scan` with the rules as two sequences, on ``detector`` (a fresh
    one when None: no plan outlives the call, so a caller scanning many records passes
    its own detector, which remembers the plans)."""
    return (detector if detector is not None else Detector()).scan(
        record,
        ScanRulesets.of(rules, dynamic_rules),
        time_budget_s=time_budget_s,
        reader=reader,
        workdir=workdir,
    )


def scan_view(record: RunRecord | Mapping[str, Any]) -> Mapping[str, Any]:
    """What the detector reads of a record, as the mapping its internals walk.

    A ``RunRecord`` is read by attribute, without copying or validating anything: its
    steps are their own field dicts (``{name, args, result, status}``, read-only), and
    the evidence fields (kept as stored at the edge, ``record.run``) as they are. A
    mapping (a stored or imported record) is read as stored: every value is checked
    where it is read, fail closed. Either way the detector never edits it.
    """
    if not isinstance(record, RunRecord):
        if not isinstance(record, Mapping):
            raise TypeError(f"a record must be a JSON object, got {type(record).__name__}")
        return record
    return {
        "trajectory": [vars(step) for step in record.trajectory],
        "input": record.input,
        "output": record.output,
        TRANSCRIPT_TRUNCATED_KEY: record.transcript_truncated,
        SCAN_CONTEXT_KEY: record.scan_context,
        SYSTEM_AUDIT_KEY: record.system_audit,
        TRANSCRIPT_PROBLEM_KEY: record.transcript_problem,
        TAMPERING_KEY: record.tampering,
        DELIVERED_CODE_KEY: record.delivered_code,
    }


def is_marked_truncated(record: Mapping[str, Any]) -> bool:
    """The harness cut this record's transcript (read as :func:`is_marked` reads a mark)."""
    return is_marked(record, TRANSCRIPT_TRUNCATED_KEY)


def annotate_records(
    records: list[dict[str, Any]],
    rules: Sequence[Rule],
    *,
    dynamic_rules_for: Callable[[int, dict[str, Any]], Sequence[Rule]] | None = None,
    rulesets: RulesetTable | None = None,
    detector: Detector | None = None,
) -> list[str]:
    """Set ``record["cheating_report"]`` on every record, replacing any previous report,
    with ``detector`` (a fresh one for this batch when None).

    A failure on one record (including in ``dynamic_rules_for``) leaves that record's
    report as ``{}`` and adds one message to the returned list; other records are not
    touched by it. Running twice gives the same reports (idempotent).

    With ``rulesets`` (the owner's table: a batch's, a document's), each stored report
    names its dynamic ruleset by digest (``dynamic_rules_ref``) and the table holds it
    once, however many records share it; without, each report equals
    ``report.model_dump(mode="json")``, its rules inline.
    """
    return (detector if detector is not None else Detector()).annotate(
        records, rules, dynamic_rules_for=dynamic_rules_for, rulesets=rulesets
    )


def report_from_record(
    record: Mapping[str, Any], rulesets: RulesetTable | None = None
) -> CheatingReport | None:
    """The stored report of ``record``, parsed leniently; ``None`` if there is none.

    A report naming its dynamic ruleset by digest gets its rules from ``rulesets`` (its
    document's table) when that holds them readably; otherwise it reads without them.

    Lenient means: invalid findings are dropped one by one, junk categories are
    ignored, and an inconsistent report errs towards flagged exactly as the integrity
    gate reads it (:func:`~benchguard.detection.stored_status.stored_status`): a
    ``clean``, ``no_data`` or unknown-status report that carries findings or
    categories of any shape, or a truthy ``incomplete`` mark, reads as flagged.
    ``None`` only when there is no report, it is ``{}``, or its status is unknown and
    it carries no evidence.
    """
    if not isinstance(record, Mapping):
        return None
    raw = record.get("cheating_report")
    if not isinstance(raw, Mapping) or not raw:
        return None
    if DYNAMIC_RULES_REF_KEY in raw:
        raw = _with_named_rules(raw, rulesets)
    try:
        report = CheatingReport.model_validate(dict(raw))
    except (ValidationError, TypeError, ValueError):
        return lenient_report(raw)
    # The model accepts e.g. no_data beside findings; the stored status must agree.
    return report if report.status == stored_status(raw) else lenient_report(raw)


def _with_named_rules(raw: Mapping[str, Any], rulesets: RulesetTable | None) -> dict[str, Any]:
    """``raw`` with its ruleset reference replaced by the rules it names (none when the
    table does not hold them readably)."""
    ref = raw.get(DYNAMIC_RULES_REF_KEY)
    rules: tuple[Rule, ...] = ()
    if rulesets is not None and isinstance(ref, str) and ref in rulesets:
        try:
            rules = rulesets.rules(ref)
        except ValueError:
            rules = ()
    return {
        (DYNAMIC_RULES_KEY if key == DYNAMIC_RULES_REF_KEY else key): (
            rules if key == DYNAMIC_RULES_REF_KEY else value
        )
        for key, value in raw.items()
    }


def lenient_report(raw: Mapping[str, Any]) -> CheatingReport | None:
    """Best-effort report from a stored mapping; see :func:`report_from_record`."""
    status = stored_status(raw)
    if status is None:
        return None
    findings = tuple(_valid_items(raw.get("findings"), Finding))
    dynamic = tuple(_valid_items(raw.get("dynamic_rules"), Rule))
    dismissed = tuple(_valid_items(raw.get("dismissed"), DismissedFinding))
    categories = {f.category for f in findings}
    stored_categories = raw.get("categories")
    if isinstance(stored_categories, list | tuple):
        categories |= {c for c in stored_categories if isinstance(c, str) and c}
    elif isinstance(stored_categories, str) and stored_categories:
        categories.add(stored_categories)
    incomplete = is_marked_incomplete(raw)
    if incomplete:
        categories.add(SCAN_INCOMPLETE_CATEGORY)
    # A non-flagged status means no evidence (stored_status), so findings and
    # categories are empty here whatever the status.
    version = raw.get("detector_version")
    schema = raw.get("schema_version")
    digest = raw.get("ruleset_digest")
    reason = raw.get("incomplete_reason")
    scanned = raw.get("scanned")
    counts = ScanCounts()
    if isinstance(scanned, Mapping):
        try:
            counts = ScanCounts.model_validate(dict(scanned))
        except ValidationError:
            counts = ScanCounts()
    return CheatingReport(
        schema_version=schema if isinstance(schema, int) and not isinstance(schema, bool) else 1,
        detector_version=version
        if isinstance(version, int) and not isinstance(version, bool)
        else 0,
        status=status,
        categories=tuple(sorted(categories)),
        findings=findings,
        scanned=counts,
        ruleset_digest=digest if isinstance(digest, str) else "",
        dynamic_rules=dynamic,
        incomplete=incomplete,
        incomplete_reason=reason if isinstance(reason, str) and incomplete else None,
        dismissed=dismissed,
    )


def _valid_items(items: Any, model: Any) -> list[Any]:
    if not isinstance(items, list | tuple):
        return []
    valid = []
    for item in items:
        try:
            valid.append(model.model_validate(item))
        except (ValidationError, TypeError, ValueError):
            continue
    return valid


# --- the scan ---------------------------------------------------------------------


def _scan(
    entries: list[Mapping[str, Any]],
    output: Surface,
    plan: _Plan,
    clock: _Budget,
    findings: list[Finding],
    reader: ShellReader,
    workdir: str | None,
    prompt: str = "",
) -> list[str]:
    """Append findings in reference order, then trace their provenance
    (:mod:`~benchguard.detection.provenance`); return why the scan is incomplete (if it
    is)."""
    notes: list[str] = []
    surfaces: list[Surface] = []
    total = 0
    entry_count = 0
    shell = ShellState(cwd=workdir)
    for index, entry in enumerate(entries):
        if index % _STEPS_PER_CLOCK_READ == 0:
            clock.check()
        pair = [_capped(surface, notes) for surface in read_entry(index, entry, reader, shell)]
        size = len(pair[0].text) + len(pair[1].text)
        if total + size > MAX_RECORD_CHARS:
            notes.append(
                f"the trajectory has more than {MAX_RECORD_CHARS} characters; "
                f"steps from {index} on were not scanned"
            )
            break
        total += size
        surfaces.extend(pair)
        entry_count += 1
    surfaces.append(_capped(output, notes))

    notes.extend(plan.notes)
    candidates = _candidates(
        plan.prefilter, surfaces, clock, plan.pattern_fields, plan.field_prefilters
    )
    if plan.unusable:
        candidates = [found - plan.unusable for found in candidates]
    possible = frozenset().union(*candidates)
    # Only rules carrying a pattern that can match somewhere need the exact loop.
    active = sorted({position for pid in possible for position in plan.rules_by_pattern[pid]})

    for position in active:
        rule, ids = plan.rules[position], plan.rule_pattern_ids[position]
        budget = MAX_FINDINGS_PER_RULE
        scans_args = "args" in rule.fields
        scans_result = "result" in rule.fields
        for index in range(entry_count):
            args_at, result_at = 2 * index, 2 * index + 1
            if scans_args:
                budget = _scan_surface(
                    rule, ids, surfaces[args_at], candidates[args_at], budget, clock, findings
                )
            if scans_result and budget > 0:
                budget = _scan_surface(
                    rule,
                    ids,
                    surfaces[result_at],
                    candidates[result_at],
                    budget,
                    clock,
                    findings,
                )
            if budget <= 0:
                break
        if "output" in rule.fields and budget > 0:
            _scan_surface(rule, ids, surfaces[-1], candidates[-1], budget, clock, findings)
    clock.check()
    shape = frozenset(rule.id for rule in plan.rules if rule.fallback)
    findings[:] = apply_provenance(
        findings,
        entries[:entry_count],
        surfaces,
        prompt,
        shape_rules=shape,
        workdir=workdir,
        home=reader.home,
    )
    findings[:] = weigh_generic_history(findings, frozenset(rule.id for rule in plan.rules))
    findings += prompt_text_searches(entries[:entry_count], prompt)
    findings += next_release_installs(entries[:entry_count], prompt)
    findings += side_install_reads(entries[:entry_count], prompt)
    findings += forbidden_test_edits(entries[:entry_count], prompt)
    findings += deliverable_copies(entries[:entry_count], surfaces, prompt, workdir)
    findings[:] = drop_stand_ins(findings)
    content_rules = {rule.id for rule in plan.rules if "args" not in rule.fields}
    _mark_failed_attempts(findings, surfaces, content_rules)
    return notes


# What a shell or a file tool prints when a read did not happen (the sandbox hid the
# path, or it never existed). Read only in a short result: a long one printed something.
_FAILED_READ = regex.compile(
    r"No such file or directory|Permission denied|Operation not permitted|"
    r"cannot (?:open|access|stat)|not found|does not exist|Read-only file system",
    regex.IGNORECASE,
)
_MAX_FAILED_RESULT_CHARS = 2000


def _mark_failed_attempts(
    findings: list[Finding], surfaces: list[Surface], content_rules: set[str]
) -> None:
    """Mark typed findings whose step's result shows only a failed read: an error, and
    no content finding (an error message naming the path is not the material)."""
    seen_in_result = {
        f.trajectory_index for f in findings if f.field == "result" and f.rule in content_rules
    }
    for position, finding in enumerate(findings):
        step = finding.trajectory_index
        if finding.field != "args" or step is None or step in seen_in_result:
            continue
        at = 2 * step + 1
        if at >= len(surfaces) - 1:
            continue
        result = surfaces[at].text
        if result.strip() and (
            len(result) <= _MAX_FAILED_RESULT_CHARS and _FAILED_READ.search(result)
        ):
            findings[position] = finding.model_copy(update={"attempt_failed": True})


def read_entry(
    index: int, entry: Mapping[str, Any], reader: ShellReader, shell: ShellState
) -> tuple[Surface, Surface]:
    """The entry's surfaces, read as the agent's tools saw them: canonical paths after
    the typed arguments, decoded text after an encoded result.

    Agents repeat their calls (``ls``, ``git status``, the same ``cat``): an argument
    object of a few plain strings is read once per reader and working directory, by
    its content (:func:`_args_key`), and the reading reused."""
    tool = tool_name(entry)
    args = entry.get("args")
    key = _args_key(args)
    if key is None:
        args_text, command = _read_args(args, reader, shell)
    else:
        args_text, command = reader.remembered(key, shell, lambda: _read_args(args, reader, shell))
    result_text = as_text(entry.get("result"))
    if shell.cwd is None and result_text and "pwd" in command and _PWD.match(command):
        # A printed ``pwd`` tells where the shell is (an imported log knows no workdir).
        printed = _PWD_RESULT.match(result_text)
        if printed is not None:
            shell.cwd = posixpath.normpath(printed.group(1))
    decoded = decoded_views(result_text, command) if result_text else ""
    if decoded:
        result_text = result_text + "\n" + decoded
    return Surface("args", index, tool, args_text), Surface("result", index, tool, result_text)


# ``pwd`` alone (or ``cd`` then ``pwd`` is not needed: a cd is read): its first output
# line, an absolute path, is the shell's working directory.
_PWD = regex.compile(r"\s*pwd\s*(?:-[LP]\s*)?\Z")
_PWD_RESULT = regex.compile(r"\s*(/[^\s\x00]{0,4096})\s*(?:\n|\Z)")

# An argument object remembered by content: at most this many keys and characters.
_MAX_REMEMBERED_ARGS_KEYS = 8
_MAX_REMEMBERED_ARGS_CHARS = 4096


def _args_key(args: object) -> tuple[tuple[str, str], ...] | None:
    """A content key for a small object of plain strings; ``None`` for anything else."""
    if type(args) is not dict or not args or len(args) > _MAX_REMEMBERED_ARGS_KEYS:
        return None
    size = 0
    for name, value in args.items():
        if type(name) is not str or type(value) is not str:
            return None
        size += len(name) + len(value)
    if size > _MAX_REMEMBERED_ARGS_CHARS:
        return None
    return tuple(args.items())


def _read_args(args: object, reader: ShellReader, shell: ShellState) -> tuple[str, str]:
    """The args surface's text (the typed arguments, then their canonical words) and
    the command text that names a result's encoding."""
    text = as_text(args if args else {})
    canonical = canonical_text(reader, args, shell)
    if canonical:
        text = text + "\n" + canonical
    return text, command_text(args)


def _scan_surface(
    rule: Rule,
    ids: tuple[int, ...],
    surface: Surface,
    candidates: frozenset[int],
    budget: int,
    clock: _Budget,
    findings: list[Finding],
) -> int:
    if candidates.isdisjoint(ids):
        return budget
    for pattern, pattern_id in zip(rule.patterns, ids, strict=True):
        if pattern_id not in candidates:
            continue
        compiled = clock.uncharged(exact_pattern, pattern)
        remaining = clock.check()
        try:
            match = compiled.search(surface.text, timeout=remaining)
        except TimeoutError:
            raise _BoundHit(
                f"rule {rule.id!r} pattern {pattern[:80]!r} ran out of the record's time budget "
                f"on the {surface.field} surface"
                + (
                    f" of step {surface.trajectory_index}"
                    if surface.trajectory_index is not None
                    else ""
                )
            ) from None
        if match is None:
            continue
        findings.append(
            Finding(
                rule=rule.id,
                category=rule.category,
                material=rule.material,
                evidence=rule.evidence,
                severity=rule.severity,
                pattern=pattern,
                field=surface.field,
                trajectory_index=surface.trajectory_index,
                tool=surface.tool,
                excerpt=excerpt(surface.text, match.start(), match.end()),
                strength=rule.strength,
            )
        )
        budget -= 1
        if budget <= 0:
            break
    return budget


def _candidates(
    prefilter: Prefilter,
    surfaces: list[Surface],
    clock: _Budget,
    pattern_fields: Sequence[frozenset[str]] | None = None,
    field_prefilters: Mapping[str, Prefilter] | None = None,
) -> list[frozenset[int]]:
    """Per surface, the ids of patterns that might match it.

    Each surface is encoded to UTF-8 once: the chunk the Sets read first is the join of
    those bytes, and a chunk with candidates reuses them surface by surface (the text
    was encoded twice before, once joined and once per surface).

    With ``pattern_fields`` (per pattern id, the fields its rules scan), a chunk's
    candidates are looked for surface by surface only among the patterns some rule
    scans that surface's field with: the exact loop never asks about the others there
    (a rule's surface is skipped unless its field is in ``rule.fields``), so no finding
    changes. The commonest chunk candidate, a ``git`` command of the args-only
    repository-history rules, then costs no pass over the results, most of the bytes.

    With ``field_prefilters`` as well (per field, Sets of only the patterns some rule
    scans that field with: ``_Plan.field_prefilters``), the surfaces are chunked field
    by field, in order, and each field's chunks are read by its own Sets: the results,
    most of the bytes, by about a fifth of the default profile's patterns. The same
    argument holds: a pattern left out of a field's Sets is one no rule scans there.
    A field without Sets of its own is read by ``prefilter``."""
    result: list[frozenset[int]] = [frozenset()] * len(surfaces)
    data = [_utf8(surface.text) for surface in surfaces]
    if field_prefilters is None or pattern_fields is None:
        _chunk_candidates(
            prefilter, list(range(len(surfaces))), surfaces, data, clock, pattern_fields, result
        )
        return result
    by_field: dict[str, list[int]] = {}
    for position, surface in enumerate(surfaces):
        by_field.setdefault(surface.field, []).append(position)
    for field, positions in by_field.items():
        _chunk_candidates(
            field_prefilters.get(field, prefilter),
            positions,
            surfaces,
            data,
            clock,
            pattern_fields,
            result,
        )
    return result


def _chunk_candidates(
    prefilter: Prefilter,
    positions: list[int],
    surfaces: list[Surface],
    data: list[bytes | None],
    clock: _Budget,
    pattern_fields: Sequence[frozenset[str]] | None,
    result: list[frozenset[int]],
) -> None:
    """:func:`_candidates` of the surfaces at ``positions`` (in order), chunk by chunk,
    written into ``result``."""
    start = 0
    while start < len(positions):
        clock.check()
        stop, size = start, 0
        while stop < len(positions) and (
            stop == start or size + len(surfaces[positions[stop]].text) <= _PREFILTER_CHUNK_CHARS
        ):
            size += len(surfaces[positions[stop]].text) + 1
            stop += 1
        at = positions[start:stop]
        piece = [data[position] for position in at]
        if stop - start == 1 or None in piece:
            # One surface, or one RE2 cannot read (lone surrogates: every pattern is a
            # candidate there): each surface on its own.
            for count, position in enumerate(at):
                if count % 64 == 0:
                    clock.check()
                result[position] = prefilter.candidates_in(data[position])
        else:
            # Joined by newlines: relaxed patterns anchor on line breaks, so any match
            # inside one surface is also a match in the joined chunk.
            joined = b"\n".join(cast("list[bytes]", piece))
            chunk = prefilter.candidates_in(joined)
            if chunk:
                fields = [surfaces[position].field for position in at]
                located = _located(prefilter, chunk, piece, clock, fields, pattern_fields)
                if located is None:
                    for count, position in enumerate(at):
                        if count % 64 == 0:
                            clock.check()
                        result[position] = prefilter.candidates_in(data[position]) & chunk
                else:
                    for position, found in zip(at, located, strict=True):
                        result[position] = found
        start = stop


def _located(
    prefilter: Prefilter,
    chunk: frozenset[int],
    piece: list[bytes | None],
    clock: _Budget,
    fields: Sequence[str] | None = None,
    pattern_fields: Sequence[frozenset[str]] | None = None,
) -> list[frozenset[int]] | None:
    """Per surface of a chunk, its candidates among ``chunk`` (the chunk's): asked of
    one small Set holding only the chunk's candidates, not of every Set again (a
    record with one ``git`` command made every surface of it go through the whole
    ruleset's Sets a second time, the costliest part of the prefilter). ``None`` when
    no such Set can be built (the caller asks the full Sets).

    The same answer as the full Sets' ``& chunk``: a Set names each pattern on its own
    merits, and patterns outside ``chunk`` are dropped either way."""
    always = prefilter.always & chunk
    searched = chunk - always
    if not searched:
        return [always] * len(piece)
    # One narrowed Set per field (all fields alike without ``pattern_fields``); an
    # empty tuple: no pattern of the chunk is scanned on that field, nothing to ask.
    by_field: dict[str | None, tuple[re2.Set, tuple[int, ...]] | tuple[()]] = {}
    result: list[frozenset[int]] = []
    for position, data in enumerate(piece):
        if position % 64 == 0:
            clock.check()
        field = fields[position] if fields is not None and pattern_fields is not None else None
        narrowed = by_field.get(field)
        if narrowed is None:
            wanted = (
                searched
                if field is None or pattern_fields is None
                else frozenset(p for p in searched if field in pattern_fields[p])
            )
            found = prefilter.narrowed(wanted) if wanted else ()
            if found is None:
                return None
            narrowed = by_field[field] = found
        if not narrowed:
            result.append(always)
            continue
        compiled, ids = narrowed
        hits = compiled.Match(data)
        result.append(always | {ids[hit] for hit in hits} if hits else always)
    return result


def _utf8(text: str) -> bytes | None:
    """``text`` as the Sets read it; ``None`` when it holds a lone surrogate."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _capped(surface: Surface, notes: list[str]) -> Surface:
    if len(surface.text) <= MAX_SURFACE_CHARS:
        return surface
    where = (
        f"step {surface.trajectory_index}" if surface.trajectory_index is not None else "the record"
    )
    notes.append(
        f"the {surface.field} surface of {where} has {len(surface.text)} characters; "
        f"only the first {MAX_SURFACE_CHARS} were scanned"
    )
    return Surface(
        surface.field, surface.trajectory_index, surface.tool, surface.text[:MAX_SURFACE_CHARS]
    )


class _Budget:
    """One record's time budget, on the scan's own CPU clock (``time.thread_time``).

    Wall-clock time would make the verdict depend on the machine's load: the same
    record and rules read ``incomplete`` beside a busy neighbour and ``clean`` alone (as
    ``bench/detection_throughput.py``'s identical-reports check did under heavy load).
    The thread's CPU time counts only the scan's own work, and what depends on the rules
    alone (building the plan, compiling a pattern the first time a detector meets it)
    is not charged. The bound stays a guard against runaway matching (catastrophic
    backtracking in a user's pattern): honest records use milliseconds of it. The exact
    engine's per-call ``timeout`` is wall-clock (``regex`` has no other), so only a
    search already near the budget's end can land either side of it.
    """

    __slots__ = ("_deadline",)

    def __init__(self, seconds: float) -> None:
        self._deadline = time.thread_time() + max(0.0, seconds)

    def check(self) -> float:
        """The seconds left; raise :class:`_BoundHit` when none are."""
        remaining = self._deadline - time.thread_time()
        if remaining <= 0:
            raise _BoundHit("the scan ran out of its time budget before it finished")
        return remaining

    def uncharged(
        self, build: Callable[[str], regex.Pattern[str]], pattern: str
    ) -> regex.Pattern[str]:
        """``build(pattern)`` (a cached compile) with its CPU time given back to the budget."""
        start = time.thread_time()
        compiled = build(pattern)
        self._deadline += time.thread_time() - start
        return compiled


@dataclass(frozen=True)
class _Plan:
    """Everything about a ruleset that does not depend on the record, built once."""

    rules: tuple[Rule, ...]
    digest: str
    prefilter: Prefilter
    rule_pattern_ids: tuple[tuple[int, ...], ...]
    # Per pattern id, the positions of the rules that carry it.
    rules_by_pattern: tuple[tuple[int, ...], ...]
    # Per pattern id, the fields its rules scan (none: a pattern of the prefilter that
    # no rule of this plan carries).
    pattern_fields: tuple[frozenset[str], ...]
    unusable: frozenset[int]
    notes: tuple[str, ...]
    # Per field, a prefilter whose Sets hold only the patterns some rule scans that
    # field with (ids as in ``prefilter``); a field absent reads ``prefilter``.
    field_prefilters: Mapping[str, Prefilter] = dataclasses.field(default_factory=dict)


# A recent prefilter lacking at most this many of a ruleset's patterns is extended
# rather than rebuilt; one that has grown to this many Sets is rebuilt in one piece.
_MAX_EXTENSION_PATTERNS = 256
_MAX_EXTENDED_SETS = 24


def _build_plan(rules: Ruleset, prefilter_for: Callable[[tuple[str, ...]], Prefilter]) -> _Plan:
    """Everything about ``rules`` that does not depend on the record."""
    distinct = tuple(dict.fromkeys(pattern for rule in rules for pattern in rule.patterns))
    prefilter = prefilter_for(distinct)
    rule_pattern_ids = tuple(
        tuple(prefilter.index[pattern] for pattern in rule.patterns) for rule in rules
    )
    rules_by_pattern: list[list[int]] = [[] for _ in prefilter.patterns]
    for position, ids in enumerate(rule_pattern_ids):
        for pattern_id in dict.fromkeys(ids):
            rules_by_pattern[pattern_id].append(position)
    unusable: set[int] = set()
    notes: list[str] = []
    for rule, ids in zip(rules, rule_pattern_ids, strict=True):
        for pattern, pattern_id in zip(rule.patterns, ids, strict=True):
            # Rules built in code (inventory) are safe by construction: no check.
            problem = None if is_trusted(pattern) else pattern_problem(pattern)
            if problem is not None and pattern_id not in unusable:
                unusable.add(pattern_id)
                notes.append(
                    f"rule {rule.id!r} has an unusable pattern {pattern[:80]!r}: {problem}"
                )
    pattern_fields = tuple(
        frozenset(field for position in positions for field in rules[position].fields)
        for positions in rules_by_pattern
    )
    return _Plan(
        rules=rules,
        digest=rules.digest,
        prefilter=prefilter,
        rule_pattern_ids=rule_pattern_ids,
        rules_by_pattern=tuple(tuple(r) for r in rules_by_pattern),
        pattern_fields=pattern_fields,
        unusable=frozenset(unusable),
        notes=tuple(notes),
        field_prefilters=_field_prefilters(prefilter, pattern_fields),
    )


# A ruleset with more distinct patterns than this keeps one prefilter for every field:
# the per-field Sets would be compiled again for each such ruleset (an inventory's rules
# change with each run's home), where the shared prefilter is extended instead.
_MAX_FIELD_SPLIT_PATTERNS = 1024
# A field's own Sets are built only when they leave out at least this share of the
# patterns (fewer patterns, a smaller DFA, fewer states to build and walk).
_MIN_FIELD_SPLIT_SHARE = 0.2


def _field_prefilters(
    prefilter: Prefilter, pattern_fields: Sequence[frozenset[str]]
) -> dict[str, Prefilter]:
    """Per field, ``prefilter`` narrowed to the patterns some rule scans that field with,
    where that leaves out enough of them to pay; ids stay those of ``prefilter``.

    Built from the same relaxed forms by the same :func:`build_prefilter` (each relaxed
    form is matched on its own merits whatever Set holds it), so for every pattern it
    holds it names exactly what ``prefilter`` names."""
    total = len(prefilter.patterns)
    if total > _MAX_FIELD_SPLIT_PATTERNS:
        return {}
    narrowed: dict[str, Prefilter] = {}
    for scanned in ("args", "result", "output"):
        ids = tuple(i for i in range(total) if scanned in pattern_fields[i])
        if len(ids) > total * (1 - _MIN_FIELD_SPLIT_SHARE):
            continue
        own = build_prefilter(tuple(prefilter.patterns[i] for i in ids))
        narrowed[scanned] = Prefilter(
            patterns=prefilter.patterns,
            sets=tuple(
                (compiled, tuple(ids[local] for local in locals_)) for compiled, locals_ in own.sets
            ),
            always=frozenset(ids[local] for local in own.always),
            index=prefilter.index,
        )
    return narrowed


__all__ = [
    "DEFAULT_RECORD_BUDGET_S",
    "DETECTOR_VERSION",
    "MAX_FINDINGS_PER_RULE",
    "TRANSCRIPT_TRUNCATED_KEY",
    "TRANSCRIPT_TRUNCATED_REASON",
    "Detector",
    "annotate_records",
    "is_marked_truncated",
    "lenient_report",
    "read_entry",
    "report_from_record",
    "scan_record",
    "scan_view",
]
