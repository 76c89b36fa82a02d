"""The ATIF importer: Harbor's own golden trajectories and hand-written ones for every
shape the specification allows (versions 1.0 to 1.7)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.rules import load_ruleset
from benchguard.importers import atif
from benchguard.importers.registry import detect_format, import_path
from benchguard.importers.transcript import UnreadableLogError

GOLDEN = Path(__file__).parent / "fixtures" / "harbor_golden"
GOLDEN_FILES = sorted(GOLDEN.glob("*/*.json"))
SUMMARIZATION = "hello-world-context-summarization.trajectory"


def _write(path: Path, document: dict[str, Any], *, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    return path


def _trajectory(version: str = "ATIF-v1.7", **extra: Any) -> dict[str, Any]:
    """A v1.7 run exercising every mapping rule (written from the specification)."""
    document: dict[str, Any] = {
        "schema_version": version,
        "session_id": "run-1",
        "trajectory_id": "main",
        "agent": {"name": "my-agent", "version": "1.0", "model_name": "acme/model-1"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "You are a careful agent."},
            {"step_id": 2, "source": "user", "message": "Make hello.txt say hi."},
            {
                "step_id": 3,
                "source": "agent",
                "message": "Two commands.",
                "tool_calls": [
                    {"tool_call_id": "a", "function_name": "bash", "arguments": {"cmd": "ls"}},
                    {"tool_call_id": "b", "function_name": "bash", "arguments": {"cmd": "pwd"}},
                ],
                "observation": {
                    "results": [
                        # No id: fills the first call still waiting (a).
                        {"content": "hello.txt"},
                        {"source_call_id": "b", "content": "/app"},
                        # No call left: kept as a step of its own.
                        {"content": "[terminal resized]"},
                    ]
                },
            },
            {
                "step_id": 4,
                "source": "agent",
                # v1.6 content parts in a message and a result.
                "message": [{"type": "text", "text": "echo hi > hello.txt"}],
                "observation": {
                    "results": [
                        {
                            "content": [
                                {"type": "text", "text": "done"},
                                {"type": "image", "source": {"media_type": "image/png"}},
                            ]
                        }
                    ]
                },
            },
            {
                "step_id": 5,
                "source": "agent",
                "message": "Delegating a check.",
                "tool_calls": [{"tool_call_id": "c", "function_name": "delegate", "arguments": {}}],
                "observation": {
                    "results": [
                        {
                            "source_call_id": "c",
                            "content": "checked",
                            "subagent_trajectory_ref": [{"trajectory_id": "child"}],
                        }
                    ]
                },
            },
            {"step_id": 6, "source": "agent", "message": "hello.txt now says hi."},
        ],
        "subagent_trajectories": [
            {
                "schema_version": version,
                "trajectory_id": "child",
                "agent": {"name": "checker", "version": "1.0"},
                "steps": [
                    {"step_id": 1, "source": "user", "message": "Check hello.txt."},
                    {
                        "step_id": 2,
                        "source": "agent",
                        "message": "ok",
                        "tool_calls": [
                            {
                                "tool_call_id": "x",
                                "function_name": "read_file",
                                "arguments": {"path": "hello.txt"},
                            }
                        ],
                        "observation": {"results": [{"source_call_id": "x", "content": "hi"}]},
                    },
                ],
            }
        ],
    }
    document.update(extra)
    return document


def test_mapping_follows_the_specification(tmp_path: Path) -> None:
    path = _write(tmp_path / "trajectory.json", _trajectory())
    imported = import_path(path)
    assert imported.format == "atif" and imported.problems == []
    [record] = imported.records
    steps = [(s["name"], s["args"], s["result"], s["status"]) for s in record["trajectory"]]
    assert steps == [
        ("bash", {"cmd": "ls"}, "hello.txt", "completed"),
        ("bash", {"cmd": "pwd"}, "/app", "completed"),
        ("observation", {}, "[terminal resized]", "completed"),
        ("observation", {"message": "echo hi > hello.txt"}, "done", "completed"),
        ("delegate", {}, "checked", "completed"),
        ("read_file", {"path": "hello.txt"}, "hi", "completed"),
    ]
    assert record["input"] == "Make hello.txt say hi."
    assert record["output"] == "hello.txt now says hi."
    assert record["name"] == "main"
    assert record["source"]["model"] == "acme/model-1"
    assert record["source"]["schema_version"] == "ATIF-v1.7"
    assert record["import_errors"] == []


@pytest.mark.parametrize("minor", range(8))
def test_every_version_is_detected_and_read(tmp_path: Path, minor: int) -> None:
    path = _write(tmp_path / "t.json", _trajectory(f"ATIF-v1.{minor}"), indent=None)
    assert detect_format(path) == "atif"
    [record] = import_path(path).records
    assert record["import_errors"] == []
    assert len(record["trajectory"]) == 6


def test_a_newer_minor_version_is_read_and_said(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.json", _trajectory("ATIF-v1.9"))
    [record] = import_path(path).records
    assert len(record["trajectory"]) == 6
    assert any("ATIF-v1.9" in e and "read as ATIF-v1.7" in e for e in record["import_errors"])


def test_a_run_that_only_talked_keeps_one_step(tmp_path: Path) -> None:
    document = {
        "schema_version": "ATIF-v1.2",
        "session_id": "s",
        "agent": {"name": "chat", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "What is in /tests?"},
            {"step_id": 2, "source": "agent", "message": "I looked at /tests/test.sh."},
        ],
    }
    [record] = import_path(_write(tmp_path / "t.json", document)).records
    assert [s["name"] for s in record["trajectory"]] == ["agent_messages"]
    assert record["trajectory"][0]["result"] == "I looked at /tests/test.sh."
    assert record["import_errors"] == []


@pytest.mark.parametrize("golden", GOLDEN_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_harbor_golden_trajectories_are_read_clean(golden: Path) -> None:
    """Harbor's own honest runs: read with no problem, every record has steps, and the
    terminal-bench profile finds nothing."""
    assert detect_format(golden) == "atif"
    imported = import_path(golden)
    [record] = imported.records
    assert record["trajectory"]
    if golden.name != SUMMARIZATION + ".json":
        assert record["import_errors"] == []
    report = scan_record(record, load_ruleset("terminal-bench"))
    assert report.status == "clean", report.findings


def test_subagent_files_referred_to_by_path_are_read(tmp_path: Path) -> None:
    """Laid out as Harbor writes a trial's agent/ folder, the summarization run's three
    subagent trajectories are read after the step that delegates to them."""
    shutil.copy(GOLDEN / "terminus_2" / f"{SUMMARIZATION}.json", tmp_path / "trajectory.json")
    for part in ("summary", "questions", "answers"):
        name = f"trajectory.summarization-1-{part}.json"
        shutil.copy(
            GOLDEN / "terminus_2" / f"{SUMMARIZATION}.summarization-1-{part}.json", tmp_path / name
        )
    alone_file = import_path(GOLDEN / "terminus_2" / f"{SUMMARIZATION}.json")
    alone = alone_file.records[0]
    # Read without its subagent files, the run is not all there: that is a problem of
    # the file (an input gap, exit 3), never a clean read.
    assert len(alone_file.problems) == 3
    assert all("not a file under" in p for p in alone_file.problems)
    laid_out = import_path(tmp_path / "trajectory.json")
    assert laid_out.problems == []
    [record] = laid_out.records
    assert record["import_errors"] == []
    assert len(record["trajectory"]) > len(alone["trajectory"])
    assert record["output"] == alone["output"]


def test_a_path_outside_the_trajectory_folder_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    _write(secret, _trajectory())
    inner = tmp_path / "agent"
    inner.mkdir()
    document = _trajectory()
    document["steps"][4]["observation"]["results"][0]["subagent_trajectory_ref"] = [
        {"session_id": "s", "trajectory_path": "../secret.json"},
        {"session_id": "s", "trajectory_path": "/etc/passwd"},
    ]
    [record] = import_path(_write(inner / "t.json", document)).records
    errors = record["import_errors"]
    assert sum("is not a file under" in e for e in errors) == 2
    assert len(import_path(inner / "t.json").problems) == 2


def test_a_session_id_only_reference_is_legal_and_noted(tmp_path: Path) -> None:
    """Up to v1.6 a subagent may be named by session id alone (nothing to read)."""
    document = _trajectory("ATIF-v1.6")
    document["steps"][4]["observation"]["results"][0]["subagent_trajectory_ref"] = [
        {"session_id": "elsewhere"}
    ]
    imported = import_path(_write(tmp_path / "t.json", document))
    assert imported.problems == []
    assert any(
        "'elsewhere' names no trajectory_path" in e for e in imported.records[0]["import_errors"]
    )


def test_subagent_cycles_and_depth_are_bounded(tmp_path: Path) -> None:
    document = _trajectory()
    document["steps"][4]["observation"]["results"][0]["subagent_trajectory_ref"] = [
        {"trajectory_path": "t.json"}
    ]
    [record] = import_path(_write(tmp_path / "t.json", document)).records
    # The file refers to itself: read once.
    assert len(record["trajectory"]) == 6


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ({"schema_version": "ATIF-v1.4", "steps": {}}, "field 'steps' is dict, expected a list"),
        ({"schema_version": "v1.4", "steps": []}, "field 'schema_version' is 'v1.4'"),
        ({"schema_version": 1.4, "steps": []}, "field 'schema_version' is 1.4"),
    ],
)
def test_bad_files_name_the_file_and_field(
    tmp_path: Path, document: dict[str, Any], said: str
) -> None:
    path = _write(tmp_path / "bad.json", document)
    with pytest.raises(UnreadableLogError) as caught:
        import_path(path, "atif")
    assert str(path) in str(caught.value) and said in str(caught.value)


def test_a_file_over_the_size_bound_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "big.json", _trajectory())
    monkeypatch.setattr(atif, "MAX_FILE_BYTES", 100)
    with pytest.raises(UnreadableLogError, match="over the 100-byte limit"):
        atif.import_file(path)


def test_malformed_entries_are_named_and_the_rest_kept(tmp_path: Path) -> None:
    document = _trajectory()
    document["steps"].insert(2, "not a step")
    document["steps"][3]["tool_calls"].append(7)
    document["steps"][4]["observation"] = {"results": "nope"}
    [record] = import_path(_write(tmp_path / "t.json", document)).records
    errors = record["import_errors"]
    assert any("steps[2]: not an object" in e for e in errors)
    assert any("steps[3].tool_calls[2]: not an object" in e for e in errors)
    assert any("steps[4].observation.results is not a list" in e for e in errors)
    assert [s["name"] for s in record["trajectory"]][:2] == ["bash", "bash"]
