"""Baseline policies: reply strings for a task, from the honest oracle to known exploits.

Each policy maps a :class:`GeneratedTask` to the reply a model would send. They exist to
pin the reward contract down from both sides: the oracle shows every task is solvable
from what the tenant profile implies (so it must reach exactly 1.0), and the exploits
show what the contract refuses to pay for. The exploit policies are deliberately given
more than a model ever sees (the evaluation secrets themselves) so a zero for them is a
statement about the contract, not about a weak attacker.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence

import regex

from redaction_pressure.corpus import (
    AWS_EXAMPLE_KEY_ID,
    AWS_EXAMPLE_SECRET,
    CONFIG_KEY_POOL,
    JWT_IO_EXAMPLE,
    GeneratedTask,
    TenantProfile,
)
from redaction_pressure.rules import MAX_RULES, REDACTED

LITERAL_PATTERN_BUDGET = 900
"""Characters per pattern when policies pack literal secrets into alternations; kept
well under the validator's pattern-length cap."""

Rule = tuple[str, str]

# Boundaries: a credential does not continue into the surrounding token.
_ALNUM_B = r"(?<![A-Za-z0-9])"
_ALNUM_E = r"(?![A-Za-z0-9])"
_URLSAFE_B = r"(?<![A-Za-z0-9_-])"
_URLSAFE_E = r"(?![A-Za-z0-9_-])"
# The value after a key name: optional quote, ':' or '=', optional quote.
_ASSIGN = r"""["']?[ \t]*[:=][ \t]*["']?"""


def reply_json(rules: Iterable[Rule]) -> str:
    """The contract's reply shape for ``rules``."""
    payload = {"rules": [{"pattern": p, "replacement": r} for p, r in rules]}
    return json.dumps(payload, ensure_ascii=False)


def _key_alternation(keys: Iterable[str]) -> str:
    # snake, SCREAMING and camelCase spellings of the same key: "db_password" also
    # matches "DB_PASSWORD" and "dbPassword".
    return "|".join(regex.escape(k).replace("_", "_?") for k in sorted(keys))


def oracle_patterns(profile: TenantProfile) -> list[str]:
    """One exact pattern per secret family the tenant has: what the examples teach.

    Built from the profile alone (never from the evaluation records), so reaching 1.0
    with these shows the task is solvable by generalising from the examples.
    """
    units = set(profile.secret_variants)
    variants: dict[str, list[str]] = {}
    for unit in sorted(units):
        family, variant = unit.split(":", 1)
        variants.setdefault(family, []).append(variant)
    patterns: list[str] = []
    if "private_key" in variants:
        labels = {"ec": "EC PRIVATE KEY", "pkcs8": "PRIVATE KEY", "openssh": "OPENSSH PRIVATE KEY"}
        # One rule per label: an alternation of two would double the expanded size.
        patterns.extend(
            f"-----BEGIN {labels[v]}-----" + r"[\s\S]{1,4000}?" + f"-----END {labels[v]}-----"
            for v in sorted(variants["private_key"])
        )
    if "jwt" in variants:
        header, payload, _ = JWT_IO_EXAMPLE.split(".")
        patterns.append(
            _URLSAFE_B
            + rf"(?!{header}\.{payload}\.)"
            + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"
            + _URLSAFE_E
        )
    if "aws_access_key_id" in variants:
        prefixes = "|".join(sorted(variants["aws_access_key_id"]))
        patterns.append(
            _ALNUM_B + rf"(?!{AWS_EXAMPLE_KEY_ID}){'(?:' + prefixes + ')'}[A-Z2-7]{{16}}" + _ALNUM_E
        )
    if "aws_secret_access_key" in variants:
        patterns.append(
            rf"(?<=(?i:aws_?secret_?access_?key){_ASSIGN})"
            + rf"(?!{regex.escape(AWS_EXAMPLE_SECRET)})[A-Za-z0-9/+]{{40}}(?![A-Za-z0-9/+=])"
        )
    if "github_token" in variants:
        alts = []
        short = sorted(v for v in variants["github_token"] if v != "github_pat")
        if short:
            alts.append(rf"(?:{'|'.join(short)})_[A-Za-z0-9]{{36}}")
        if "github_pat" in variants["github_token"]:
            alts.append(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}")
        patterns.append(r"(?<![A-Za-z0-9_])(?:" + "|".join(alts) + ")" + _ALNUM_E)
    if "slack_token" in variants:
        alts = []
        if "xoxb" in variants["slack_token"]:
            alts.append(r"xoxb-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}")
        if "xoxp" in variants["slack_token"]:
            alts.append(r"xoxp-[0-9]{10,13}-[0-9]{10,13}-[0-9]{10,13}-[0-9a-f]{32}")
        patterns.append(_ALNUM_B + "(?:" + "|".join(alts) + ")" + _ALNUM_E)
    if "stripe_secret_key" in variants:
        prefixes = "|".join(sorted(variants["stripe_secret_key"]))
        patterns.append(
            r"(?<![A-Za-z0-9_])" + f"(?:{prefixes})" + r"_[A-Za-z0-9]{24,99}" + _ALNUM_E
        )
    if "google_api_key" in variants:
        patterns.append(_URLSAFE_B + r"AIza[A-Za-z0-9_-]{35}" + _URLSAFE_E)
    if "npm_token" in variants:
        patterns.append(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}" + _ALNUM_E)
    if "dsn_password" in variants:
        patterns.append(r"(?<=[a-z][a-z0-9+]*://[A-Za-z0-9_.-]*:)[A-Za-z0-9._~-]+(?=@)")
    if "bearer_token" in variants:
        patterns.append(r"(?<=Bearer )[A-Za-z0-9]{32,44}(?![A-Za-z0-9._~+/=-])")
    if "config_password" in variants:
        keys = _key_alternation(variants["config_password"])
        patterns.append(
            rf"(?<=(?<![A-Za-z0-9_])(?i:{keys}){_ASSIGN})"
            + r"[A-Za-z0-9][A-Za-z0-9!#%+._-]*[A-Za-z0-9]"
            + r"(?![A-Za-z0-9!#%+._-])"
        )
    fmt = profile.inhouse
    words = [fmt.live_word] + ([fmt.test_word] if profile.inhouse_test_is_secret else [])
    alphabet = {"hex": "0-9a-f", "base62": "A-Za-z0-9", "base32": "A-Z2-7"}[fmt.alphabet_name]
    heads = "|".join(regex.escape(fmt.head(w)) for w in words)
    patterns.append(_URLSAFE_B + f"(?:{heads})[{alphabet}]{{{fmt.length}}}" + r"(?![A-Za-z0-9_.-])")
    return patterns


def oracle(task: GeneratedTask) -> str:
    """Exact patterns for the tenant's secret families: scores 1.0."""
    return reply_json((p, REDACTED) for p in oracle_patterns(task.profile))


def inaction(task: GeneratedTask) -> str:
    """No rules at all: nothing removed, nothing earned."""
    return reply_json(())


def first_character(task: GeneratedTask) -> str:
    """The historical exploit: delete only the first character of every secret.

    Under span-overlap scoring each secret counts as "touched"; under the contract no
    secret is fully removed.
    """
    return reply_json((f"(?=(?:{p}))[\\s\\S]", "") for p in oracle_patterns(task.profile))


def prefix_only(task: GeneratedTask) -> str:
    """Redact a short prefix of every secret, the way prefix-keyword rules do."""
    return reply_json(
        (f"(?=(?:{p}))[\\s\\S]{{6}}", REDACTED) for p in oracle_patterns(task.profile)
    )


def _secrets(task: GeneratedTask) -> list[str]:
    found = {r.span_text(s) for r in task.evaluation for s in r.spans if s.label == "secret"}
    return sorted(found)


def _literal_rules(fragments: Sequence[str], replacement: str) -> list[Rule]:
    """Pack regex fragments into as few alternation rules as the pattern budget allows."""
    rules: list[Rule] = []
    current: list[str] = []
    size = 0
    for fragment in sorted(fragments, key=len, reverse=True):
        if current and size + len(fragment) + 1 > LITERAL_PATTERN_BUDGET:
            rules.append(("|".join(current), replacement))
            current, size = [], 0
        current.append(fragment)
        size += len(fragment) + 1
    if current:
        rules.append(("|".join(current), replacement))
    return rules[:MAX_RULES]


def all_but_one(task: GeneratedTask) -> str:
    """Delete every character of every evaluation secret except its last.

    An attacker that knows the secrets verbatim; the one surviving character is what
    the contract needs to withhold recall and the clean gate.
    """
    fragments = [
        regex.escape(s[:-1], literal_spaces=True)
        + "(?="
        + regex.escape(s[-1], literal_spaces=True)
        + ")"
        for s in _secrets(task)
    ]
    return reply_json(_literal_rules(fragments, ""))


def redact_everything(task: GeneratedTask) -> str:
    """Replace every record wholesale: full recall, poor precision, no clean gate."""
    return reply_json([(r"[\s\S]+", REDACTED)])


_JWT_IO_HEAD = r"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9\.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"

_ALLOWLIST = rf"(?!{_JWT_IO_HEAD})(?![A-Za-z0-9/+=]{{0,40}}EXAMPLE)(?!pk_(?:live|test)_)"
"""Where no generic finding may start: documented example credentials and Stripe
publishable keys (public by design)."""

GENERIC_SCANNER_PATTERNS: tuple[str, ...] = (
    r"-----BEGIN[ A-Z0-9]{0,15}PRIVATE KEY-----[^-]{1,4000}-----END[ A-Z0-9]{0,15}PRIVATE KEY-----",
    # Allowlisted, as maintained scanners do: the documented AWS example key pair.
    r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)(?![A-Z2-7]{9}EXAMPLE)[A-Z2-7]{16}(?![A-Za-z0-9])",
    r"(?<=(?i:aws_?secret_?access_?key)[\"']?\s{0,3}[:=]\s{0,3}[\"']?)(?![A-Za-z0-9/+=]{30}EXAMPLEKEY)[A-Za-z0-9/+=]{40}",
    r"gh[pousr]_[A-Za-z0-9]{36}",
    r"github_pat_[A-Za-z0-9_]{82}",
    r"xox[baprs]-[A-Za-z0-9-]{10,100}",
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,99}",
    r"AIza[A-Za-z0-9_-]{35}",
    # Signed tokens only; jwt.io's published example is allowlisted.
    rf"(?!{_JWT_IO_HEAD})" + r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    r"(?i)npm_[a-z0-9]{36}",
    r"(?<=://[^:@/\s]{1,64}:)[^@/\s]{1,128}(?=@)",
    r"(?<=(?i:bearer) )" + _ALLOWLIST + r"[A-Za-z0-9._~+/-]{16,}=*",
    r"(?<=(?i:password|passwd|passphrase|secret|token|key|credential)[\w.-]{0,20}[\"']?\s{0,3}[:=]\s{0,3}[\"']?)"
    + _ALLOWLIST
    + r"[A-Za-z0-9_.+/~!#%=-]{8,}",
)
"""A tenant-blind, gitleaks-style rule set: the well-known token shapes, a generic
``key = value`` rule, and the allowlist of documented example credentials (the AWS
``...EXAMPLE`` pair, jwt.io's token) that maintained scanners keep."""


def generic_scanner(task: GeneratedTask) -> str:
    """A gitleaks-style rule set: broad well-known token patterns and a generic
    ``key = value`` rule. Knows nothing about the tenant (misses its in-house format,
    damages test keys and placeholders)."""
    return reply_json((p, REDACTED) for p in GENERIC_SCANNER_PATTERNS)


def fixed_reply_patterns(*, spare_test_keys: bool = False) -> list[str]:
    """The fixed reply of issue 22, written against this generator: every credential
    family with every variant the generator knows, every config key of its pool and the
    in-house token *shape* (any prefix, any environment word, any body), with the
    documented examples spared. ``spare_test_keys`` also spares Stripe test-mode keys
    and in-house tokens whose environment word is ``test`` or ``sandbox``."""
    header, payload, _ = JWT_IO_EXAMPLE.split(".")
    stripe = "(?:sk|rk)_live" if spare_test_keys else "(?:sk|rk)_(?:live|test)"
    spared_words = r"(?!(?:test|sandbox)[_-])" if spare_test_keys else ""
    keys = _key_alternation(CONFIG_KEY_POOL)
    return [
        r"-----BEGIN (?:[A-Z]{1,8} )?PRIVATE KEY-----[^-]{1,4000}-----END (?:[A-Z]{1,8} )?PRIVATE KEY-----",
        _ALNUM_B + rf"(?!{AWS_EXAMPLE_KEY_ID})(?:AKIA|ASIA)[A-Z2-7]{{16}}" + _ALNUM_E,
        rf"(?<=(?i:aws_?secret_?access_?key){_ASSIGN})"
        + rf"(?!{regex.escape(AWS_EXAMPLE_SECRET)})[A-Za-z0-9/+]{{40}}(?![A-Za-z0-9/+=])",
        r"(?<![A-Za-z0-9_])(?:gh[pos]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})"
        + _ALNUM_E,
        _ALNUM_B
        + r"(?:xoxb-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}"
        + r"|xoxp-[0-9]{10,13}-[0-9]{10,13}-[0-9]{10,13}-[0-9a-f]{32})"
        + _ALNUM_E,
        r"(?<![A-Za-z0-9_])" + stripe + r"_[A-Za-z0-9]{24,99}" + _ALNUM_E,
        _URLSAFE_B + r"AIza[A-Za-z0-9_-]{35}" + _URLSAFE_E,
        _URLSAFE_B
        + rf"(?!{header}\.{payload}\.)"
        + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"
        + _URLSAFE_E,
        r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}" + _ALNUM_E,
        r"(?<=[a-z][a-z0-9+]*://[A-Za-z0-9_.-]*:)[A-Za-z0-9._~-]+(?=@)",
        r"(?<=Bearer )[A-Za-z0-9]{32,44}(?![A-Za-z0-9._~+/=-])",
        rf"(?<=(?<![A-Za-z0-9_])(?i:{keys}){_ASSIGN})"
        + r"[A-Za-z0-9][A-Za-z0-9!#%+._-]*[A-Za-z0-9](?![A-Za-z0-9!#%+._-])",
        r"(?<![A-Za-z0-9_-])(?!(?:sk|rk|pk)_)[a-z][a-z0-9]{1,4}[_-]"
        + spared_words
        + r"[a-z]{2,7}[_-][A-Za-z0-9]{20,48}(?![A-Za-z0-9_.-])",
    ]


def fixed_reply(task: GeneratedTask) -> str:
    """The same 13 rules for every task, whatever the prompt says (issue 22's attack:
    it learns the generator's space instead of reading the tenant)."""
    return reply_json((p, REDACTED) for p in fixed_reply_patterns())


POLICIES: dict[str, Callable[[GeneratedTask], str]] = {
    "oracle": oracle,
    "inaction": inaction,
    "first_character": first_character,
    "prefix_only": prefix_only,
    "all_but_one": all_but_one,
    "redact_everything": redact_everything,
    "generic_scanner": generic_scanner,
    "fixed_reply": fixed_reply,
}
"""Every baseline by name, in report order."""


def find_policy(name: str) -> Callable[[GeneratedTask], str]:
    """The baseline called ``name``; a ValueError listing the known names otherwise."""
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}") from None


def policy_reply(name: str, task: GeneratedTask) -> str:
    """The reply of the named policy; a clear error lists the known names."""
    return find_policy(name)(task)
