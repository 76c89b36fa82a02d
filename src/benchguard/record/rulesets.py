"""The table of rulesets by digest: where rulesets that many reports share are kept.

A report names its dynamic ruleset by digest (``record.rules.Ruleset.digest``); one
table per owner (a detector's batch, a results document, a journal) holds each distinct
ruleset once, with its JSON dump made once. Nothing is keyed by object identity: equal
rules give equal digests however the objects were built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from benchguard.record.rules import Rule, Ruleset, as_ruleset

# Distinct rule dumps a table keeps (a home of a thousand leftovers is ~1,900 rules).
_MAX_RULE_DUMPS = 65_536


class RulesetTable:
    """Rulesets by digest, each with its JSON dump (``Rule.model_dump(mode="json")``
    per rule), made once and shared: treat a dump as read-only.

    ``limit`` bounds a table used as a cache (the oldest ruleset goes first); ``None``
    keeps everything, for a table that is the record of a document.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._sets: dict[str, Ruleset] = {}
        self._dumps: dict[str, list[dict[str, Any]]] = {}
        # One dump per distinct rule, by its canonical JSON: rulesets that differ by a
        # rule or two (prompt authorization, a home entry added) share the rest.
        self._rule_dumps: dict[str, dict[str, Any]] = {}
        self._limit = limit

    def __len__(self) -> int:
        return len(self._sets)

    def __contains__(self, digest: object) -> bool:
        return digest in self._sets

    def add(self, rules: Iterable[Rule]) -> Ruleset:
        """``rules`` as the table's ruleset of that digest (the first one added)."""
        ruleset = as_ruleset(rules)
        known = self._sets.get(ruleset.digest)
        if known is not None:
            return known
        if self._limit is not None and len(self._sets) >= self._limit:
            oldest = next(iter(self._sets))
            del self._sets[oldest]
            self._dumps.pop(oldest, None)
        self._sets[ruleset.digest] = ruleset
        return ruleset

    def get(self, digest: str) -> Ruleset | None:
        return self._sets.get(digest)

    def dump(self, rules: Iterable[Rule]) -> list[dict[str, Any]]:
        """The JSON dump of ``rules``, made once per digest."""
        ruleset = self.add(rules)
        dumped = self._dumps.get(ruleset.digest)
        if dumped is None:
            dumped = self._dumps[ruleset.digest] = [self._rule_dump(rule) for rule in ruleset]
        return dumped

    def _rule_dump(self, rule: Rule) -> dict[str, Any]:
        dumped = self._rule_dumps.get(rule.canonical_json)
        if dumped is None:
            if len(self._rule_dumps) >= _MAX_RULE_DUMPS:
                self._rule_dumps.clear()
            dumped = self._rule_dumps[rule.canonical_json] = rule.model_dump(mode="json")
        return dumped


__all__ = ["RulesetTable"]
