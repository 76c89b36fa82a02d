"""Harbor job and trial directories: one record per trial, its verifier's reward as the
outcome.

Layout (Harbor ``models/trial/paths.py``): a trial directory holds ``config.json`` (the
trial's configuration: ``trial_name``, ``task``, ``agent``, ``job_id``), ``result.json``,
``agent/`` (what the agent wrote; ATIF agents write ``agent/trajectory.json``) and
``verifier/`` (``reward.txt``, one float, or ``reward.json``, a flat object of named
rewards; Harbor reads ``reward.txt`` first). A job directory holds ``config.json``,
``result.json`` and one directory per trial.

Each trial's record is its ATIF trajectory (:mod:`benchguard.importers.atif`), named
after the trial, with ``folder`` the task, the reward under ``VerificationCorrectness``
(so ``score`` composes an outcome and the gate can zero it) and ``config.json`` under
``source.harbor.config``. A trial with no trajectory, or a reward that cannot be read,
is named in the file's problems: its record is never published as a clean run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from benchguard.importers import atif
from benchguard.importers.transcript import ImportedFile, UnreadableLogError, as_dict
from benchguard.record.scores import VERIFICATION_CORRECTNESS

CONFIG_FILE = "config.json"
RESULT_FILE = "result.json"
TRAJECTORY_FILE = Path("agent") / "trajectory.json"
REWARD_TEXT = Path("verifier") / "reward.txt"
REWARD_JSON = Path("verifier") / "reward.json"
# The reward key Harbor's own single-reward verifiers write in reward.json.
REWARD_KEY = "reward"
# config.json, result.json and reward files are small; past this they are not read.
MAX_SIDE_FILE_BYTES = 16 << 20
# Trials read from one job directory.
MAX_TRIALS = 100_000


def is_trial_dir(path: Path) -> bool:
    """A Harbor trial directory: ``config.json`` beside ``agent/`` or ``verifier/``."""
    return (path / CONFIG_FILE).is_file() and (
        (path / "agent").is_dir() or (path / "verifier").is_dir()
    )


def is_job_dir(path: Path) -> bool:
    """A Harbor job directory: ``config.json`` and at least one trial directory in it."""
    return (path / CONFIG_FILE).is_file() and not is_trial_dir(path) and bool(_trials(path))


def is_harbor_dir(path: Path) -> bool:
    return path.is_dir() and (is_trial_dir(path) or is_job_dir(path))


def _trials(job: Path) -> list[Path]:
    try:
        children = sorted(job.iterdir())
    except OSError:
        return []
    return [c for c in children if not c.name.startswith(".") and c.is_dir() and is_trial_dir(c)]


def import_path(path: Path) -> ImportedFile:
    """The ``atif`` format's reader: a Harbor job or trial directory, or one ATIF
    trajectory file."""
    return import_directory(path) if path.is_dir() else atif.import_file(path)


def import_directory(path: Path) -> ImportedFile:
    """One record per trial of a job or trial directory; ``UnreadableLogError`` when
    ``path`` is neither."""
    if is_trial_dir(path):
        trials = [path]
    elif is_job_dir(path):
        trials = _trials(path)
    else:
        raise UnreadableLogError(
            f"{path}: not a Harbor job or trial directory (a trial directory holds "
            f"{CONFIG_FILE} and agent/ or verifier/; a job directory holds trial directories)"
        )
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    if len(trials) > MAX_TRIALS:
        problems.append(f"{path}: {len(trials)} trials, over {MAX_TRIALS}; the rest not read")
        trials = trials[:MAX_TRIALS]
    attempts: dict[str, int] = {}
    for trial in trials:
        try:
            record, unread = trial_reading(trial)
        except UnreadableLogError as exc:
            problems.append(f"{exc}; trial not scanned")
            continue
        # Harbor runs a task several times (attempts): each trial of a task is one
        # iteration, numbered in trial-name order, so rows keep them apart.
        record["iteration"] = attempts.get(record["folder"], 0)
        attempts[record["folder"]] = record["iteration"] + 1
        records.append(record)
        problems.extend(unread)
    return ImportedFile(path=path, format=atif.FORMAT_NAME, records=records, problems=problems)


def trial_record(trial: Path) -> dict[str, Any]:
    """The record of one trial (see :func:`trial_reading`)."""
    return trial_reading(trial)[0]


def trial_reading(trial: Path) -> tuple[dict[str, Any], list[str]]:
    """The record of one trial; ``UnreadableLogError`` when its trajectory or config
    cannot be read."""
    config = _side_json(trial / CONFIG_FILE, "trial configuration")
    if not isinstance(config, dict):
        raise UnreadableLogError(f"{trial / CONFIG_FILE}: not a JSON object")
    trajectory_path = trial / TRAJECTORY_FILE
    if not trajectory_path.is_file():
        raise UnreadableLogError(
            f"{trial}: no {TRAJECTORY_FILE} (the agent wrote no ATIF trajectory)"
        )
    document = atif.read_trajectory_file(trajectory_path)
    name = _text(config.get("trial_name")) or trial.name
    record, unread = atif.trajectory_reading(trajectory_path, document, name=name)
    agent = as_dict(config.get("agent"))
    task = as_dict(config.get("task"))
    task_name = _task_name(task) or name.split("__")[0]
    record["folder"] = task_name
    source = record["source"]
    if not source.get("model"):
        source["model"] = _text(agent.get("model_name"))
    source["harbor"] = {
        "trial_dir": str(trial),
        "trial_name": name,
        "task": task_name,
        "job_id": config.get("job_id"),
        "config": config,
    }
    if _text(task.get("source")):
        source["task"] = task["source"]
    status, error = _trial_status(trial)
    record["status"] = status
    if error:
        record["error"] = error
    reward = _reward(trial)
    if isinstance(reward, str):
        record["import_errors"].append(reward)
    else:
        value, where = reward
        record["scores"] = {
            VERIFICATION_CORRECTNESS: {
                "score": value,
                "success": value >= 1.0,
                "reason": f"Harbor verifier reward {value:g} ({where})",
            }
        }
    return record, unread


def _reward(trial: Path) -> tuple[float, str] | str:
    """The trial's reward and the file it came from, or why there is none. Read as
    Harbor reads it: ``reward.txt`` first, else ``reward.json``."""
    text_path, json_path = trial / REWARD_TEXT, trial / REWARD_JSON
    if text_path.is_file():
        raw = _side_bytes(text_path).decode("utf-8", "replace").strip()
        try:
            value = float(raw)
        except ValueError:
            return f"{text_path}: reward {raw[:40]!r} is not a number; no outcome"
        return _unit(value, str(REWARD_TEXT), text_path)
    if json_path.is_file():
        try:
            data = _side_json(json_path, "verifier reward")
        except UnreadableLogError as exc:
            return f"{exc}; no outcome"
        if not isinstance(data, dict):
            return f"{json_path}: not a JSON object of named rewards; no outcome"
        numbers = {
            k: v for k, v in data.items() if isinstance(v, int | float) and not isinstance(v, bool)
        }
        if REWARD_KEY in numbers:
            return _unit(float(numbers[REWARD_KEY]), f"{REWARD_JSON} {REWARD_KEY}", json_path)
        if len(numbers) == 1:
            key, value = next(iter(numbers.items()))
            return _unit(float(value), f"{REWARD_JSON} {key}", json_path)
        return (
            f"{json_path}: field {REWARD_KEY!r} missing and {len(numbers)} numeric rewards "
            f"({', '.join(sorted(numbers)[:8])}); which is the outcome is unknown; no outcome"
        )
    return f"{trial}: no {REWARD_TEXT} or {REWARD_JSON} (the verifier gave no reward); no outcome"


def _unit(value: float, where: str, path: Path) -> tuple[float, str] | str:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return f"{path}: reward {value!r} is outside [0, 1]; no outcome"
    return value, where


def _trial_status(trial: Path) -> tuple[str, str | None]:
    """``success``, or ``error`` and the exception Harbor recorded in result.json."""
    path = trial / RESULT_FILE
    if not path.is_file():
        return "success", None
    try:
        result = _side_json(path, "trial result")
    except UnreadableLogError:
        return "success", None
    info = as_dict(as_dict(result).get("exception_info"))
    if not info:
        return "success", None
    kind = _text(info.get("exception_type")) or "exception"
    message = _text(info.get("exception_message")) or ""
    return "error", f"{kind}: {message}".strip()[:500]


def _task_name(task: dict[str, Any]) -> str | None:
    path = _text(task.get("path"))
    return Path(path).name if path else None


def _side_bytes(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_SIDE_FILE_BYTES:
            raise UnreadableLogError(f"{path}: {size} bytes, over {MAX_SIDE_FILE_BYTES}")
        return path.read_bytes()
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc


def _side_json(path: Path, what: str) -> Any:
    data = _side_bytes(path)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise UnreadableLogError(f"{path}: not valid JSON ({exc}); read as {what}") from exc


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
