"""The prompt a model sees: the tenant's notes, labelled example records, the contract.

Plain text built from a :class:`GeneratedTask`; it names nothing the model should not
see (no evaluation record, no seed, no split secret). The contract numbers are read
from the validator and scanner so the prompt cannot drift from what is enforced.
"""

from __future__ import annotations

import json

from redaction_pressure.corpus import GeneratedTask
from redaction_pressure.records import LabelledRecord
from redaction_pressure.rules import MAX_PATTERN_CHARS, MAX_RULES
from redaction_pressure.scanner import MAX_MATCHES

SYSTEM_PROMPT = (
    "You write regular-expression redaction rules for a secret scanner. "
    "Answer with the JSON rule list only."
)


def contract_text() -> str:
    """The exact output contract, as stated in every prompt."""
    return f"""Output contract:
- Reply with exactly one JSON object and nothing else, optionally inside one ```json fenced block:
  {{"rules": [{{"pattern": "<regex>", "replacement": "[REDACTED]"}}]}}
- The object has only the key "rules"; each rule has only the keys "pattern" and "replacement".
- At most {MAX_RULES} rules. "replacement" must be exactly "[REDACTED]" or "" (no group references).
- Patterns use the Python `regex` module syntax (lookarounds allowed; inline flags only i, m, s;
  write a literal brace as \\{{ and a literal [ inside a set as \\[). At most {MAX_PATTERN_CHARS}
  characters per pattern; a pattern must never match the empty string.
- Rules apply in order, each to the output of the previous rule, to every record.
- At most {MAX_MATCHES} matches in total over all rules and records.
- Patterns that can backtrack badly are refused: no repeat inside a repeated group, no
  alternation inside a repeated group whose branches can start alike, no two unbounded
  repeats over the same characters without a character between them that the first cannot
  match, and a pattern whose wide repeat must be followed by more must start with a literal
  (or a lookaround needing one) of 3+ characters. The error says which rule and why.
- Any invalid rule or exceeded limit makes the whole reply score 0.

Scoring: a secret counts only when every one of its characters is removed; removing anything
that is not a secret (text, look-alike values, key names) costs precision and the clean bonus."""


def _example_block(position: int, record: LabelledRecord) -> str:
    secrets = [record.span_text(span) for span in record.spans if span.label == "secret"]
    listed = json.dumps(secrets, ensure_ascii=False)
    return (
        f'<record n="{position}" kind="{record.kind}">\n{record.text}</record>\n'
        f"Secrets in record {position} (JSON list, exact text): {listed}\n"
    )


def render_prompt(task: GeneratedTask) -> str:
    """The user message for ``task``."""
    profile = task.profile
    notes = "\n".join(f"- {note}" for note in profile.policy_notes())
    examples = "\n".join(
        _example_block(position, record) for position, record in enumerate(task.examples, 1)
    )
    return (
        f"You are configuring secret redaction for {profile.tenant}'s logs, configs and chats.\n"
        "Write rules that remove every secret and leave every other character untouched.\n"
        "Anything not listed as a secret must survive byte for byte, however secret it looks.\n\n"
        f"Notes from {profile.tenant}'s security team:\n{notes}\n\n"
        f"Labelled examples ({len(task.examples)} records; your rules are scored on later, "
        "unseen records of the same kinds):\n\n"
        f"{examples}\n"
        f"{contract_text()}\n"
    )
