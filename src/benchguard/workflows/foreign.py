"""What the user knows of a foreign log, for ``scan`` and ``score`` alike: the
benchmark's material (``--material DIR``) and the task's real history (``--repo`` with
``--base-commit`` or ``--instances``).

One :class:`ForeignKnowledge` is handed to the scan engine (each record gets the
material's fingerprints, and its report is resolved against the history, where the
record was read) or applied by ``score`` around its rescan; the verdicts are the same
either way, before dismissals and the gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchguard.detection.given_material import GivenMaterial, read_given_material
from benchguard.detection.models import CheatingReport, Rule
from benchguard.workflows.history import HistoryKnowledge, history_knowledge


@dataclass(frozen=True)
class ForeignKnowledge:
    material: GivenMaterial | None = None
    history: HistoryKnowledge | None = None

    def rules_for(self, record: Mapping[str, Any]) -> Sequence[Rule]:
        return self.material.rules_for(record) if self.material is not None else ()

    def resolve(
        self, record: Mapping[str, Any], label: str, report: CheatingReport
    ) -> CheatingReport:
        if self.history is None:
            return report
        return self.history.resolve(record, label, report)


def foreign_knowledge(
    *,
    material: Path | None = None,
    repo: Path | None = None,
    base_commit: str | None = None,
    instances: Path | None = None,
) -> ForeignKnowledge | None:
    """The options checked (bad input names the option and value); None if none given."""
    history = history_knowledge(repo, base_commit, instances)
    given = read_given_material(material) if material is not None else None
    if history is None and given is None:
        return None
    return ForeignKnowledge(given, history)


__all__ = ["ForeignKnowledge", "foreign_knowledge"]
