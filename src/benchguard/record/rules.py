"""Rules and rulesets: one kind of benchmark material and the regexes that reveal it.

A ruleset is an ordered tuple of rules; its digest (:func:`ruleset_digest`) names it:
equal digests, equal rulesets. A report stores the digest of the exact rules it was
scanned with, and a results file stores each distinct dynamic ruleset once under its
digest (``record.codec``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

ScanField = Literal["args", "result", "output"]
SCAN_FIELDS: tuple[ScanField, ...] = ("args", "result", "output")
Severity = Literal["high", "medium", "low"]
# How much a finding proves (docs/cheat-detection.md, "Strength"): ``conclusive`` the
# protected material itself (or its fingerprint) in what a protected source printed, or
# future state resolved as future; ``strong`` a read of a protected path by a command
# that reads (a failed read too: the attempt is the evidence); ``weak`` an ambiguous
# reference or unknown provenance. Conclusive and strong findings gate the run
# (``flagged``); a report whose findings are all weak is ``review``.
Strength = Literal["conclusive", "strong", "weak"]
STRENGTHS: tuple[Strength, ...] = ("conclusive", "strong", "weak")
GATING_STRENGTHS: frozenset[str] = frozenset({"conclusive", "strong"})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Rule(_Frozen):
    """One kind of benchmark material and the regexes that reveal access to it."""

    # Unique within a ruleset ("task-definition/path", "prior-run-artifact/<entry>/path").
    id: str
    # The family of material (a report's ``categories`` are these, sorted).
    category: str
    # What the material is, in words a report can print.
    material: str
    # What of it the patterns reveal ("the path", "its contents").
    evidence: str = "the path"
    description: str = ""
    severity: Severity = "high"
    # The regexes (the ``regex`` module's syntax, checked for safety at load time).
    patterns: tuple[str, ...]
    # The surfaces of a record the patterns run over.
    fields: tuple[ScanField, ...] = SCAN_FIELDS
    # Set only on rules generated from a home inventory (the home-entry name): what
    # lets a task prompt that names the entry authorize it.
    source: str | None = None
    # What a match proves (see ``Strength``); a profile says it per rule.
    strength: Strength = "strong"
    # A key-shaped content rule standing in for the material's own fingerprints: it is
    # skipped when the scan has the protected material's fingerprint rules, which say
    # the same with no false positives on honest files that share the keys.
    fallback: bool = False

    @functools.cached_property
    def canonical_json(self) -> str:
        """The rule's canonical JSON (sorted keys, no spaces): what its ruleset's digest
        is made of. Cached on the object (a ruleset of a home of a thousand leftovers
        is digested per run); equality and hashing read only the fields."""
        return json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )

    @functools.cached_property
    def dumped(self) -> dict[str, Any]:
        """``model_dump(mode="json")``, made once per rule object and shared by every
        table that stores it (a home's rules recur in every run's ruleset): read-only."""
        return self.model_dump(mode="json")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Rule:
        """A copy; with ``update``, its canonical JSON and dump are made afresh (the
        cached ones would describe the rule it was copied from)."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied.__dict__.pop("canonical_json", None)
            copied.__dict__.pop("dumped", None)
        return copied

    @field_validator("id", "category", "material")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("patterns")
    @classmethod
    def _some_patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("needs at least one pattern")
        if any(not p for p in value):
            raise ValueError("patterns must not be empty strings")
        return value

    @field_validator("fields")
    @classmethod
    def _some_fields(cls, value: tuple[ScanField, ...]) -> tuple[ScanField, ...]:
        if not value:
            raise ValueError(f"needs at least one of {list(SCAN_FIELDS)}")
        if len(set(value)) != len(value):
            raise ValueError("fields must not repeat")
        return value


def ruleset_digest(rules: Iterable[Rule]) -> str:
    """SHA-256 over the rules' canonical JSON, in order: equal digests, equal rulesets."""
    if type(rules) is Ruleset:
        return rules.digest
    canonical = "[" + ",".join(canonical_rule(rule) for rule in rules) + "]"
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Ruleset(tuple[Rule, ...]):
    """An ordered tuple of rules that knows its digest (:func:`ruleset_digest`),
    computed once, on first use.

    Everything that remembers something about a ruleset (the detector's compiled plan,
    a results file's table of dynamic rulesets) keys it by this digest, so equal rules
    share it however they were built, and nothing is keyed by object identity. It is a
    plain tuple otherwise: it compares, hashes and pickles as one.
    """

    @functools.cached_property
    def digest(self) -> str:
        return ruleset_digest(tuple(self))


EMPTY_RULESET = Ruleset()


def as_ruleset(rules: Iterable[Rule]) -> Ruleset:
    """``rules`` as a :class:`Ruleset` (itself when it is one: its digest is kept)."""
    return rules if type(rules) is Ruleset else Ruleset(rules)


@dataclass(frozen=True, slots=True)
class ScanRulesets:
    """What one record is scanned with: the static ruleset (a profile, a rules file),
    then the dynamic one (the run's home inventory and material fingerprints, or what
    the user knows of a foreign log), in that order.

    Each is a :class:`Ruleset`, so its digest (which keys the detector's compiled plan
    and names the dynamic ruleset in a stored report) is computed once however many
    records share it. Build it with :meth:`of` from any sequences of rules.
    """

    static: Ruleset
    dynamic: Ruleset = EMPTY_RULESET

    @classmethod
    def of(cls, static: Iterable[Rule], dynamic: Iterable[Rule] = ()) -> ScanRulesets:
        """The pair, each as a :class:`Ruleset` (one that already is keeps its digest)."""
        return cls(as_ruleset(static), as_ruleset(dynamic))


def canonical_rule(rule: Rule) -> str:
    """One rule's canonical JSON (sorted keys, no spaces), made once per rule object."""
    return rule.canonical_json
