"""A whole JSON document is decoded once per import: format detection hands the value
it decoded to the importer instead of the importer parsing the file again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchguard.importers import transcript
from benchguard.importers.registry import import_path
from importers.conftest import FIXTURES


@pytest.mark.parametrize("name", ["inspect_log.json", "swe_agent.traj", "mini_swe_agent.traj.json"])
def test_a_whole_document_log_is_decoded_once(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    size = path.stat().st_size
    whole_decodes: list[int] = []
    real_loads, real_orjson_loads = json.loads, orjson.loads

    def counting(real: Any) -> Any:
        def loads(data: Any, *args: Any, **kwargs: Any) -> Any:
            if len(data) >= size - 4:
                whole_decodes.append(len(data))
            return real(data, *args, **kwargs)

        return loads

    # The registry and the importers decode through the modules (orjson first, json
    # where orjson could disagree: these fixtures need json for nothing).
    monkeypatch.setattr(json, "loads", counting(real_loads))
    monkeypatch.setattr(orjson, "loads", counting(real_orjson_loads))
    imported = import_path(path)
    assert imported.records
    assert len(whole_decodes) == 1, whole_decodes


def test_outside_an_import_the_document_is_read_from_disk(tmp_path: Path) -> None:
    """The hand-over is scoped to one import: a later read of another file (or of the
    same path after it changed) parses what is on disk."""
    path = tmp_path / "log.json"
    shutil.copy(FIXTURES / "swe_agent.traj", path)
    first = import_path(path)
    data = json.loads(path.read_text("utf-8"))
    data["trajectory"] = data["trajectory"][:1]
    path.write_text(json.dumps(data, indent=2), "utf-8")
    second = import_path(path)
    assert len(second.records[0]["trajectory"]) <= len(first.records[0]["trajectory"])
    assert transcript._PREDECODED.get() is None


def test_a_long_first_line_is_sniffed_by_its_head_only_when_it_opens_a_list(
    tmp_path: Path,
) -> None:
    """Detection reads a one-line list's head, not the whole line (the reader reads the
    file); a long first line of any other kind is still read whole to decode it."""
    from benchguard.importers.registry import detect_format

    record = {"folder": "t", "trajectory": [{"name": "exec", "args": {"command": "ls"}}]}
    padded = {**record, "output": "x" * 100_000}
    listing = tmp_path / "results.json"
    listing.write_text(json.dumps([padded, record]), "utf-8")
    assert detect_format(listing) == "benchguard"
    assert len(import_path(listing).records) == 2
    lines = tmp_path / "results.jsonl"
    lines.write_text(json.dumps(padded) + "\n" + json.dumps(record) + "\n", "utf-8")
    assert detect_format(lines) == "benchguard"
    assert len(import_path(lines).records) == 2
    spaced = tmp_path / "spaced.json"
    spaced.write_text("[" + " " * 70_000 + json.dumps(padded) + "]", "utf-8")
    assert len(import_path(spaced).records) == 1
