"""Integrity verdicts while ``inspect eval`` runs: every finished sample is scanned at
``on_sample_end``.

Inspect has written the sample to its log before this hook runs, so the verdict cannot
become one of the sample's scores (``inspect score --scorer benchguard/integrity``
does that afterwards). It is logged (a warning when flagged), kept on the hook
(:attr:`IntegrityHooks.verdicts`, by sample uuid) and, when
``BENCHGUARD_INSPECT_VERDICTS`` names a file, appended to it as one JSON line. The hook
never raises: a sample it cannot scan is logged and marked ``not_checked``.

Environment: ``BENCHGUARD_INSPECT_HOOKS=0`` turns the hook off;
``BENCHGUARD_INSPECT_PROFILE`` names the profile (default ``inspect``).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from inspect_ai.hooks import Hooks, SampleEnd, TaskStart, hooks

from benchguard.detection.detector import Detector
from benchguard.integrations.inspect._record import eval_sample_record
from benchguard.integrations.verdict import IntegrityVerdict, not_checked, scan_run

ENABLE_ENV = "BENCHGUARD_INSPECT_HOOKS"
PROFILE_ENV = "BENCHGUARD_INSPECT_PROFILE"
VERDICTS_ENV = "BENCHGUARD_INSPECT_VERDICTS"
DEFAULT_PROFILE = "inspect"
_OFF = frozenset({"0", "false", "no", "off"})

logger = logging.getLogger(__name__)


class IntegrityHooks(Hooks):
    """Scans each finished sample; see the module docstring."""

    def __init__(self) -> None:
        # Verdicts by sample uuid, for the life of the process (Inspect keeps one
        # instance of a hook class).
        self.verdicts: dict[str, IntegrityVerdict] = {}
        self._tasks: dict[str, tuple[str, str | None]] = {}
        # This hook's plans, reused for every sample (Inspect keeps one instance).
        self._detector = Detector()

    def enabled(self) -> bool:
        return os.environ.get(ENABLE_ENV, "1").strip().lower() not in _OFF

    async def on_task_start(self, data: TaskStart) -> None:
        try:
            self._tasks[data.eval_id] = (data.spec.task, data.spec.model)
        except Exception:  # never let bookkeeping break an eval
            logger.exception("benchguard: could not read the task spec")

    async def on_sample_end(self, data: SampleEnd) -> None:
        profile = os.environ.get(PROFILE_ENV, DEFAULT_PROFILE)
        try:
            task, model = self._tasks.get(data.eval_id, ("inspect", None))
            record = eval_sample_record(data.sample, task=task, model=model)
            verdict = scan_run(record, profile, format_name="inspect", detector=self._detector)
        except Exception as exc:
            verdict = not_checked(profile, f"{type(exc).__name__}: {exc}")
            logger.warning(
                "benchguard: sample %s was not checked: %s", data.sample.id, verdict.reason
            )
        self.verdicts[data.sample_id] = verdict
        if verdict.flagged:
            logger.warning("benchguard: sample %s: %s", data.sample.id, verdict.explanation())
        else:
            logger.info("benchguard: sample %s: %s", data.sample.id, verdict.explanation())
        self._append(data, verdict)

    def _append(self, data: SampleEnd, verdict: IntegrityVerdict) -> None:
        target = os.environ.get(VERDICTS_ENV)
        if not target:
            return
        line = {
            "eval_id": data.eval_id,
            "sample_uuid": data.sample_id,
            "sample_id": data.sample.id,
            "epoch": data.sample.epoch,
            **verdict.metadata(),
            "explanation": verdict.explanation(),
        }
        try:
            with Path(target).open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, sort_keys=True) + "\n")
        except OSError as exc:
            logger.warning("benchguard: cannot append to %s: %s", target, exc)


@hooks(name="integrity", description="benchguard integrity verdict for each finished sample")
def _integrity_hooks() -> type[IntegrityHooks]:
    return IntegrityHooks
