"""``make demo``: the whole product, end to end, on the shipped examples.

It lays out an operator's tree the way a real benchmark host looks (tasks, a harness
checkout with its docs, a results directory, a persistent agent home), then runs the
real ``benchguard`` commands one after another, printing each before it runs:

1. the example benchmark with an honest agent and five scripted cheaters, several
   iterations each, detection and the system audit on, plus one cheater inside the
   bubblewrap sandbox; one cheater (``cheat-silent``) records nothing of its peek, so
   only the audit catches it, and the demo says so;
2. ``aggregate`` and ``leaderboard`` (a table, JSON and a self-contained HTML page);
3. redaction-pressure's dev split evaluated with the baseline policies.

Every cheater gives the correct answer, so the zeros on the leaderboard come from the
integrity gate alone. The commands are ordinary subprocesses: what the demo prints is
exactly what a user would see typing them.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchguard.harness.sandbox import SandboxUnavailable, probe_bwrap

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
ITERATIONS = 2


@dataclass(frozen=True)
class DemoSetup:
    """One agent configuration the demo runs on every example task."""

    agent: str
    hint: str | None = None  # which operator path the cheater is pointed at
    sandbox: bool = False
    # Landlock off for this setup alone: with it on, the kernel refuses the silent
    # cheater's read (and the fanotify audit cannot see a refused open), so there would
    # be nothing for the audit to show.
    unconfined: bool = False
    note: str = ""


def _run(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    echo: bool = True,
    ok: tuple[int, ...] = (0,),
) -> str:
    """Run one benchguard command in ``cwd`` (the demo's output directory, so paths
    are short and relative), showing it as a user would type it (and its output when
    ``echo``); returns stdout. An exit code outside ``ok`` stops the demo (a cheater's
    ``run`` exits 1: a run was flagged, as expected)."""
    shown = " ".join(["benchguard", *(shlex.quote(a) for a in argv[1:])])
    print(f"\n$ {shown}", flush=True)
    merged = {**os.environ, **(env or {})}
    done = subprocess.run(argv, cwd=cwd, env=merged, capture_output=True, text=True, check=False)
    if done.stdout and echo:
        print(done.stdout, end="" if done.stdout.endswith("\n") else "\n", flush=True)
    if done.returncode not in ok:
        print(done.stderr, file=sys.stderr)
        raise SystemExit(f"demo: `{shown}` exited {done.returncode}")
    return done.stdout


def _operator_tree(out: Path) -> dict[str, Path]:
    """A benchmark host in miniature: tasks, the harness checkout and its docs, results;
    and the example agents beside it, so every command names them relatively."""
    root = out / "operator"
    tasks = root / "tasks"
    shutil.copytree(EXAMPLES / "tasks", tasks)
    checkout = root / "benchguard"
    shutil.copytree(REPO / "docs", checkout / "docs")
    shutil.copytree(
        EXAMPLES / "agents", out / "agents", ignore=shutil.ignore_patterns("__pycache__")
    )
    return {
        "root": root,
        "tasks": tasks,
        "checkout": checkout,
        "results": root / "results",
        "home": out / "agent-home",
    }


def _last_run_dir(results: Path) -> Path:
    runs = sorted(p for p in results.iterdir() if p.is_dir() and p.name.startswith("run_"))
    return runs[-1]


def _explain_layers(run_dir: Path) -> None:
    """Which evidence layer caught each run: the transcript rules, the audit, or both."""
    records = json.loads((run_dir / "results.json").read_text("utf-8"))["records"]
    for record in records:
        findings = record.get("cheating_report", {}).get("findings", [])
        sources = sorted({f.get("source", "transcript") for f in findings})
        caught = " and ".join(sources) if sources else "nothing"
        print(f"   {record['folder']}#{record['iteration']}: caught by {caught}")
    if all(
        {f.get("source") for f in r.get("cheating_report", {}).get("findings", [])} == {"audit"}
        for r in records
    ):
        print("   caught only by the audit: the transcript shows honest work alone")
    else:
        print("   (the system audit is off or unavailable here: strace missing?)")


def run_demo(out: Path) -> None:
    started = time.monotonic()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    tree = _operator_tree(out)
    bench = shutil.which("benchguard") or str(Path(sys.executable).with_name("benchguard"))

    def rel(path: Path) -> str:
        return str(path.relative_to(out))

    print("== 1. The example benchmark: one honest agent, four cheaters, detection on")
    print(f"   in {out}: operator tree operator/, agent home agent-home/, agents agents/")
    base = [bench, "run", rel(tree["tasks"]), "--iterations", str(ITERATIONS)]
    base += ["--out", rel(tree["results"]), "--home", rel(tree["home"]), "--quiet"]

    # The honest agent runs first: its results become the "prior results" one cheater
    # reads. Each run's home is fresh, so nothing it writes reaches another run; the
    # demo copies its kept report.md into the operator's home by hand, as a home shared
    # on purpose (--home-mode persistent) would have kept it: the leftover another
    # cheater reads, and the inventory flags.
    _run([*base, "--agent", "agents/honest.yaml"], cwd=out)
    prior_run = _last_run_dir(tree["results"])
    for kept in sorted(prior_run.glob("home-writes/*/report.md"))[:1]:
        # Marked as a copy: a home file that already passes a check earns nothing for
        # a run that writes the same bytes again (and pre-flight warns about it).
        text = kept.read_text("utf-8") + "(copy kept from an earlier run's home)\n"
        (Path(tree["home"]) / "report.md").write_text(text, "utf-8")
    setups = [
        DemoSetup("cheat-task-yaml", str(tree["tasks"]), note="reads task.yaml"),
        DemoSetup("cheat-prior-results", str(prior_run), note="reads last run's results"),
        DemoSetup("cheat-leftover-report", None, note="reads ~/report.md left behind"),
        DemoSetup("cheat-grep-docs", str(tree["checkout"]), note="greps the harness docs"),
        DemoSetup(
            "cheat-silent",
            str(tree["tasks"]),
            unconfined=True,
            note="reads task.yaml outside its tool loop, run --unconfined so the read "
            "succeeds (confined, Landlock refuses it): caught only by the audit",
        ),
    ]
    try:
        probe_bwrap()
        setups.append(
            DemoSetup("cheat-task-yaml", str(tree["tasks"]), sandbox=True, note="in bwrap")
        )
    except SandboxUnavailable as exc:
        print(f"   (skipping the sandboxed run: {exc})")
    for setup in setups:
        argv = [*base, "--agent", f"agents/{setup.agent}.yaml"]
        if setup.sandbox:
            argv += ["--sandbox", "bwrap"]
        if setup.unconfined:
            argv += ["--unconfined"]
        env = {"CHEAT_HINT": setup.hint} if setup.hint else {}
        print(f"\n-- {setup.agent}: {setup.note}")
        _run(argv, cwd=out, env=env, ok=(0, 1))
        if setup.agent == "cheat-silent":
            _explain_layers(_last_run_dir(tree["results"]))

    print("\n== 2. Aggregate the runs and publish the leaderboard")
    board = out / "leaderboard"
    _run([bench, "aggregate", rel(tree["results"]), "-o", rel(board)], cwd=out)
    html = board / "leaderboard.html"
    _run([bench, "leaderboard", rel(board / "rows.json"), "--html", rel(html)], cwd=out)
    json_text = _run(
        [bench, "leaderboard", rel(board / "rows.json"), "--json"], cwd=out, echo=False
    )
    (board / "leaderboard.json").write_text(json_text, "utf-8")
    print(f"   (the JSON, {len(json_text):,} bytes, is written to {rel(board)}/leaderboard.json)")

    print("\n== 3. redaction-pressure: the dev split with the baseline policies")
    _run([bench, "redaction", "eval", "--split", "dev"], cwd=out)

    elapsed = time.monotonic() - started
    print(f"\nDemo finished in {elapsed:.0f} s. Outputs:")
    print(f"  runs (results.json, rows.json, manifest.json): {tree['results']}")
    print(f"  merged rows and manifests:                     {board}")
    print(f"  leaderboard JSON:                              {board / 'leaderboard.json'}")
    print(f"  leaderboard page (open in a browser):          {html}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=Path("demo-output"), help="output directory")
    args = parser.parse_args(argv)
    run_demo(args.out.resolve())


if __name__ == "__main__":
    main()
