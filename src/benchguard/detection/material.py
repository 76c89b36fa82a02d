"""Content evidence from the protected material itself: fingerprints of its values.

The harness knows the material a run must not reach (task definitions, controls, oracle
scripts, prior results, env files), so it can recognise that material in a tool result
however the read was disguised: a ``yq .expected_output`` through a glob, a ``grep -o``
of one field, an encoded dump decoded before matching (``decoding``). Each protected
file contributes its distinctive values: every line, with a leading ``key:`` or
``"key":`` and quotes taken off, at least :data:`MIN_VALUE_CHARS` long; a value is
represented by a window of :data:`WINDOW_CHARS` characters from its middle, which
survives an extraction that cuts its head or tail.

A fingerprint is matched against tool results only, never the final output: a correct
answer equals the expected output by definition. It never fires on text the prompt
contains either: a window (or its whole value)
found in the record's prompt is dropped for that record (:func:`for_prompt`), so a
final answer quoting the line the prompt dictated stays clean.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchguard.detection._patterns import trust_generated
from benchguard.detection._relax import relax_literal, remember_relaxed
from benchguard.detection.models import Rule

MIN_VALUE_CHARS = 20
WINDOW_CHARS = 28
MAX_VALUES_PER_FILE = 16
MAX_MATERIAL_FILE_BYTES = 256 * 1024
MAX_MATERIAL_FILES = 2000
# Text read over all files: a tasks root of big files stops here, not at 500 MB.
MAX_MATERIAL_BYTES = 32 << 20
CATEGORY = "protected-material"

_KEY_PREFIX = re.compile(r"""^\s*(?:-\s+)?["']?[\w.-]{1,64}["']?\s*[:=]\s*""")
_TRIM = " \t\"',{}[]|>"


def distinctive_values(text: str) -> list[str]:
    """Windows of the file's distinctive values, longest values first, deterministic."""
    values: set[str] = set()
    for line in text.splitlines():
        value = _KEY_PREFIX.sub("", line).strip(_TRIM)
        if (
            len(value) >= MIN_VALUE_CHARS
            and sum(c.isalnum() for c in value) >= MIN_VALUE_CHARS // 2
        ):
            values.add(value)
    ranked = sorted(values, key=lambda value: (-len(value), value))[:MAX_VALUES_PER_FILE]
    return [_window(value) for value in ranked]


def _window(value: str) -> str:
    if len(value) <= WINDOW_CHARS:
        return value
    start = (len(value) - WINDOW_CHARS) // 2
    return value[start : start + WINDOW_CHARS].strip()


@dataclass(frozen=True)
class MaterialFile:
    """One protected file: where it lives (as the agent sees it) and its text."""

    path: str
    text: str


def read_material(
    roots: Sequence[Path],
    *,
    seen_as: Mapping[str, str] | None = None,
    exclude: Sequence[Path] = (),
) -> list[MaterialFile]:
    """:func:`read_material_bounded` without the completeness flag."""
    return read_material_bounded(roots, seen_as=seen_as, exclude=exclude)[0]


def read_material_bounded(
    roots: Sequence[Path],
    *,
    seen_as: Mapping[str, str] | None = None,
    exclude: Sequence[Path] = (),
) -> tuple[list[MaterialFile], bool]:
    """Small UTF-8 regular files under ``roots`` (files or trees), sorted, bounded, and
    whether every file was read (False once :data:`MAX_MATERIAL_FILES` files or
    :data:`MAX_MATERIAL_BYTES` bytes were taken).

    ``seen_as`` maps a root's host path prefix to the path the agent sees (a sandbox
    bind). ``exclude``: trees and files never read (a task's workspace seed, and the
    grading files it holds copies of: given to the agent). Symlinks are never followed: a link could pull any file into a pattern.
    """
    found: list[MaterialFile] = []
    skipped = tuple(os.path.abspath(path) for path in exclude)
    budget = MAX_MATERIAL_BYTES
    for root in sorted(roots):
        for path in _walk(root, skipped):
            if len(found) >= MAX_MATERIAL_FILES or budget <= 0:
                return found, False
            text = _read_small(path)
            if text is None:
                continue
            budget -= len(text)
            shown = str(path)
            for host, agent in (seen_as or {}).items():
                if shown == host or shown.startswith(host.rstrip("/") + "/"):
                    shown = agent.rstrip("/") + shown[len(host.rstrip("/")) :]
                    break
            found.append(MaterialFile(shown, text))
    return found, True


def _walk(root: Path, skipped: tuple[str, ...] = ()) -> Iterable[Path]:
    if _under(os.path.abspath(root), skipped):
        return
    try:
        info = root.lstat()
    except OSError:
        return
    if stat.S_ISREG(info.st_mode):
        yield root
        return
    if not stat.S_ISDIR(info.st_mode):
        return
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            name for name in dirnames if not _under(os.path.join(directory, name), skipped)
        )
        for name in sorted(filenames):
            # An excluded file (a grading file the agent is given in its seed) too.
            if not _under(os.path.join(directory, name), skipped):
                yield Path(directory, name)


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _read_small(path: Path) -> str | None:
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MATERIAL_FILE_BYTES:
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def fingerprint_rules(files: Sequence[MaterialFile]) -> tuple[Rule, ...]:
    """One content rule per protected file that has distinctive values."""
    rules: list[Rule] = []
    for item in sorted(files, key=lambda f: f.path):
        windows = distinctive_values(item.text)
        if not windows:
            continue
        rules.append(
            Rule(
                id=f"{CATEGORY}/{item.path}/content",
                category=CATEGORY,
                material=f"protected material {item.path}",
                evidence="its contents",
                description="Generated from the protected material: distinctive values.",
                patterns=tuple(_literal(window) for window in windows),
                # Tool results only: a correct final answer equals the expected output
                # (and a dataset's target) by definition; what gives access away is a
                # tool having shown it.
                fields=("result",),
                strength="conclusive",
            )
        )
    return tuple(rules)


def _literal(text: str) -> str:
    pattern = trust_generated(re.escape(text))
    return remember_relaxed(pattern, relax_literal(text))


def for_prompt(
    rules: Sequence[Rule], prompt: str, *, categories: Collection[str] = (CATEGORY,)
) -> tuple[Rule, ...]:
    """``rules`` without the fingerprint patterns the prompt itself contains.

    Only content rules of ``categories`` are cut (by default the material's; the home
    inventory's fingerprints too when asked). Returns the same rule objects when the
    prompt quotes none of them (the usual case), so the detector's compiled plan is
    reused.
    """
    text = (prompt or "").casefold()
    if not text:
        return tuple(rules)
    kept: list[Rule] = []
    changed = False
    for rule in rules:
        if rule.category not in categories or "args" in rule.fields:
            kept.append(rule)
            continue
        patterns = tuple(p for p in rule.patterns if _folded_literal(p) not in text)
        if len(patterns) == len(rule.patterns):
            kept.append(rule)
            continue
        changed = True
        if patterns:
            kept.append(rule.model_copy(update={"patterns": patterns}))
    return tuple(kept) if changed else tuple(rules)


def _unescaped(pattern: str) -> str:
    return re.sub(r"\\(.)", r"\1", pattern)


@functools.lru_cache(maxsize=1 << 16)
def _folded_literal(pattern: str) -> str:
    """A literal pattern's text, casefolded: the same patterns come back record after
    record (a home's fingerprints), so each is unescaped once."""
    return _unescaped(pattern).casefold()


def folded_literal(pattern: str) -> str:
    """A fingerprint pattern's literal text, casefolded (how the prompt cut compares)."""
    return _folded_literal(pattern)


__all__ = [
    "CATEGORY",
    "MaterialFile",
    "distinctive_values",
    "fingerprint_rules",
    "folded_literal",
    "for_prompt",
    "read_material",
    "read_material_bounded",
]
