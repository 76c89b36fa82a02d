"""The dask engine: the same units of work, spread by ``dask.bag``.

``dask[bag]`` is an optional extra and imported only when this engine runs. With no
scheduler address the local *processes* scheduler runs the work (regex matching holds
the GIL, so threads would not help); ``threads`` and ``synchronous`` may be named
instead. Any other scheduler value must be a ``distributed`` scheduler address
(``tcp://HOST:PORT``): its cluster's workers, in their own processes or on other
machines, run the same units of work (each worker imports benchguard itself; only
paths or records and the rules travel). ``--workers`` sizes the local schedulers only:
a cluster has the workers it was started with. Bags keep partition order, so results come back in input
order and are identical to the serial engine's.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchguard.detection.models import CheatingReport, Rule
from benchguard.engines.work import FileScan, RecordKnowledge, scan_one_file, scan_one_record
from benchguard.errors import EngineError
from benchguard.record.rules import as_ruleset

LOCAL_SCHEDULERS = ("processes", "threads", "synchronous")
# How long a scheduler address is given to answer before the engine gives up.
CONNECT_TIMEOUT_S = 10.0
_ADDRESS = re.compile(
    r"(?:(?:tcp|tls|ws|wss)://)?(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})"
)


class EngineUnavailableError(EngineError, RuntimeError):
    """The engine asked for needs a package that is not installed."""


def _bag_module() -> Any:
    try:
        import dask.bag
    except ImportError as exc:
        raise EngineUnavailableError(
            "the dask engine needs the optional 'dask[bag]' dependency, which is not "
            "installed: pip install 'benchguard[dask]' (or use --engine serial)"
        ) from exc
    return dask.bag


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def _compute(bag: Any, scheduler: str | None, workers: int | None) -> list[Any]:
    if scheduler is None or scheduler in LOCAL_SCHEDULERS:
        chosen = scheduler or "processes"
        kwargs: dict[str, Any] = {"scheduler": chosen}
        if chosen != "synchronous":
            kwargs["num_workers"] = workers or default_workers()
        return list(bag.compute(**kwargs))
    with connect(scheduler) as client:
        # The cluster's workers run the same units of work as the local schedulers;
        # the bag keeps partition order, so results come back in input order.
        return list(bag.compute(scheduler=client))


def connect(scheduler: str) -> Any:
    """A client of the ``distributed`` scheduler at ``scheduler`` (use it with ``with``);
    :class:`EngineUnavailableError`, naming the address, when it cannot be had."""
    problem = scheduler_address_problem(scheduler)
    if problem is not None:
        raise EngineUnavailableError(problem)
    try:
        from distributed import Client  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:
        raise EngineUnavailableError(
            f"scheduler address {scheduler!r} needs the 'distributed' package, which is "
            "not installed: pip install 'benchguard[dask]' (or omit --scheduler to use the "
            f"local scheduler; local choices: {', '.join(LOCAL_SCHEDULERS)})"
        ) from exc
    try:
        return Client(  # type: ignore[no-untyped-call, unused-ignore]
            scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False
        )
    except (OSError, TimeoutError) as exc:
        raise EngineUnavailableError(
            f"--scheduler {scheduler}: cannot reach a dask scheduler there within "
            f"{CONNECT_TIMEOUT_S:g}s ({type(exc).__name__}: {exc})"
        ) from exc


def scheduler_address_problem(scheduler: str) -> str | None:
    """Why ``scheduler`` is neither a local scheduler name nor a scheduler address, or
    None. An address is ``PROTOCOL://HOST:PORT`` (tcp, tls, ws, wss) or ``HOST:PORT``."""
    if scheduler in LOCAL_SCHEDULERS:
        return None
    match = _ADDRESS.fullmatch(scheduler)
    if match is not None and 0 < int(match["port"]) < 65536:
        return None
    close = difflib.get_close_matches(scheduler, LOCAL_SCHEDULERS, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return (
        f"--scheduler {scheduler!r} is neither a local scheduler "
        f"({', '.join(LOCAL_SCHEDULERS)}) nor a scheduler address like "
        f"tcp://HOST:PORT{hint}"
    )


def _partitions(count: int, workers: int | None) -> int:
    # A few partitions per worker balances uneven record sizes without paying
    # per-task overhead for every record.
    return max(1, min(count, (workers or default_workers()) * 4))


def _scan_record_item(
    item: tuple[Mapping[str, Any], Sequence[Rule]],
    rules: Sequence[Rule],
    time_budget_s: float,
) -> CheatingReport:
    record, dynamic = item
    return scan_one_record(record, rules, dynamic, time_budget_s)


def scan_records_dask(
    records: Sequence[Mapping[str, Any]],
    rules: Sequence[Rule],
    dynamic_rules: Sequence[Sequence[Rule]],
    time_budget_s: float,
    scheduler: str | None,
    workers: int | None,
) -> list[CheatingReport]:
    items = list(zip(records, dynamic_rules, strict=True))
    return _map(
        items,
        _scan_record_item,
        scheduler,
        workers,
        rules=as_ruleset(rules),
        time_budget_s=time_budget_s,
    )


def scan_files_dask(
    paths: Sequence[str],
    rules: Sequence[Rule],
    format_name: str | None,
    time_budget_s: float,
    scheduler: str | None,
    workers: int | None,
    knowledge: RecordKnowledge | None = None,
) -> list[FileScan]:
    # Only paths travel to the workers; each reads and scans its own files, so memory
    # stays bounded by the largest file per worker.
    return _map(
        list(paths),
        scan_one_file,
        scheduler,
        workers,
        rules=as_ruleset(rules),
        format_name=format_name,
        time_budget_s=time_budget_s,
        knowledge=knowledge,
    )


def _map(
    items: list[Any],
    func: Callable[..., Any],
    scheduler: str | None,
    workers: int | None,
    **kwargs: Any,
) -> list[Any]:
    """``func(item, **kwargs)`` for each item, in item order, on the chosen scheduler."""
    # Imported first even with nothing to do: a missing dask is reported either way.
    bag_module = _bag_module()
    if not items:
        return []
    bag = bag_module.from_sequence(items, npartitions=_partitions(len(items), workers))
    return _compute(bag.map(func, **kwargs), scheduler, workers)
