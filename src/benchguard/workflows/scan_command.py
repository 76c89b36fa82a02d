"""``benchguard scan`` as one call: its options as given in, a printable result out.

:func:`scan_command` does everything the command needs besides printing: the options
are combined with the configuration file, checked (a :class:`BadInputError` naming the
flag and what is allowed, before anything is read), the rules and dismissals loaded,
standard input spooled, the files scanned by :func:`benchguard.workflows.scan.scan_logs`
and the ``-o`` summary written. The CLI prints the :class:`ScanResult` and exits with
its :attr:`ScanResult.exit_code`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from benchguard.detection.models import Rule
from benchguard.detection.profile_choice import AUTO, ProfileChoice, union_rules
from benchguard.detection.rules import load_ruleset
from benchguard.engines import FileScan, engine_choice_problem
from benchguard.errors import EXIT_BAD_INPUT, BadInputError
from benchguard.importers.registry import FORMAT_NAMES
from benchguard.record.codec import write_text_atomic
from benchguard.results.formats import OUTPUT_FORMATS, parse_output_format
from benchguard.workflows._stdin import STDIN_LABEL, STDIN_NAME, spooled_stdin
from benchguard.workflows.foreign import foreign_knowledge
from benchguard.workflows.profiles import describe_names, named_choice, profile_names
from benchguard.workflows.scan import ScanOutcome, ScanProgress, ScanRequest, scan_logs
from benchguard.workflows.settings import values

if TYPE_CHECKING:
    from benchguard.results.dismissals import Dismissal


@dataclass(frozen=True)
class ScanOptions:
    """The command's options as given; ``None`` means the configuration file's value,
    else the built-in default. Each field is the flag of the same name."""

    paths: Sequence[Path]
    output_format: str | None = None
    as_json: bool = False
    input_format: str | None = None
    profiles: Sequence[str] | None = None
    rules: Path | None = None
    dismissals: Path | None = None
    engine: str | None = None
    scheduler: str | None = None
    workers: int | None = None
    out: Path | None = None
    material: Path | None = None
    repo: Path | None = None
    base_commit: str | None = None
    instances: Path | None = None
    fail_on_review: bool = False
    # Read when a path is ``-`` (standard input by default).
    stdin: BinaryIO | None = None
    # Called as files are scanned (the terminal's progress line).
    on_progress: Callable[[ScanProgress], None] | None = None


@dataclass
class ScanResult:
    """What the scan found, and the choices its output is printed with."""

    outcome: ScanOutcome
    # table, json, sarif or junit.
    output_format: str
    # Every profile asked for, in order (``auto`` among them: chosen per file).
    profiles: tuple[str, ...]
    # The rules the scan used (``auto``: the union of every file's choice), for SARIF.
    rules: Sequence[Rule]
    dismissals_file: Path | None
    # Why the ``-o`` summary could not be written (bad input: nothing else is printed).
    out_error: str | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_BAD_INPUT if self.out_error is not None else self.outcome.exit_code


def scan_command(options: ScanOptions) -> ScanResult:
    """Check the options, scan, write ``-o``; :class:`BadInputError` (or another
    :class:`benchguard.errors.BenchguardError`) when nothing could be scanned."""
    settings = values(
        {
            "format": options.output_format,
            "profile": None,
            "rules": options.rules,
            "dismissals": options.dismissals,
            "engine": options.engine,
            "scheduler": options.scheduler,
            "workers": options.workers,
        }
    )
    names = profile_names(options.profiles, settings["profile"])
    rules_file, dismissals_file = settings["rules"], settings["dismissals"]
    engine, scheduler, workers = settings["engine"], settings["scheduler"], settings["workers"]
    chosen = output_format(options.output_format, settings["format"], options.as_json)
    if options.input_format is not None and options.input_format not in FORMAT_NAMES:
        raise BadInputError(
            f"--input-format {options.input_format!r} is not a format we read; choose one "
            f"of: {', '.join(FORMAT_NAMES)}"
        )
    engine_problem = engine_choice_problem(engine, scheduler)
    if engine_problem is not None:
        raise BadInputError(engine_problem)
    if sum(str(p) == STDIN_NAME for p in options.paths) > 1:
        raise BadInputError("- (standard input) may be named only once")
    named = named_choice(names, rules_file)
    rules = named.rules if named is not None else load_ruleset(AUTO, rules_file)
    entries: tuple[Dismissal, ...] = ()
    if dismissals_file is not None:
        # On use: most scans name no dismissals file.
        from benchguard.results.dismissals import load_dismissals

        entries = load_dismissals(dismissals_file)
    with ExitStack() as stack:
        renamed: dict[str, str] = {}
        paths = list(options.paths)
        if any(str(p) == STDIN_NAME for p in paths):
            spool = stack.enter_context(spooled_stdin(options.stdin))
            renamed[str(spool)] = STDIN_LABEL
            paths = [spool if str(p) == STDIN_NAME else p for p in paths]
        outcome = scan_logs(
            ScanRequest(
                paths=paths,
                rules=rules,
                dismissals=entries,
                input_format=options.input_format,
                engine="dask" if engine == "dask" else "serial",
                scheduler=scheduler,
                workers=workers,
                renamed=renamed,
                fail_on_review=options.fail_on_review,
                profiles=names,
                extra_rules=rules_file,
                knowledge=foreign_knowledge(
                    material=options.material,
                    repo=options.repo,
                    base_commit=options.base_commit,
                    instances=options.instances,
                ),
                on_progress=options.on_progress,
            )
        )
    if outcome.choices:
        # auto: every file's rules were chosen for it; SARIF describes all of them.
        rules = union_rules(("", choice.rules) for choice in outcome.choices.values())
    result = ScanResult(outcome, chosen, names, rules, dismissals_file)
    if options.out is not None:
        result.out_error = _write_out(
            options.out, outcome.scans, describe_names(names), engine, outcome.choices
        )
    return result


def output_format(flag: str | None, value: str, as_json: bool) -> str:
    """The output format; ``--json`` is ``--format json`` (a config file's ``format``
    gives way to it, a conflicting ``--format`` flag is refused)."""
    if as_json and flag is None:
        return "json"
    if value in FORMAT_NAMES:
        raise BadInputError(
            f"--format {value!r} names a log format; force it with --input-format {value} "
            f"(--format chooses the output: {', '.join(OUTPUT_FORMATS)})"
        )
    chosen = parse_output_format(value)
    if as_json and chosen not in ("table", "json"):
        raise BadInputError(f"--json and --format {chosen} disagree; give one of them")
    return "json" if as_json else chosen


def _write_out(
    out: Path,
    scans: list[FileScan],
    profile: str,
    engine: str,
    choices: Mapping[str, ProfileChoice],
) -> str | None:
    """Write the ``-o`` summary; why it could not be written, or ``None``."""
    document: dict[str, Any] = {
        "profile": profile,
        "engine": engine,
        "files": [s.model_dump(mode="json") for s in scans],
    }
    if choices:
        # auto: the profiles each file was scanned with, and why each was chosen.
        document["profiles"] = {
            path: [{"profile": n, "why": r} for n, r in zip(c.names, c.reasons, strict=True)]
            for path, c in sorted(choices.items())
        }
    try:
        write_text_atomic(out, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        return f"{out}: cannot write ({exc.strerror or exc})"
    return None


__all__ = ["ScanOptions", "ScanResult", "output_format", "scan_command"]
