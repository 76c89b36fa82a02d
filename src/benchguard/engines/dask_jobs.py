"""Long jobs on a ``distributed`` cluster: the executor behind ``run --engine dask``.

Generic: it knows nothing of agents or records. The caller hands it

- a *setup* (a :class:`WorkerSetup`): a picklable object whose ``setup(worker)`` prepares
  a worker for the batch and leaves ``problem`` None when the worker is fit for work,
  or the reason it is not (pre-flight). Jobs are meant for the fit workers; a job that
  lands on an unfit one (its own workers lost) must raise ``distributed.Reschedule``. It is registered as a worker plugin, so it runs on
  every worker present now **and on every worker that joins later**; a worker whose
  setup failed is never given a job, and the refusal is reported;
- the jobs, each a key and a picklable function call, run on a worker as a task;
- callbacks for a finished job, a job whose workers were lost, and the stop request.

What the executor guarantees:

- **one retry on loss.** When a worker dies mid-job the scheduler runs the job again on
  another worker. Every start of a job is logged to the scheduler as an *attempt*
  (:func:`note_attempt`), so the caller learns which attempts were lost; a job whose
  second attempt is lost too is not run a third time (:func:`prior_attempts` lets the
  job refuse) and is reported as lost, naming the workers;
- **nothing silently missing or doubled**: every job ends in exactly one ``on_result``
  or ``on_lost`` call, or is left unfinished when the batch is stopped;
- **stop**: ``should_stop()`` is polled; once it is true, no job is submitted, every
  worker runs ``stop_function`` (which kills the batch's agents there) and the running
  jobs are cancelled;
- **capacity**: at most two jobs per worker thread are in flight (one running, one
  queued behind it: a worker never idles for the client's round trip between jobs), so
  a worker that joins later still gets work as soon as it passes its setup.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchguard.engines.dask_engine import EngineUnavailableError, connect

log = logging.getLogger(__name__)

# How often the executor looks at finished jobs, the stop flag and joining workers.
POLL_S = 0.05
# How often the list of workers fit for work is refreshed (workers join and leave).
REFRESH_S = 2.0
# How long jobs may wait with no worker fit for work before they are reported lost.
WORKERLESS_GRACE_S = 60.0
# How long an in-flight job may go unplaced on any worker before it is submitted again.
STRANDED_S = 6.0
# Jobs queued on a worker thread behind the one it runs. One keeps the thread busy across
# the client's round trip (result, journal, next submit: most of a quick job's cluster
# cost); more would only hold work back from a worker that joins later.
QUEUED_PER_THREAD = 1
# Attempts a job may start; the second is the one retry on another worker.
MAX_ATTEMPTS = 2


class WorkerSetup(Protocol):
    """The per-worker preparation, registered as a worker plugin under ``name``."""

    name: str

    async def setup(self, worker: Any) -> None: ...

    def teardown(self, worker: Any) -> None: ...


@dataclass(frozen=True)
class ClusterSettings:
    """Where the batch runs: a scheduler address (None: a local cluster of ``workers``
    single-slot processes) and whether the inputs are read from shared paths."""

    scheduler: str | None = None
    workers: int = 2
    shared_inputs: bool = False


@dataclass(frozen=True)
class WorkerInfo:
    """A worker as the records and the manifest name it."""

    address: str
    name: str

    def to_json(self) -> dict[str, str]:
        return {"address": self.address, "name": self.name}


@dataclass(frozen=True)
class Refusal:
    """A worker that failed its setup (pre-flight) and was given no job."""

    worker: WorkerInfo
    reason: str

    def to_json(self) -> dict[str, str]:
        return {**self.worker.to_json(), "reason": self.reason}


@dataclass(frozen=True)
class ClusterJob:
    """One job: a stable key (unique in the batch) and the call a worker runs."""

    key: str
    function: Callable[..., Any]
    args: tuple[Any, ...]


@dataclass
class ClusterOutcome:
    """What the executor saw besides the results: refused workers, workers used."""

    refused: list[Refusal] = field(default_factory=list)
    workers: list[WorkerInfo] = field(default_factory=list)
    stopped: bool = False


def attempts_topic(plugin_name: str) -> str:
    return f"{plugin_name}-attempts"


def note_attempt(plugin_name: str, key: str) -> WorkerInfo:
    """On a worker, at the start of a job: log this attempt to the scheduler."""
    from distributed import get_worker

    worker = get_worker()
    info = WorkerInfo(address=str(worker.address), name=str(worker.name))
    worker.log_event(attempts_topic(plugin_name), {"key": key, **info.to_json()})
    return info


def prior_attempts(plugin_name: str, key: str) -> list[WorkerInfo]:
    """On a worker: the attempts of job ``key`` logged before this one."""
    from distributed import get_client

    events = get_client().get_events(attempts_topic(plugin_name))
    return [_attempt(msg) for _, msg in events if isinstance(msg, dict) and msg.get("key") == key]


def _attempt(msg: dict[str, Any]) -> WorkerInfo:
    return WorkerInfo(address=str(msg.get("address", "?")), name=str(msg.get("name", "?")))


def attempts_by_key(client: Any, plugin_name: str) -> dict[str, list[WorkerInfo]]:
    """On the client: every logged attempt of every job, in the order they started."""
    found: dict[str, list[WorkerInfo]] = {}
    for _, msg in client.get_events(attempts_topic(plugin_name)):
        if isinstance(msg, dict) and isinstance(msg.get("key"), str):
            found.setdefault(msg["key"], []).append(_attempt(msg))
    return found


@contextmanager
def cluster_client(scheduler: str | None, local_workers: int) -> Iterator[Any]:
    """A client of the cluster at ``scheduler``; with none, of a local cluster of
    ``local_workers`` single-slot worker processes on 127.0.0.1, closed afterwards."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise EngineUnavailableError(
            "run --engine dask needs the 'distributed' package, which is not installed: "
            "pip install 'benchguard[dask]'"
        ) from exc
    if scheduler is None:
        from distributed.security import Security

        # TLS with a key made for this batch alone: an agent on this machine can reach
        # 127.0.0.1, and a plain scheduler would run whatever code it sent on a worker
        # (outside Landlock and the audit). Without the key it cannot even connect.
        security = Security.temporary()  # type: ignore[no-untyped-call, unused-ignore]
        with (
            LocalCluster(  # type: ignore[no-untyped-call, unused-ignore]
                n_workers=local_workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                protocol="tls",
                security=security,
                dashboard_address=None,
            ) as local,
            Client(local, security=security, set_as_default=False) as client,  # type: ignore[no-untyped-call, unused-ignore]
        ):
            yield client
        return
    with connect(scheduler) as client:
        yield client


def _plugin_status(plugin_name: str, dask_worker: Any) -> tuple[str, int, str | None] | None:
    """On a worker: (name, threads, the setup's refusal or None); None before setup."""
    plugin = dask_worker.plugins.get(plugin_name)
    if plugin is None or not getattr(plugin, "done", False):
        return None
    return str(dask_worker.name), int(dask_worker.state.nthreads), plugin.problem


def worker_statuses(
    client: Any, plugin_name: str
) -> tuple[dict[str, tuple[WorkerInfo, int]], list[Refusal]]:
    """Workers fit for work (address -> info, threads) and the refusals, right now."""
    try:
        answers = client.run(_plugin_status, plugin_name, on_error="return")
    except Exception as exc:  # a worker leaving mid-call; the next refresh asks again
        log.debug("worker status query failed: %s", exc)
        return {}, []
    fit: dict[str, tuple[WorkerInfo, int]] = {}
    refused: list[Refusal] = []
    for address, answer in sorted(answers.items()):
        if not isinstance(answer, tuple):
            continue  # setup still running, or the worker answered with an error
        name, threads, problem = answer
        info = WorkerInfo(address=address, name=name)
        if problem is None:
            fit[address] = (info, max(1, threads))
        else:
            refused.append(Refusal(info, problem))
    return fit, refused


def run_cluster_jobs(
    client: Any,
    setup: WorkerSetup,
    make_jobs: Callable[[], Sequence[ClusterJob]],
    *,
    on_result: Callable[[ClusterJob, Any, list[WorkerInfo]], None],
    on_lost: Callable[[ClusterJob, list[WorkerInfo], str], None],
    should_stop: Callable[[], bool],
    stop_function: Callable[..., Any],
    setup_timeout_s: float = 120.0,
) -> ClusterOutcome:
    """Run the jobs ``make_jobs`` returns on the workers that pass ``setup`` (see the
    module doc). ``make_jobs`` is called once some worker passed: a batch no worker can
    run raises :class:`EngineUnavailableError` before it has made anything."""
    outcome = ClusterOutcome()
    client.register_plugin(setup, name=setup.name)
    fit, refused = _wait_for_setup(client, setup.name, setup_timeout_s)
    outcome.refused = refused
    if not fit:
        reasons = "; ".join(f"{r.worker.address}: {r.reason}" for r in refused)
        raise EngineUnavailableError(
            "no worker of the cluster passed pre-flight"
            + (f": {reasons}" if reasons else f" within {setup_timeout_s:g}s")
        )
    seen_workers = {address: info for address, (info, _) in fit.items()}
    pending = list(reversed(make_jobs()))
    in_flight: dict[Any, ClusterJob] = {}
    # When each in-flight job was last seen placed (submitted, or processing on a worker).
    placed: dict[str, float] = {}
    last_refresh = time.monotonic()
    workerless_since: float | None = None
    try:
        while pending or in_flight:
            if should_stop():
                outcome.stopped = True
                _stop_everywhere(client, stop_function, setup.name)
                client.cancel(list(in_flight), force=True)
                return outcome
            now = time.monotonic()
            if now - last_refresh >= REFRESH_S:
                fit, refused = worker_statuses(client, setup.name)
                last_refresh = now
                _merge_refusals(outcome, refused)
                for address, (info, _) in fit.items():
                    seen_workers.setdefault(address, info)
                _resubmit_stranded(client, in_flight, placed, fit, now)
            capacity = sum(threads for _, threads in fit.values())
            while pending and len(in_flight) < capacity * (1 + QUEUED_PER_THREAD):
                job = pending.pop()
                future = _submit(client, job, fit)
                in_flight[future] = job
                placed[job.key] = now
            if in_flight and not fit:
                workerless_since = workerless_since or now
                if now - workerless_since > WORKERLESS_GRACE_S:
                    _lose_all(client, setup.name, in_flight, pending, on_lost)
                    break
            else:
                workerless_since = None
            for future in [f for f in in_flight if f.done()]:
                job = in_flight.pop(future)
                attempts = attempts_by_key(client, setup.name).get(job.key, [])
                if future.status == "finished":
                    on_result(job, future.result(), attempts)
                elif future.status != "cancelled":
                    reason = _failure(future)
                    on_lost(job, attempts, reason)
            time.sleep(POLL_S)
    finally:
        outcome.workers = [seen_workers[a] for a in sorted(seen_workers)]
        try:
            client.unregister_worker_plugin(setup.name)
        except Exception as exc:  # workers gone already; their directories went with them
            log.debug("unregistering %s: %s", setup.name, exc)
    return outcome


def _submit(client: Any, job: ClusterJob, fit: dict[str, tuple[WorkerInfo, int]]) -> Any:
    """One task for ``job``, meant for the workers fit now (loose: a job that lands on an
    unfit worker raises ``distributed.Reschedule`` there and is placed again)."""
    return client.submit(
        job.function,
        *job.args,
        key=f"{job.key}-{uuid.uuid4().hex[:8]}",
        pure=False,
        workers=sorted(fit),
        allow_other_workers=True,
    )


def _resubmit_stranded(
    client: Any,
    in_flight: dict[Any, ClusterJob],
    placed: dict[str, float],
    fit: dict[str, tuple[WorkerInfo, int]],
    now: float,
) -> None:
    """Submit again every job whose task no worker has been processing for
    :data:`STRANDED_S` while fit workers exist.

    When every worker a task was meant for is lost, the scheduler keeps it waiting for
    them ("no-worker") even after other workers join; only a new task reaches those.
    A task that is running is processing somewhere and is never submitted twice."""
    if not fit:
        return
    try:
        processing = {key for keys in client.processing().values() for key in keys}
    except Exception as exc:  # the scheduler busy or a worker leaving: ask next time
        log.debug("processing query failed: %s", exc)
        return
    for future, job in list(in_flight.items()):
        if future.key in processing or future.done():
            placed[job.key] = now
        elif now - placed[job.key] > STRANDED_S:
            client.cancel([future], force=True)
            del in_flight[future]
            in_flight[_submit(client, job, fit)] = job
            placed[job.key] = now


def _failure(future: Any) -> str:
    try:
        exc = future.exception()
    except Exception as err:  # the exception itself could not be fetched
        return f"{type(err).__name__}: {err}"
    return f"{type(exc).__name__}: {exc}"


def _wait_for_setup(
    client: Any, plugin_name: str, timeout_s: float
) -> tuple[dict[str, tuple[WorkerInfo, int]], list[Refusal]]:
    """Wait until every worker present has finished its setup (or the timeout)."""
    deadline = time.monotonic() + timeout_s
    while True:
        fit, refused = worker_statuses(client, plugin_name)
        present = len(client.scheduler_info().get("workers", {}))
        if len(fit) + len(refused) >= present > 0 or time.monotonic() > deadline:
            return fit, refused
        time.sleep(POLL_S)


def _merge_refusals(outcome: ClusterOutcome, refused: list[Refusal]) -> None:
    known = {r.worker.address for r in outcome.refused}
    outcome.refused.extend(r for r in refused if r.worker.address not in known)


def _stop_everywhere(client: Any, stop_function: Callable[..., Any], plugin_name: str) -> None:
    try:
        client.run(stop_function, plugin_name, on_error="return")
    except Exception as exc:  # a worker that cannot be reached has no agents to keep alive
        log.warning("stopping the workers' agents: %s", exc)


def _lose_all(
    client: Any,
    plugin_name: str,
    in_flight: dict[Any, ClusterJob],
    pending: list[ClusterJob],
    on_lost: Callable[[ClusterJob, list[WorkerInfo], str], None],
) -> None:
    attempts = attempts_by_key(client, plugin_name)
    client.cancel(list(in_flight), force=True)
    for job in [*in_flight.values(), *reversed(pending)]:
        on_lost(
            job,
            attempts.get(job.key, []),
            f"no worker fit for work for {WORKERLESS_GRACE_S:g}s",
        )
    in_flight.clear()
    pending.clear()
