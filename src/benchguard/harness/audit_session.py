"""One run's containment and audit, in the order they must happen.

1. :meth:`RunSession.command` wraps the agent's command: the pid namespace's init,
   strace (``--audit strace``), the cgroup join (harness/containment); with
   ``--audit fanotify`` it starts the observer, which lets the init start the agent
   once it has learned the run's mount namespace (harness/fanotify).
2. The runner runs the command.
3. :meth:`RunSession.end` freezes and kills the run's cgroup, then stops the observer
   (its queue then holds all the run did).
4. :meth:`RunSession.summary` is ``record["system_audit"]``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.harness.audit import AuditSettings, ProtectedSet, RunAudit, summarise
from benchguard.harness.containment import RunContainment
from benchguard.harness.fanotify import FanotifyObserver, observe
from benchguard.harness.harness_namespaces import SandboxGate


@dataclass
class RunSession:
    settings: AuditSettings
    containment: RunContainment
    # The run's private directory (the init's strays file and gate live there).
    private: Path
    protected: ProtectedSet | None = None
    strace: RunAudit | None = None
    observer: FanotifyObserver | None = None
    # The agent's bwrap waits on it until its namespace is registered as this run's.
    sandbox_gate: SandboxGate | None = None
    _admitting: threading.Thread | None = field(default=None, init=False)
    _ended: threading.Event = field(default_factory=threading.Event, init=False)
    _summary: dict[str, Any] | None = field(default=None, init=False)

    def command(self, argv: Sequence[str]) -> list[str]:
        gate: Path | None = None
        fanotify = self.settings.mode == "fanotify" and self.protected is not None
        if fanotify and self.containment.pid_namespace:
            gate = self.private / "gate"
            os.mkfifo(gate, 0o600)
        wrapped = self.containment.inner(argv, self.private / "strays", gate=gate)
        if self.settings.mode == "strace":
            self.strace = RunAudit(self.settings)
            wrapped = self.strace.wrap(wrapped)
        wrapped = self.containment.outer(wrapped, traced=self.strace is not None)
        if fanotify and self.protected is not None:
            self.observer = observe(
                self.protected,
                self.containment.cgroup,
                own_namespace=bool(self.containment.pid_namespace),
                gate=gate,
            )
        if self.sandbox_gate is not None:
            self._admitting = threading.Thread(
                target=self._admit, args=(self.sandbox_gate,), name="sandbox-gate", daemon=True
            )
            self._admitting.start()
        return wrapped

    def _admit(self, gate: SandboxGate) -> None:
        """Register the agent sandbox's namespace as this run's (found among the run
        cgroup's processes), then let the agent start; without a cgroup it just starts."""
        cgroup = self.containment.cgroup
        if cgroup is None:
            gate.let_run()
            return

        def members(_report: object) -> list[int]:
            try:
                return cgroup.pids()
            except ValueError:
                return []

        gate.admit_run(cgroup.name, members, stop=self._ended.is_set)

    @property
    def trace_log(self) -> Path | None:
        return self.strace.log if self.strace is not None else None

    def end(self) -> int:
        """Kill what the run left (its cgroup), then stop the observer; how many of the
        run's processes were still alive."""
        strays = self.containment.strays() + self.containment.end()
        self._ended.set()
        if self.observer is not None:
            self._summary = self.observer.finish()
            self.observer = None
        self._close_gate()
        return strays

    def _close_gate(self) -> None:
        """Once the run's own observer has drained: its sandbox namespace is released."""
        self._ended.set()
        if self._admitting is not None:
            self._admitting.join()
            self._admitting = None
        if self.sandbox_gate is not None:
            self.sandbox_gate.close()

    def summary(self, start_cwd: Path) -> dict[str, Any] | None:
        """``record["system_audit"]``; None when the audit is off."""
        if self._summary is not None:
            return self._summary
        if self.strace is not None and self.protected is not None:
            return summarise(
                self.strace.log,
                self.protected,
                start_cwd=start_cwd,
                wrapped=bool(self.containment.pid_namespace),
            )
        return None

    def remove(self) -> None:
        if self.observer is not None:
            with contextlib.suppress(Exception):
                self.observer.finish()
            self.observer = None
        self._close_gate()
        if self.strace is not None:
            self.strace.remove()
        if self.containment.cgroup is not None:
            self.containment.cgroup.remove()
