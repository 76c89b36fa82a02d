"""Reading what an agent did, whatever way it recorded it.

Three adapters turn an agent's leftovers into ``(trajectory, output, errors)``:

- ``jsonl``: our protocol. The agent appends one JSON object per tool call to the file
  named by ``BENCHGUARD_TRAJECTORY``: ``{"name", "args", "result", "status"}``. The final
  answer is the agent's stdout.
- ``claude-stream-json``: Claude Code's ``--output-format stream-json`` on stdout.
- ``stdout``: no trajectory at all; stdout is the final output.

Nothing here raises on bad input: an unknown or corrupt line is kept as an error on the
record, and every readable line is kept, so a half-written file from a killed agent
still yields its steps (and is still scanned).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.harness.agents.config import TrajectoryAdapter
from benchguard.importers.claude_code import parse_stream_json
from benchguard.importers.transcript import as_args, json_lines, make_step

STATUSES = ("called", "completed", "error")
# A runaway agent must not make the harness hold gigabytes: past this the rest of a
# file is dropped and the record says so.
MAX_CAPTURE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Capture:
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""
    errors: list[str] = field(default_factory=list)


def read_bounded(path: Path, *, limit: int = MAX_CAPTURE_BYTES) -> tuple[str, bool]:
    """The file's text (UTF-8, bad bytes replaced) and whether it was cut at ``limit``."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        return "", False
    except OSError as exc:
        return f"(unreadable: {exc})", False
    return data[:limit].decode("utf-8", errors="replace"), len(data) > limit


def parse_protocol_lines(lines: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Our JSONL protocol: one ``{name, args, result, status}`` object per line."""
    steps: list[dict[str, Any]] = []
    errors: list[str] = []
    for line in json_lines(lines):
        number, event = line.number, line.value
        if line.error is not None:
            errors.append(f"trajectory line {number}: {line.error}")
            continue
        if not isinstance(event, dict):
            errors.append(
                f"trajectory line {number}: expected an object, got {type(event).__name__}"
            )
            continue
        name = event.get("name")
        if not isinstance(name, str) or not name:
            errors.append(f"trajectory line {number}: 'name' must be a non-empty string")
            # Kept anyway: its args and result may still show what the agent touched.
            name = "unknown"
        status = event.get("status", "completed")
        if status not in STATUSES:
            errors.append(
                f"trajectory line {number}: status {status!r} is not one of {list(STATUSES)}"
            )
            status = "error"
        unknown = sorted(set(event) - {"name", "args", "result", "status"})
        if unknown:
            errors.append(f"trajectory line {number}: unknown keys {unknown} kept in args")
        args = as_args(event.get("args"))
        if unknown:
            args = {**args, "_unknown": {k: event[k] for k in unknown}}
        steps.append(make_step(name, args, _as_result(event.get("result")), status))
    return steps, errors


def _as_result(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def capture(adapter: TrajectoryAdapter, *, stdout_file: Path, trajectory_file: Path) -> Capture:
    """Read one finished (or killed) agent run through ``adapter``."""
    stdout, stdout_cut = read_bounded(stdout_file)
    errors = [f"stdout truncated at {MAX_CAPTURE_BYTES} bytes"] if stdout_cut else []
    if adapter == "stdout":
        return Capture(output=stdout.strip(), errors=errors)
    if adapter == "claude-stream-json":
        parsed = parse_stream_json(stdout.splitlines())
        return Capture(
            trajectory=list(parsed.trajectory),
            output=parsed.output,
            errors=errors + [f"stream-json {e}" for e in parsed.errors],
        )
    text, cut = read_bounded(trajectory_file)
    if cut:
        errors.append(f"trajectory file truncated at {MAX_CAPTURE_BYTES} bytes")
        # The last line of a cut file is partial; dropping it beats a spurious parse error.
        text = text.rsplit("\n", 1)[0]
    steps, line_errors = parse_protocol_lines(text.splitlines())
    return Capture(trajectory=steps, output=stdout.strip(), errors=errors + line_errors)
