"""The table of rulesets by digest: the one place rulesets that many reports share live.

A stored report names its dynamic (home inventory, material fingerprint) ruleset by
digest, ``cheating_report.dynamic_rules_ref``; one :class:`RulesetTable` per owner (a
results document, a batch journal, a detector's annotated batch) holds each distinct
ruleset once. With a home of a thousand leftovers every record is scanned with ~1,900
rules, nearly the same from record to record, which inline would be most of a file and
most of the time spent writing it.

A ruleset enters the table either typed (``record.rules.Ruleset``, whose digest is
``ruleset_digest``) or as stored JSON (a results file's table, a journal's ruleset
file, an old report that carried its rules inline: :func:`to_reference` converts that
at the edge). Stored JSON is parsed into rules once per digest, when a rescan first
asks for it. Nothing is keyed by object identity: equal rules give equal digests.

On disk (``to_json``) the table is ``{"rules": [...], "sets": {digest: [[first, last],
...]}}``: every distinct rule once, and each ruleset as spans over that list, in order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from benchguard.record.report import REPORT_KEY, CheatingReport
from benchguard.record.rules import EMPTY_RULESET, Rule, Ruleset, as_ruleset

# A report's reference into its owner's table, and the inline list it replaces (the
# shape of reports written before rulesets were stored by reference, and of a report
# printed on its own, e.g. by ``scan --json``).
DYNAMIC_RULES_REF_KEY = "dynamic_rules_ref"
DYNAMIC_RULES_KEY = "dynamic_rules"


class RulesetTable:
    """Rulesets by digest, typed or as stored JSON (see the module doc).

    ``limit`` bounds a table used as a cache (the oldest ruleset goes first); ``None``
    keeps everything, as a document's or a journal's table must. Dumps and parsed
    rulesets are shared between every report naming them: treat them as read-only.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._typed: dict[str, Ruleset] = {}
        self._stored: dict[str, list[Any]] = {}
        # Each stored ruleset's rules as canonical JSON, made once (a file's table gives
        # them per distinct rule): what the on-disk table dedupes rules by.
        self._texts: dict[str, list[str]] = {}
        self._invalid: dict[str, str] = {}
        self._limit = limit

    def __contains__(self, digest: object) -> bool:
        return digest in self._typed or digest in self._stored

    def __len__(self) -> int:
        return len(self._typed.keys() | self._stored.keys())

    def digests(self) -> list[str]:
        """Every digest held, in the order first added."""
        return list(dict.fromkeys([*self._stored, *self._typed]))

    def add(self, rules: Iterable[Rule]) -> str:
        """Hold a typed ruleset; its digest."""
        ruleset = as_ruleset(rules)
        digest = ruleset.digest
        if digest not in self._typed:
            self._make_room()
            self._typed[digest] = ruleset
        return digest

    def add_stored(
        self, rules: list[Any], digest: str | None = None, texts: list[str] | None = None
    ) -> str:
        """Hold a stored JSON list of rules under ``digest`` (a file's own name for it),
        or, without one, under the digest of its canonical JSON (an inline list).
        ``texts``: the rules' canonical JSON, when the caller has it."""
        if digest is not None and digest in self._stored:
            return digest
        if texts is None:
            texts = [_canonical(rule) for rule in rules]
        if digest is None:
            digest = _digest_of(texts)
        if digest not in self._stored:
            self._make_room()
            self._stored[digest] = rules
            self._texts[digest] = texts
        return digest

    def take(self, digest: str, other: RulesetTable) -> None:
        """Hold ``other``'s ruleset ``digest`` too (typed, stored and canonical text as
        ``other`` has them: nothing is dumped or encoded again)."""
        if digest in self:
            return
        self._make_room()
        if digest in other._typed:
            self._typed[digest] = other._typed[digest]
        if digest in other._stored:
            self._stored[digest] = other._stored[digest]
        if digest in other._texts:
            self._texts[digest] = other._texts[digest]

    def merge(self, other: RulesetTable) -> None:
        """Hold every ruleset of ``other`` too."""
        for digest in other.digests():
            self.take(digest, other)

    def rules(self, digest: str) -> Ruleset:
        """The typed ruleset named ``digest``: ``KeyError`` when it is not held,
        ``ValueError`` naming the rule when a stored one cannot be read (rescanning
        without it would silently drop a leftover-file rule)."""
        typed = self._typed.get(digest)
        if typed is not None:
            return typed
        problem = self._invalid.get(digest)
        if problem is not None:
            raise ValueError(problem)
        stored = self._stored[digest]
        parsed: list[Rule] = []
        for index, item in enumerate(stored):
            try:
                parsed.append(Rule.model_validate(item))
            except ValidationError as exc:
                message = f"stored dynamic rule {index} is invalid: {exc.errors()[0]['msg']}"
                self._invalid[digest] = message
                raise ValueError(message) from None
        # Kept under the name it was stored by (a hand-edited file's digest may not be
        # the rules' own): the reference must keep resolving to these rules.
        ruleset = self._typed[digest] = Ruleset(parsed)
        return ruleset

    def stored(self, digest: str) -> list[Any]:
        """The JSON list of the ruleset named ``digest`` (``KeyError`` if not held)."""
        stored = self._stored.get(digest)
        if stored is None:
            typed = self._typed[digest]
            # Each rule's own cached dump: rulesets that differ by a rule or two (prompt
            # authorization, a home entry added) share the rest.
            stored = self._stored[digest] = [rule.dumped for rule in typed]
        return stored

    def _texts_of(self, digest: str) -> list[str]:
        texts = self._texts.get(digest)
        if texts is None:
            texts = self._texts[digest] = [rule.canonical_json for rule in self._typed[digest]]
        return texts

    def report_json(
        self, report: CheatingReport, dynamic: Iterable[Rule] | str | None = None
    ) -> dict[str, Any]:
        """A ``CheatingReport``'s JSON as a record stores it: its dynamic rules (by
        default the report's own; a string names a ruleset held here already) kept in
        this table and named by ``dynamic_rules_ref`` in their place. A report without
        dynamic rules names none."""
        if dynamic is None:
            dynamic = report.dynamic_rules
        if isinstance(dynamic, str):
            ref = dynamic
        else:
            ruleset = as_ruleset(dynamic)
            if not ruleset:
                plain: dict[str, Any] = report.model_dump(mode="json")
                return plain
            ref = self.add(ruleset)
        dumped: dict[str, Any] = report.model_dump(mode="json", exclude={DYNAMIC_RULES_KEY})
        return _placed(dumped, DYNAMIC_RULES_REF_KEY, ref)

    def to_json(self, digests: Iterable[str]) -> dict[str, Any]:
        """The on-disk table of the rulesets ``digests`` names, in that order (each
        once): distinct rules once, each ruleset as ``[first, last]`` spans."""
        rules: list[Any] = []
        position: dict[str, int] = {}
        sets: dict[str, list[list[int]]] = {}
        for digest in digests:
            if digest in sets:
                continue
            spans: list[list[int]] = []
            for rule, text in zip(self.stored(digest), self._texts_of(digest), strict=True):
                at = position.get(text)
                if at is None:
                    at = position[text] = len(rules)
                    rules.append(rule)
                if spans and spans[-1][1] + 1 == at:
                    spans[-1][1] = at
                else:
                    spans.append([at, at])
            sets[digest] = spans
        return {"rules": rules, "sets": sets}

    @classmethod
    def from_json(cls, table: Any) -> RulesetTable:
        """A file's table (``{"rules", "sets"}``); a set whose spans do not fit is left
        out, so a reference to it does not resolve (the reader reports that)."""
        rulesets = cls()
        if not isinstance(table, Mapping):
            return rulesets
        rules, sets = table.get("rules"), table.get("sets")
        if not isinstance(rules, list) or not isinstance(sets, Mapping):
            return rulesets
        texts: list[str | None] = [None] * len(rules)
        for digest, spans in sets.items():
            picked = _expand(spans, len(rules))
            if not isinstance(digest, str) or picked is None:
                continue
            for at in picked:
                if texts[at] is None:
                    texts[at] = _canonical(rules[at])
            rulesets.add_stored(
                [rules[at] for at in picked], digest, [str(texts[at]) for at in picked]
            )
        return rulesets

    def _make_room(self) -> None:
        if self._limit is not None and len(self) >= self._limit:
            oldest = self.digests()[0]
            for held in (self._typed, self._stored, self._texts, self._invalid):
                held.pop(oldest, None)


def stored_digest(rules: list[Any]) -> str:
    """The digest of a stored JSON list of rules: ``sha256:`` over the rules' canonical
    JSON (sorted keys, no spaces), in order; for rules dumped from ``Rule`` models it is
    their ``ruleset_digest``."""
    return _digest_of([_canonical(rule) for rule in rules])


def _digest_of(texts: list[str]) -> str:
    body = "[" + ",".join(texts) + "]"
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def to_reference(record: Any, rulesets: RulesetTable) -> Any:
    """The edge for a stored record whose report carries its dynamic rules inline (an
    older schema, the reference's list layout): ``record`` with the list held in
    ``rulesets`` and named by the report in the same position (a shallow copy; the input
    is not modified). Anything else is returned as it is."""
    report = record.get(REPORT_KEY) if isinstance(record, dict) else None
    rules = report.get(DYNAMIC_RULES_KEY) if isinstance(report, dict) else None
    if not isinstance(report, dict) or not isinstance(rules, list) or not rules:
        return record
    digest = rulesets.add_stored(rules)
    return {
        **record,
        REPORT_KEY: _renamed(report, DYNAMIC_RULES_KEY, DYNAMIC_RULES_REF_KEY, digest),
    }


def stored_rules(record: Mapping[str, Any], rulesets: RulesetTable) -> Ruleset:
    """The dynamic ruleset a stored record's report was scanned with (none: empty).

    ``ValueError`` saying why when it cannot be read (a reference the table does not
    hold, an invalid rule): rescanning without it would silently drop a leftover-file
    rule. A report that still carries its rules inline (a record that never passed a
    reader's edge) is read too."""
    stored = record.get(REPORT_KEY)
    if not isinstance(stored, Mapping):
        return EMPTY_RULESET
    ref = stored.get(DYNAMIC_RULES_REF_KEY)
    if ref is not None:
        if not isinstance(ref, str) or ref not in rulesets:
            raise ValueError(f"the stored report's {DYNAMIC_RULES_REF_KEY} names no ruleset held")
        return rulesets.rules(ref)
    raw = stored.get(DYNAMIC_RULES_KEY)
    if raw is None:
        return EMPTY_RULESET
    if not isinstance(raw, list):
        raise ValueError(f"the stored report's {DYNAMIC_RULES_KEY} is not a list")
    return rulesets.rules(rulesets.add_stored(raw)) if raw else EMPTY_RULESET


def inlined(record: Any, rulesets: RulesetTable) -> Any:
    """``record`` with its report's reference replaced by the rules it names (a shallow
    copy; the input is not modified), for shapes that have no table (a results list,
    a report printed alone). An unresolvable reference is left as it is."""
    report = record.get(REPORT_KEY) if isinstance(record, dict) else None
    ref = report.get(DYNAMIC_RULES_REF_KEY) if isinstance(report, dict) else None
    if not isinstance(report, dict) or not isinstance(ref, str) or ref not in rulesets:
        return record
    stored = rulesets.stored(ref)
    return {
        **record,
        REPORT_KEY: _renamed(report, DYNAMIC_RULES_REF_KEY, DYNAMIC_RULES_KEY, stored),
    }


def reference_of(record: Any) -> str | None:
    """The digest a stored record's report names, if it names one (a string)."""
    report = record.get(REPORT_KEY) if isinstance(record, dict) else None
    ref = report.get(DYNAMIC_RULES_REF_KEY) if isinstance(report, dict) else None
    return ref if isinstance(ref, str) else None


def unresolved_reference(record: Any, rulesets: RulesetTable) -> str | None:
    """Why the record's reference does not resolve in ``rulesets``; None when it does or
    when the report names none."""
    report = record.get(REPORT_KEY) if isinstance(record, dict) else None
    if not isinstance(report, dict) or DYNAMIC_RULES_REF_KEY not in report:
        return None
    ref = report[DYNAMIC_RULES_REF_KEY]
    if isinstance(ref, str) and ref in rulesets:
        return None
    return (
        f"{REPORT_KEY}.{DYNAMIC_RULES_REF_KEY} {ref!r} names no valid entry in "
        f"the file's 'dynamic_rulesets.sets' table"
    )


def _renamed(report: dict[str, Any], old: str, new: str, value: Any) -> dict[str, Any]:
    return {(new if key == old else key): (value if key == old else v) for key, v in report.items()}


def _placed(dumped: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``dumped`` with ``key`` where ``dynamic_rules`` is declared in the report."""
    out: dict[str, Any] = {}
    for name, item in dumped.items():
        if name == "incomplete" and key not in out:
            out[key] = value
        out[name] = item
    out.setdefault(key, value)
    return out


def _canonical(rule: Any) -> str:
    return json.dumps(rule, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _expand(spans: Any, count: int) -> list[int] | None:
    """The positions a list of ``[first, last]`` spans names over ``count`` rules;
    ``None`` if any span is bad."""
    if not isinstance(spans, list) or not spans:
        return None
    out: list[int] = []
    for span in spans:
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in span)
            or not 0 <= span[0] <= span[1] < count
        ):
            return None
        out.extend(range(span[0], span[1] + 1))
    return out


__all__ = [
    "DYNAMIC_RULES_KEY",
    "DYNAMIC_RULES_REF_KEY",
    "RulesetTable",
    "inlined",
    "reference_of",
    "stored_digest",
    "stored_rules",
    "to_reference",
    "unresolved_reference",
]
