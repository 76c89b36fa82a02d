"""The harness's runner, split by job (this module re-exports the three, for callers
that import from here):

- :mod:`benchguard.harness.job`: one run captured (workspace, home, the agent under its
  launcher and sandbox, audit, containment, the checks in the grading box);
- :mod:`benchguard.harness.finish`: finishing a run (scan, then score);
- :mod:`benchguard.harness.batch`: the batch (plan, scheduler, stop signals, journal,
  publish).
"""

from __future__ import annotations

from benchguard.harness.batch import (
    LOST_WITH_WORKER_KEY,
    BatchResult,
    StopSignals,
    batch_manifest,
    journal_record,
    needs_rerun,
    new_run_dir,
    open_journal,
    plan,
    publish,
    run_and_finish,
    run_batch,
)
from benchguard.harness.finish import (
    finish_run,
    mark_failed,
)
from benchguard.harness.job import (
    MAX_TREE_ENTRIES,
    STDERR_TAIL_CHARS,
    BatchSettings,
    Job,
    SandboxMode,
    leftover_paths,
    run_job,
    sandbox_read_only,
    seed_record,
    sweep_orphans,
    tree_state,
)

__all__ = [
    "LOST_WITH_WORKER_KEY",
    "MAX_TREE_ENTRIES",
    "STDERR_TAIL_CHARS",
    "BatchResult",
    "BatchSettings",
    "Job",
    "SandboxMode",
    "StopSignals",
    "batch_manifest",
    "finish_run",
    "journal_record",
    "leftover_paths",
    "mark_failed",
    "needs_rerun",
    "new_run_dir",
    "open_journal",
    "plan",
    "publish",
    "run_and_finish",
    "run_batch",
    "run_job",
    "sandbox_read_only",
    "seed_record",
    "sweep_orphans",
    "tree_state",
]
