"""The import graph: lower layers never import higher ones, and nothing imports in a cycle.

The layering is DESIGN.md's: persisted shapes (``record``) at the bottom; evidence
(``detection``) and the foreign-log edge (``importers``) on them; consequence and
composition (``scoring``) and the generic executors (``engines``, which never import
results or the CLI) above; publication (``results``); then the harness, the workflows
composing everything, and the CLI. A package may import its own modules and any
package of a strictly lower rank; packages of the same rank are peers and never import
each other. Every import counts, at module level or inside a function (a lazy import
is still a dependency), read from the source with ``ast``, so nothing is imported to
check it.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "benchguard"

# benchguard's top-level modules and packages, lowest first. ``benchguard`` is the
# package's own __init__ (its version).
RANKS: dict[str, int] = {
    "errors": 0,
    "benchguard": 1,
    "yamlfile": 1,
    "suggest": 1,
    # The config file reader (its did-you-mean hints come from suggest).
    "config": 2,
    "record": 2,
    # Compatibility re-exports of record (records.py): above it, below every user.
    "records": 3,
    "detection": 4,
    "importers": 4,
    "scoring": 5,
    "engines": 5,
    # benchguard inside Inspect and verifiers: reads records, runs the detector.
    "integrations": 5,
    "results": 6,
    "harness": 7,
    # audit-tasks' lint and exploit library: read task models, run nothing themselves.
    "taskaudit": 8,
    "workflows": 9,
    "cli": 10,
    "demo": 11,
    "__main__": 11,
}

# Edges that break the layering today and are not yet fixed, each with its reason.
# Empty: the record package broke records <-> importers, importers <-> results and
# engines -> results (issue 23). Add an entry only with the reason and the issue.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}
# Modules that import each other (through a lazy import inside a function), each group
# with its reason. Remove an entry when its cycle is gone.
KNOWN_MODULE_CYCLES: dict[tuple[str, ...], str] = {
    ("benchguard.harness.audit", "benchguard.harness.fanotify", "benchguard.harness.strace_log"): (
        "the two audits share their access classification through each other; it belongs "
        "in a module of its own below both (not split this session)"
    ),
}


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    name = ".".join(parts)
    return name.removesuffix(".__init__")


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


@functools.cache
def imports_of(root: Path) -> dict[str, set[tuple[str, int]]]:
    """Each module under ``root`` (a package folder) and the project modules it imports,
    with the line, every import statement included (lazy ones too)."""
    package = root.name
    known = {_module_name(path, root) for path in root.rglob("*.py")}
    found: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        tree = ast.parse(path.read_text("utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.ImportFrom) and node.level:
                base = module.split(".")
                if path.name != "__init__.py":
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
                targets = [stem, *(f"{stem}.{a.name}" for a in node.names)]
            # ``from pkg import name``: pkg.name counts only when it is a module.
            for position, target in enumerate(targets):
                if position and isinstance(node, ast.ImportFrom) and target not in known:
                    continue
                if target == package or target.startswith(package + "."):
                    found[module].add((target, node.lineno))
    return found


def layering_violations(
    root: Path, ranks: Mapping[str, int], known: Mapping[tuple[str, str], str]
) -> list[str]:
    """``module:line imports target`` for each import of a layer not strictly lower."""
    problems: list[str] = []
    for module, targets in sorted(imports_of(root).items()):
        mine = _layer(module)
        for target, line in sorted(targets):
            theirs = _layer(target)
            if theirs == mine or (mine, theirs) in known:
                continue
            if mine not in ranks or theirs not in ranks:
                problems.append(f"{module}:{line}: {mine} or {theirs} has no rank in RANKS")
            elif ranks[theirs] >= ranks[mine]:
                problems.append(
                    f"{module}:{line} imports {target}: {mine} (rank {ranks[mine]}) may not "
                    f"import {theirs} (rank {ranks[theirs]})"
                )
    return sorted(set(problems))


def module_cycles(root: Path) -> list[list[str]]:
    """Groups of modules that import each other in a cycle (importing ``a.b.c`` runs
    ``a`` and ``a.b`` first, so those count as imported too)."""
    graph: dict[str, set[str]] = defaultdict(set)
    found = imports_of(root)
    modules = set(found) | {_module_name(p, root) for p in root.rglob("*.py")}
    for module, targets in found.items():
        for target, _ in targets:
            parts = target.split(".")
            for end in range(1, len(parts) + 1):
                name = ".".join(parts[:end])
                if name in modules and name != module and not module.startswith(name + "."):
                    graph[module].add(name)
    return _strongly_connected(graph, sorted(modules))


def _strongly_connected(graph: Mapping[str, set[str]], nodes: list[str]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; only the components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def layer_cycles(root: Path) -> list[list[str]]:
    """Groups of top-level packages that import each other in a cycle."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in imports_of(root).items():
        for target, _ in targets:
            if _layer(target) != _layer(module):
                graph[_layer(module)].add(_layer(target))
    return _strongly_connected(graph, sorted(set(graph) | {t for ts in graph.values() for t in ts}))


def test_every_layer_has_a_rank() -> None:
    """A new top-level module or package must be placed in the layering explicitly."""
    names = {p.stem if p.is_file() else p.name for p in SRC.iterdir() if not p.name.startswith("_")}
    names = {n for n in names if (SRC / n).is_dir() or (SRC / f"{n}.py").is_file()}
    names.discard("__pycache__")
    missing = sorted(names - set(RANKS))
    assert not missing, f"place {missing} in RANKS"


def test_lower_layers_never_import_higher_ones() -> None:
    assert layering_violations(SRC, RANKS, KNOWN_EXCEPTIONS) == []


def test_no_package_imports_another_in_a_cycle() -> None:
    assert layer_cycles(SRC) == []


def test_no_module_imports_another_in_a_cycle() -> None:
    cycles = [tuple(group) for group in module_cycles(SRC)]
    assert [c for c in cycles if c not in KNOWN_MODULE_CYCLES] == []
    assert [c for c in KNOWN_MODULE_CYCLES if c not in cycles] == [], "remove fixed entries"


def test_the_record_package_imports_only_errors() -> None:
    """The persisted shapes sit at the bottom: nothing in record reads a layer above."""
    for module, targets in imports_of(SRC).items():
        if _layer(module) == "record":
            assert {_layer(t) for t, _ in targets} <= {"record", "errors"}, module


# The harness split by job (issue 23): a captured run knows nothing of finishing it or
# of the batch, finishing knows nothing of the batch, and only the batch publishes
# (journal, results files). Each module: the harness modules and layers it may not import.
HARNESS_SPLIT: dict[str, tuple[str, ...]] = {
    "benchguard.harness.job": (
        "benchguard.harness.finish",
        "benchguard.harness.batch",
        "benchguard.harness.runner",
        "benchguard.harness.journal",
        "benchguard.results",
    ),
    "benchguard.harness.finish": (
        "benchguard.harness.batch",
        "benchguard.harness.runner",
        "benchguard.harness.journal",
        "benchguard.results",
    ),
    "benchguard.harness.batch": ("benchguard.harness.runner",),
}


@pytest.mark.parametrize("module", sorted(HARNESS_SPLIT))
def test_the_harness_split_by_job_imports_downward_only(module: str) -> None:
    forbidden = HARNESS_SPLIT[module]
    found = imports_of(SRC)
    assert module in found, f"{module} is gone: update HARNESS_SPLIT"
    bad = sorted(
        f"{module}:{line} imports {target}"
        for target, line in found[module]
        if any(target == f or target.startswith(f + ".") for f in forbidden)
    )
    assert bad == []


def test_engines_are_generic_executors() -> None:
    """Engines run the work a workflow hands them: they import no publication
    (``results``), no harness, no workflow and no CLI, whatever the ranks say."""
    found = imports_of(SRC)
    upward = sorted(
        f"{module}:{line} imports {target}"
        for module, targets in found.items()
        if _layer(module) == "engines"
        for target, line in targets
        if _layer(target) in ("results", "harness", "workflows", "cli", "demo")
    )
    assert upward == []


def test_nothing_in_src_imports_the_runner_shim() -> None:
    """``harness.runner`` only re-exports the split modules for outside callers; inside
    the package, each caller names the module that does the job."""
    users = sorted(
        module
        for module, targets in imports_of(SRC).items()
        if module not in ("benchguard.harness.runner", *_SHIM_USERS)
        and any(t == "benchguard.harness.runner" for t, _ in targets)
    )
    assert users == []


# Callers left on the shim, each with its reason (remove an entry when it moves).
_SHIM_USERS = (
    # Edited by the cluster and audit-tasks work at the same time (not moved this session).
    "benchguard.workflows.run_cluster",
    "benchguard.workflows.audit_tasks",
    "benchguard.cli.audit_tasks_cmds",
)


def test_known_exceptions_are_still_needed() -> None:
    """An exception that no longer occurs is removed, so the list says what is true."""
    edges = {(_layer(m), _layer(t)) for m, ts in imports_of(SRC).items() for t, _ in ts}
    assert [pair for pair in KNOWN_EXCEPTIONS if pair not in edges] == []


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return root / "pkg"


@pytest.mark.parametrize("lazy", [False, True])
def test_the_checker_sees_an_upward_import(tmp_path: Path, lazy: bool) -> None:
    """The checker itself can fail: an upward import, at module level or inside a
    function, is reported with its module and line."""
    body = "def f():\n    from pkg.high import x\n" if lazy else "from pkg.high import x\n"
    root = _write(
        tmp_path,
        {"__init__.py": "", "low/__init__.py": "", "low/a.py": body, "high.py": "x = 1\n"},
    )
    problems = layering_violations(root, {"pkg": 0, "low": 1, "high": 2}, {})
    assert len(problems) == 1 and problems[0].startswith("pkg.low.a:")


def test_the_checker_sees_a_cycle(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/m.py": "from pkg.b import n\n",
            "b/__init__.py": "from pkg.a.m import *\n",
            "b/n.py": "",
        },
    )
    assert layer_cycles(root) == [["a", "b"]]
    assert module_cycles(root) == [["pkg.a.m", "pkg.b"]]
