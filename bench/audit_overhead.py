"""Wall-time cost of the system audit, beside the audit off, measured in one run.

Two scripted agents (standard library only), each run the way ``run_job`` runs an
agent: contained (its own cgroup and pid namespace, harness/containment) and started
with ``run_process``; the audit off, then the default audit (fanotify as root: the
observer marks the protected set's filesystems and reads every event while the agent
runs; strace where the harness is not root), then strace ``-y`` for comparison:

- file-heavy: walks and reads a 2,000-file tree in its workspace, stats every file,
  lists every directory and starts 20 short ``cat`` processes: the worst case for a
  tracer that stops on file syscalls;
- typical step mix: what an agent's tool loop does in one task: 12 steps, each a
  ``/bin/sh -c`` command (cat, wc, grep, ls, a python3 one-liner), a transcript line
  appended per step, one answer file written.

Off, default and strace alternate, ``--rounds`` times each; each figure is a ratio of
medians against the audit off. Targets for the default audit: at most 1.2x on the
typical step mix and 1.5x on the file-heavy agent. fanotify's cost is per event in the
observer (every open on the marked filesystems, the machine's included), strace's is
per traced call (each stops the tracee until strace has logged it), so both grow with
how busy the machine's cores are.
Usage: python bench/audit_overhead.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchguard.harness.audit import AuditSettings, default_mode, probe_strace, protected_set
from benchguard.harness.audit_session import RunSession
from benchguard.harness.cgroup import BatchCgroups
from benchguard.harness.containment import RunContainment
from benchguard.harness.process import become_subreaper, run_process
from benchguard.harness.sandbox import interpreter_paths

FILE_HEAVY = """\
import os, subprocess
total = 0
for folder, dirs, files in os.walk("tree"):
    for name in files:
        path = os.path.join(folder, name)
        os.stat(path)
        with open(path, "rb") as handle:
            total += len(handle.read())
for index in range(20):
    subprocess.run(["cat", f"tree/d{index % 20}/f0.txt"], stdout=subprocess.DEVNULL, check=True)
print(total)
"""

STEP_MIX = """\
import json, os, subprocess
steps = [
    "cat numbers.txt", "wc -l numbers.txt", "grep -c 1 numbers.txt", "ls -la",
    "python3 -c 'print(sum(int(x) for x in open(\\"numbers.txt\\")))'",
    "head -3 numbers.txt", "sort -n numbers.txt | tail -1", "cat poem.txt",
    "wc -w poem.txt", "ls", "python3 -c 'import json; print(json.dumps([1, 2]))'",
    "cat numbers.txt | tr '\\\\n' ' '",
]
for command in steps:
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True)
    with open(os.environ["TRANSCRIPT"], "a") as handle:
        handle.write(json.dumps({"name": "shell", "args": {"command": command},
                                 "result": done.stdout[:2000], "status": "completed"}) + "\\n")
with open("answer.txt", "w") as handle:
    handle.write("137\\n")
print("137")
"""


def _workspace(root: Path, kind: str) -> Path:
    workspace = root / "workspace"
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir(parents=True)
    if kind == "file-heavy":
        for d in range(20):
            folder = workspace / "tree" / f"d{d}"
            folder.mkdir(parents=True)
            for f in range(100):
                (folder / f"f{f}.txt").write_text(f"{d} {f}\n" * 20, "utf-8")
    else:
        (workspace / "numbers.txt").write_text("\n".join(str(n) for n in range(1, 17)) + "\n")
        (workspace / "poem.txt").write_text("The fog comes\non little cat feet.\n", "utf-8")
    return workspace


def _once(
    root: Path, kind: str, script: str, audit: AuditSettings, batch: BatchCgroups | str
) -> float:
    workspace = _workspace(root, kind)
    private = root / "private"
    shutil.rmtree(private, ignore_errors=True)
    private.mkdir()
    argv = [sys.executable, "-c", script]
    env = {
        # As `make` runs agents: the harness's interpreter first on PATH.
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
        "TRANSCRIPT": str(root / "trajectory.jsonl"),
        "LC_ALL": "C.UTF-8",
    }
    start = time.perf_counter()
    protected = (
        protected_set(
            tasks_dirs=[root / "tasks"],
            results_root=root / "results",
            own_scratch=root,
            interpreter=interpreter_paths(),
            # As run_job: the run's scratch is its own tree (the observer marks its
            # files ignored only once they recur: harness.fanotify_ignore).
            own_trees=[root],
        )
        if audit.active
        else None
    )
    session = RunSession(audit, RunContainment.start(batch, "bench"), private, protected)
    finished = run_process(
        session.command(argv),
        cwd=workspace,
        env=env,
        timeout_s=120,
        stdout_file=root / "stdout.txt",
        stderr_file=root / "stderr.txt",
        trace_log=session.trace_log,
    )
    session.end()
    summary = session.summary(workspace)
    session.remove()
    elapsed = time.perf_counter() - start
    assert finished.returncode == 0, (root / "stderr.txt").read_text()
    assert summary is None or summary["complete"], summary
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    become_subreaper()
    mode = default_mode()
    default = AuditSettings(mode, strace=probe_strace() if mode != "fanotify" else "strace")
    strace = AuditSettings("strace", strace=probe_strace())
    off = AuditSettings("none")
    batch = BatchCgroups.open()
    print(
        f"audit overhead, {options.rounds} rounds each, medians (off, default and strace "
        f"alternate); default audit here: {mode}"
    )
    try:
        for kind, script in (("file-heavy", FILE_HEAVY), ("typical step mix", STEP_MIX)):
            times: dict[str, list[float]] = {"off": [], "default": [], "strace": []}
            with tempfile.TemporaryDirectory(prefix="bg-bench-audit-") as scratch:
                root = Path(scratch)
                _once(root, kind, script, off, batch)  # warm caches for all
                for _ in range(options.rounds):
                    for name, settings in (("off", off), ("default", default), ("strace", strace)):
                        times[name].append(_once(root, kind, script, settings, batch))
            base = statistics.median(times["off"])
            audited = statistics.median(times["default"])
            traced = statistics.median(times["strace"])
            print(
                f"  {kind:17} audit off {base * 1000:8.1f} ms   {mode} {audited * 1000:8.1f} ms"
                f"   {audited / base:5.2f}x"
            )
            print(
                f"  {kind:17} (strace -y, for comparison) {traced * 1000:8.1f} ms"
                f"   {traced / base:5.2f}x"
            )
    finally:
        if isinstance(batch, BatchCgroups):
            batch.close()


if __name__ == "__main__":
    main()
