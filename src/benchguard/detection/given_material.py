"""The benchmark's own material for a foreign log (``scan``/``score --material DIR``).

A user who has the benchmark's tasks, tests or solutions names their directory; it is
fingerprinted exactly as ``benchguard run`` fingerprints a batch's material
(:func:`~benchguard.detection.material.fingerprint_rules`: windows of each file's
distinctive lines, matched against tool results only, conclusive). Per record, as the
harness does per run, a window the record's prompt contains is not evidence; and, the
provenance rule for values the agent wrote, neither is a window the agent itself typed
or wrote (a write tool's content, a heredoc) at or before the first step whose result
shows it: reading one's own deliverable back is not reaching the material, while
printing the material first and copying it afterwards still is.

What it cannot see: where the material lived on the agent's machine (its paths are
not known, so only its contents are evidence, never a read of its path), and values
shorter than the fingerprints' minimum. A directory the caps cannot read whole, or
with nothing to fingerprint, is refused (bad input), never half used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.detection.material import (
    MAX_MATERIAL_BYTES,
    MAX_MATERIAL_FILES,
    fingerprint_rules,
    folded_literal,
    for_prompt,
    read_material_bounded,
)
from benchguard.detection.models import Rule
from benchguard.detection.surfaces import as_text, dict_entries, entry_surfaces
from benchguard.errors import BadInputError

# Distinct prompts whose cut is remembered (a batch repeats its prompts).
_MAX_CUTS = 256


@dataclass
class GivenMaterial:
    """The fingerprints of one material directory, and the per-prompt cuts made."""

    root: str
    files: int
    fingerprints: tuple[Rule, ...]
    _cuts: dict[str, tuple[Rule, ...]] = field(default_factory=dict, repr=False)

    def rules_for(self, record: Mapping[str, Any]) -> tuple[Rule, ...]:
        """The fingerprints this record is scanned with (see the module doc)."""
        prompt = as_text(record.get("input"))
        rules = self._cuts.get(prompt)
        if rules is None:
            if len(self._cuts) >= _MAX_CUTS:
                self._cuts.clear()
            rules = self._cuts[prompt] = for_prompt(self.fingerprints, prompt)
        return without_own_writes(rules, record)


def without_own_writes(rules: Sequence[Rule], record: Mapping[str, Any]) -> tuple[Rule, ...]:
    """``rules`` less each window the agent typed or wrote no later than the first
    step whose result shows it (the same objects when nothing is cut)."""
    steps = [entry_surfaces(i, entry) for i, entry in enumerate(dict_entries(record))]
    args = [a.text.casefold() for a, _ in steps]
    written = "\n".join(args)
    if not written:
        return tuple(rules)
    results: list[str] | None = None
    kept: list[Rule] = []
    changed = False
    for rule in rules:
        patterns = []
        for pattern in rule.patterns:
            literal = folded_literal(pattern)
            if literal not in written:
                patterns.append(pattern)
                continue
            if results is None:
                results = [r.text.casefold() for _, r in steps]
            first_write = next(i for i, text in enumerate(args) if literal in text)
            shown = next((i for i, text in enumerate(results) if literal in text), len(steps))
            if shown < first_write:
                patterns.append(pattern)  # a tool showed it first: the agent copied it
        if len(patterns) == len(rule.patterns):
            kept.append(rule)
            continue
        changed = True
        if patterns:
            kept.append(rule.model_copy(update={"patterns": tuple(patterns)}))
    return tuple(kept) if changed else tuple(rules)


def read_given_material(path: Path, option: str = "--material") -> GivenMaterial:
    """The directory (or file) fingerprinted; bad input when it is missing, larger than
    the caps, or has nothing distinctive to fingerprint."""
    if not path.exists():
        raise BadInputError(f"{option} {path}: no such file or directory")
    if not (path.is_dir() or path.is_file()):
        raise BadInputError(f"{option} {path}: not a directory or a regular file")
    files, complete = read_material_bounded([path])
    if not complete:
        raise BadInputError(
            f"{option} {path}: more than {MAX_MATERIAL_FILES} files or "
            f"{MAX_MATERIAL_BYTES >> 20} MiB of text, the fingerprinting caps; name a "
            "narrower directory (the rest would not be fingerprinted)"
        )
    fingerprints = fingerprint_rules(files)
    if not fingerprints:
        raise BadInputError(
            f"{option} {path}: none of its {len(files)} readable text file(s) has a line "
            "distinctive enough to fingerprint (20 characters or more)"
        )
    return GivenMaterial(str(path), len(files), fingerprints)


__all__ = ["GivenMaterial", "read_given_material", "without_own_writes"]
