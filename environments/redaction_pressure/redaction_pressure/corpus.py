"""The deterministic corpus: a tenant profile and a stream of labelled records per task seed.

Everything here is a pure function of the task seed and the evaluation key. Two streams:

* the *example stream* draws the tenant profile and the example records shown in the
  prompt: a ``random.Random`` seeded with a string built from :data:`EXAMPLE_STREAM_VERSION`
  and the seed (string seeds are hashed with SHA-512 by CPython, so it is identical on
  every machine);
* the *evaluation stream* draws the evaluation records (scored, never shown): a
  :class:`~redaction_pressure.keyed_stream.KeyedStream`, SHAKE-256 keyed with the
  task's evaluation key. It shares no state with the example stream, so recovering the
  Mersenne Twister from the examples (possible with enough of them) predicts nothing
  about it. Public splits derive the key from the seed (:func:`public_evaluation_key`);
  private_eval derives it from the private secret (``splits.private_evaluation_key``).

No ``hash()``, set iteration order or clock is consulted.

A task is a tenant: which credential families it treats as secret (with their
sub-variants and config key names), which look-alikes it wants kept (test-mode keys,
documented example keys, hashes, public keys, placeholders, masked values, near misses)
and one invented in-house token format. The examples are shown to the model as labelled
records; the evaluation records are only ever scored.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from redaction_pressure.keyed_stream import KeyedStream
from redaction_pressure.knobs import GENERIC_DECOYS as GENERIC_DECOYS
from redaction_pressure.knobs import RECORD_KINDS as RECORD_KINDS
from redaction_pressure.knobs import CorpusKnobs
from redaction_pressure.records import LabelledRecord, LabelledSpan, SpanLabel

CORPUS_VERSION = "rp-corpus-3"
"""rp-corpus-3: what is *not* secret varies by tenant (whole credential families it treats
as public, kept variants such as test keys, config keys whose values are not
credentials, its own public ids and sandbox tokens), those look-alikes are drawn into the
evaluation records as often as secrets, and the in-house format comes from a space too
large to list. rp-corpus-2: evaluation records come from the keyed evaluation stream."""
EXAMPLE_STREAM_VERSION = "rp-corpus-3"
"""Names the example stream's seed string. Change it only together with CORPUS_VERSION."""

EXAMPLE_RECORDS = CorpusKnobs().example_records
"""Records shown in the prompt with their secrets listed (default knobs)."""
EVALUATION_RECORDS = CorpusKnobs().evaluation_records
"""Records the rules are scored on; never shown (default knobs). Sized for a few ms of
scoring."""


# Documented example credentials (AWS docs, jwt.io): they look real and must be kept.
AWS_EXAMPLE_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT_IO_EXAMPLE = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
ALNUM = UPPER + LOWER + DIGITS
BASE32 = UPPER + "234567"
HEX = "0123456789abcdef"
BASE64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
PASSWORD_TAIL = ALNUM + "!#%+._-"
DSN_PASSWORD_TAIL = ALNUM + "._~-"

INHOUSE_ALPHABETS: dict[str, str] = {"hex": HEX, "base62": ALNUM, "base32": BASE32}

# Variants a tenant can treat as secret, grouped by the family recorded on the span.
SECRET_VARIANTS: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("AKIA", "ASIA"),
    "aws_secret_access_key": ("key",),
    "github_token": ("ghp", "gho", "ghs", "github_pat"),
    "slack_token": ("xoxb", "xoxp"),
    "stripe_secret_key": ("sk_live", "rk_live"),
    "google_api_key": ("key",),
    "jwt": ("hs256",),
    "private_key": ("ec", "pkcs8", "openssh"),
    "dsn_password": ("url",),
    "bearer_token": ("header",),
    "npm_token": ("key",),
}
STRIPE_TEST_VARIANTS: dict[str, str] = {"sk_live": "sk_test", "rk_live": "rk_test"}
"""The test-mode counterpart of each Stripe live variant: secret for some tenants, kept by
others."""
CONFIG_KEY_POOL: tuple[str, ...] = (
    "password",
    "db_password",
    "admin_password",
    "client_secret",
    "api_secret",
    "smtp_password",
    "passphrase",
    "signing_secret",
    "redis_password",
    "ldap_password",
    "webhook_secret",
    "app_secret",
    "master_key",
    "encryption_key",
)
"""Config keys a tenant can use. Some hold its passwords; for some tenants others hold
password-like values that are not credentials (kept)."""
KEPT_VARIANT_RATE = 0.7
"""Chance that a secret family also shows one of its unused variants, kept (e.g. GitHub
OAuth tokens of a public demo app, Slack user tokens of a bot sandbox)."""
STRIPE_TEST_SECRET_RATE = 0.4
INHOUSE_TEST_SECRET_RATE = 0.5

INHOUSE_WORDS: tuple[str, ...] = (
    "live", "prod", "test", "sandbox", "dev", "stage", "pub", "demo", "app", "svc",
    "api", "int", "ext", "key", "tok", "sk", "pk", "acct", "org", "usr",
)  # fmt: skip
"""Environment words of in-house tokens. Which word marks a credential, which a sandbox
token and which a public id is drawn per tenant from this one pool, so no word is
secret everywhere."""
_RESERVED_PREFIXES: tuple[str, ...] = (
    "sk", "rk", "pk", "gh", "npm", "xox", "aiza", "akia", "asia", "eyj", "ssh", "github",
)  # fmt: skip
"""Prefixes an in-house token must not start with (they are other families' shapes)."""
INHOUSE_LENGTHS = (20, 48)
"""Inclusive range of in-house body lengths."""

UNIT_DESCRIPTIONS: dict[str, str] = {
    "aws_access_key_id:AKIA": "AWS access key ids (`AKIA...`)",
    "aws_access_key_id:ASIA": "AWS temporary access key ids (`ASIA...`)",
    "aws_secret_access_key:key": "AWS secret access keys (under `aws_secret_access_key`)",
    "github_token:ghp": "GitHub personal access tokens (`ghp_...`)",
    "github_token:gho": "GitHub OAuth tokens (`gho_...`)",
    "github_token:ghs": "GitHub app installation tokens (`ghs_...`)",
    "github_token:github_pat": "fine-grained GitHub tokens (`github_pat_...`)",
    "slack_token:xoxb": "Slack bot tokens (`xoxb-...`)",
    "slack_token:xoxp": "Slack user tokens (`xoxp-...`)",
    "stripe_secret_key:sk_live": "Stripe live secret keys (`sk_live_...`)",
    "stripe_secret_key:rk_live": "Stripe live restricted keys (`rk_live_...`)",
    "stripe_secret_key:sk_test": "Stripe test-mode secret keys (`sk_test_...`)",
    "stripe_secret_key:rk_test": "Stripe test-mode restricted keys (`rk_test_...`)",
    "google_api_key:key": "Google API keys (`AIza...`)",
    "jwt:hs256": "JSON Web Tokens (`eyJ...`)",
    "private_key:ec": "EC private keys (`-----BEGIN EC PRIVATE KEY-----`)",
    "private_key:pkcs8": "PKCS#8 private keys (`-----BEGIN PRIVATE KEY-----`)",
    "private_key:openssh": "OpenSSH private keys (`-----BEGIN OPENSSH PRIVATE KEY-----`)",
    "dsn_password:url": "passwords in connection URLs (`scheme://user:PASSWORD@host`)",
    "bearer_token:header": "opaque bearer tokens (`Authorization: Bearer ...`)",
    "npm_token:key": "npm tokens (`npm_...`)",
}
_KEPT_REASONS: tuple[str, ...] = (
    "they are test fixtures published with our SDKs",
    "they belong to the public demo tenant",
    "they are public by design",
    "they were revoked and published in an incident report",
    "they only reach a local emulator",
)

_PREFIX_SYLLABLES = ("zor", "kel", "vex", "tan", "mur", "qui", "dra", "lum", "bex", "nor", "syl")
_TENANT_SYLLABLES = ("Nor", "Qui", "Val", "Tes", "Mar", "Bri", "Cor", "Lum", "Hal", "Ost")
_TENANT_ENDINGS = ("vale", "lon", "tera", "mark", "wick", "dyne", "stead", "ora")
_SERVICES = ("billing", "ledger", "search", "checkout", "notifier", "ingest", "reports", "auth")
_USERS = ("maya", "tomas", "priya", "jonas", "aiko", "femi", "lucia", "omar")


class InHouseFormat(BaseModel):
    """The tenant's own token format: ``{prefix}{sep}{env}{sep}{body}``.

    ``live_word`` marks its credentials, ``test_word`` its sandbox tokens (secret for
    some tenants, kept by others) and ``public_word`` its public object ids (kept); the
    three words come from one pool, so no word means the same thing for every tenant.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prefix: str
    separator: str
    live_word: str
    test_word: str
    public_word: str
    alphabet_name: Literal["hex", "base62", "base32"]
    length: int

    @property
    def alphabet(self) -> str:
        return INHOUSE_ALPHABETS[self.alphabet_name]

    def head(self, env_word: str) -> str:
        return f"{self.prefix}{self.separator}{env_word}{self.separator}"


class TenantProfile(BaseModel):
    """What one task's tenant treats as secret and which look-alikes it keeps."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant: str
    domain: str
    secret_variants: tuple[str, ...]
    """``family:variant`` units; every one appears as a secret in the examples."""
    config_keys: tuple[str, ...]
    """Config keys whose values are passwords for this tenant (family config_password)."""
    stripe_test_is_secret: bool
    inhouse_test_is_secret: bool
    inhouse: InHouseFormat
    decoy_kinds: tuple[str, ...]
    """Generic look-alike kinds (from the knobs' pool)."""
    public_families: tuple[str, ...] = ()
    """Credential families this tenant treats as public: their values are kept."""
    kept_variants: tuple[str, ...] = ()
    """``family:variant`` units whose values look like credentials but are kept: the
    public families' variants, kept variants of secret families, test-mode Stripe keys,
    sandbox and public-id in-house tokens and ``config_password:<key>`` for
    :attr:`kept_config_keys`. Every one appears, kept, in the examples and is drawn into
    evaluation records as often as a secret."""
    kept_config_keys: tuple[str, ...] = ()
    """Config keys whose password-like values are not credentials for this tenant."""
    kept_reason: str = ""

    @property
    def secret_families(self) -> tuple[str, ...]:
        return tuple(sorted({unit.split(":", 1)[0] for unit in self.secret_variants}))

    def policy_notes(self) -> tuple[str, ...]:
        """Statements the tenant's security team makes in the prompt."""
        fmt = self.inhouse
        notes = [
            f"{self.tenant} issues its own API tokens: `{fmt.head(fmt.live_word)}...` "
            "tokens are credentials."
        ]
        test_head = fmt.head(fmt.test_word)
        if self.inhouse_test_is_secret:
            notes.append(f"Sandbox tokens (`{test_head}...`) are credentials too.")
        else:
            notes.append(f"Sandbox tokens (`{test_head}...`) are not secret: keep them.")
        notes.append(
            f"`{fmt.head(fmt.public_word)}...` values are public object ids, not "
            "credentials: keep them."
        )
        described = [
            UNIT_DESCRIPTIONS[u]
            for u in self.secret_variants
            if u in UNIT_DESCRIPTIONS
            and not u.startswith("stripe_secret_key:sk_test")
            and not u.startswith("stripe_secret_key:rk_test")
        ]
        if described:
            notes.append(f"Credentials {self.tenant} uses: " + "; ".join(described) + ".")
        if "stripe_secret_key" in self.secret_families:
            if self.stripe_test_is_secret:
                notes.append("Stripe test-mode keys (sk_test_, rk_test_) are treated as secrets.")
            else:
                notes.append(
                    "Stripe test-mode keys (sk_test_, rk_test_) are not secret: keep them."
                )
        kept = [
            UNIT_DESCRIPTIONS[u]
            for u in self.kept_variants
            if u in UNIT_DESCRIPTIONS and "_test" not in u.split(":", 1)[1]
        ]
        if kept:
            notes.append(
                f"Not secret for {self.tenant}, keep them ({self.kept_reason}): "
                + "; ".join(kept)
                + "."
            )
        keys = ", ".join(f"`{key}`" for key in self.config_keys)
        notes.append(f"Config passwords live under {keys}.")
        if self.kept_config_keys:
            kept_keys = ", ".join(f"`{key}`" for key in self.kept_config_keys)
            notes.append(
                f"Values under {kept_keys} are public identifiers, not credentials: keep them."
            )
        return tuple(notes)


class GeneratedTask(BaseModel):
    """One task: the tenant, the examples shown to the model, the records scored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int
    corpus_version: str
    profile: TenantProfile
    examples: tuple[LabelledRecord, ...]
    evaluation: tuple[LabelledRecord, ...]

    def digest(self) -> str:
        """SHA-256 of the canonical JSON form: equal digests mean byte-identical tasks."""
        return hashlib.sha256(self.model_dump_json().encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- values


def _chars(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _bytes(rng: random.Random, n: int) -> bytes:
    return rng.getrandbits(8 * n).to_bytes(n, "big")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, rem = divmod(number, 62)
        digits.append(DIGITS[rem] if rem < 10 else (UPPER + LOWER)[rem - 10])
    return "".join(reversed(digits))


def _checksummed(rng: random.Random, prefix: str, body_len: int) -> str:
    """GitHub/npm style: random base62 body whose last 6 chars are its CRC32 in base62."""
    body = _chars(rng, ALNUM, body_len - 6)
    return prefix + body + _base62(zlib.crc32(body.encode("ascii")), 6)


def _password(rng: random.Random, tail: str, low: int = 12, high: int = 22) -> str:
    while True:
        value = rng.choice(ALNUM) + _chars(rng, tail, rng.randint(low, high) - 1)
        # Trailing punctuation would blur the value's end in prose and logs.
        if value[-1] in ALNUM:
            return value


def _pem(label: str, der: bytes) -> str:
    body = base64.b64encode(der).decode("ascii")
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def _private_key(rng: random.Random, variant: str) -> str:
    if variant == "ec":
        der = (
            bytes.fromhex("30770201010420")
            + _bytes(rng, 32)
            + bytes.fromhex("a00a06082a8648ce3d030107a144034200")
            + _bytes(rng, 65)
        )
        return _pem("EC PRIVATE KEY", der)
    if variant == "pkcs8":
        return _pem(
            "PRIVATE KEY", bytes.fromhex("302e020100300506032b657004220420") + _bytes(rng, 32)
        )
    der = b"openssh-key-v1\x00" + b"\x00\x00\x00\x04none\x00\x00\x00\x04none" + _bytes(rng, 160)
    return _pem("OPENSSH PRIVATE KEY", der)


def _jwt(rng: random.Random, domain: str) -> str:
    header = {"alg": "HS256", "typ": "JWT"}
    payload = {
        "sub": f"user-{rng.randint(1000, 99999)}",
        "iss": f"https://auth.{domain}",
        "iat": 1_700_000_000 + rng.randint(0, 40_000_000),
        "scope": rng.choice(("read", "read write", "admin")),
    }

    def part(obj: Mapping[str, object]) -> str:
        return _b64url(json.dumps(obj, separators=(",", ":")).encode("utf-8"))

    return f"{part(header)}.{part(payload)}.{_b64url(_bytes(rng, 32))}"


def _inhouse_body(rng: random.Random, fmt: InHouseFormat) -> str:
    return _chars(rng, fmt.alphabet, fmt.length)


def secret_value(rng: random.Random, unit: str, profile: TenantProfile) -> str:
    """A fresh secret of the ``family:variant`` unit, with the real alphabet and shape."""
    family, variant = unit.split(":", 1)
    if family == "aws_access_key_id":
        return variant + _chars(rng, BASE32, 16)
    if family == "aws_secret_access_key":
        return _chars(rng, BASE64, 40)
    if family == "github_token":
        if variant == "github_pat":
            return f"github_pat_{_chars(rng, ALNUM, 22)}_{_chars(rng, ALNUM, 59)}"
        return _checksummed(rng, f"{variant}_", 36)
    if family == "slack_token":
        ids = f"{rng.randint(10**10, 10**12)}-{rng.randint(10**11, 10**13)}"
        if variant == "xoxb":
            return f"xoxb-{ids}-{_chars(rng, ALNUM, 24)}"
        return f"xoxp-{ids}-{rng.randint(10**11, 10**13)}-{_chars(rng, HEX, 32)}"
    if family == "stripe_secret_key":
        return f"{variant}_{_chars(rng, ALNUM, rng.choice((24, 34)))}"
    if family == "google_api_key":
        return "AIza" + _chars(rng, URLSAFE, 35)
    if family == "jwt":
        return _jwt(rng, profile.domain)
    if family == "private_key":
        return _private_key(rng, variant)
    if family == "dsn_password":
        return _password(rng, DSN_PASSWORD_TAIL)
    if family == "bearer_token":
        return _chars(rng, ALNUM, rng.randint(32, 44))
    if family == "config_password":
        return _password(rng, PASSWORD_TAIL)
    if family == "npm_token":
        return _checksummed(rng, "npm_", 36)
    if family == "inhouse_token":
        fmt = profile.inhouse
        word = {"live": fmt.live_word, "test": fmt.test_word, "public": fmt.public_word}[variant]
        return fmt.head(word) + _inhouse_body(rng, fmt)
    raise ValueError(f"unknown secret unit {unit!r}")


# --------------------------------------------------------------------------- profile


def _inhouse_prefix(rng: random.Random) -> str:
    """2-5 characters, first a letter; about 1.7 million choices per separator."""
    while True:
        prefix = rng.choice(LOWER) + _chars(rng, LOWER + DIGITS, rng.randint(1, 4))
        if not prefix.startswith(_RESERVED_PREFIXES):
            return prefix


def _tenant_profile(rng: random.Random, knobs: CorpusKnobs) -> TenantProfile:
    tenant = rng.choice(_TENANT_SYLLABLES) + rng.choice(_TENANT_ENDINGS)
    domain = f"{tenant.lower()}.internal"
    families = sorted(SECRET_VARIANTS)
    family_count = rng.randint(knobs.secret_families.low, knobs.secret_families.high)
    chosen = sorted(rng.sample(families, family_count))
    rest = [family for family in families if family not in chosen]
    public_count = min(
        rng.randint(knobs.public_families.low, knobs.public_families.high), len(rest)
    )
    public = sorted(rng.sample(rest, public_count))
    units: list[str] = []
    kept: list[str] = []
    for family in chosen:
        variants = SECRET_VARIANTS[family]
        count = 1 if len(variants) == 1 else rng.choice((1, 1, 2))
        used = sorted(rng.sample(variants, count))
        units.extend(f"{family}:{v}" for v in used)
        unused = [v for v in variants if v not in used]
        if unused and rng.random() < KEPT_VARIANT_RATE:
            kept.append(f"{family}:{rng.choice(unused)}")
    for family in public:
        variants = SECRET_VARIANTS[family]
        count = 1 if len(variants) == 1 else rng.choice((1, 2))
        kept.extend(f"{family}:{v}" for v in sorted(rng.sample(variants, count)))
    keys = rng.sample(CONFIG_KEY_POOL, rng.randint(2, 5))
    secret_key_count = rng.randint(1, min(3, len(keys) - 1))
    config_keys = tuple(sorted(keys[:secret_key_count]))
    kept_config_keys = tuple(sorted(keys[secret_key_count:]))
    units.extend(f"config_password:{key}" for key in config_keys)
    kept.extend(f"config_password:{key}" for key in kept_config_keys)
    stripe_test_is_secret = "stripe_secret_key" in chosen and rng.random() < STRIPE_TEST_SECRET_RATE
    if "stripe_secret_key" in chosen:
        tests = [
            f"stripe_secret_key:{STRIPE_TEST_VARIANTS[u.split(':', 1)[1]]}"
            for u in units
            if u.startswith("stripe_secret_key:")
        ]
        (units if stripe_test_is_secret else kept).extend(tests)
    live_word, test_word, public_word = rng.sample(INHOUSE_WORDS, 3)
    inhouse = InHouseFormat(
        prefix=_inhouse_prefix(rng),
        separator=rng.choice(("_", "-")),
        live_word=live_word,
        test_word=test_word,
        public_word=public_word,
        alphabet_name=rng.choice(("hex", "base62", "base32")),
        length=rng.randint(*INHOUSE_LENGTHS),
    )
    inhouse_test_is_secret = rng.random() < INHOUSE_TEST_SECRET_RATE
    units.append("inhouse_token:live")
    (units if inhouse_test_is_secret else kept).append("inhouse_token:test")
    kept.append("inhouse_token:public")
    pool = knobs.decoy_pool()
    decoys = sorted(rng.sample(pool, rng.randint(knobs.decoy_kinds.low, knobs.decoy_kinds.high)))
    return TenantProfile(
        tenant=tenant,
        domain=domain,
        secret_variants=tuple(units),
        config_keys=config_keys,
        stripe_test_is_secret=stripe_test_is_secret,
        inhouse_test_is_secret=inhouse_test_is_secret,
        inhouse=inhouse,
        decoy_kinds=tuple(decoys),
        public_families=tuple(public),
        kept_variants=tuple(kept),
        kept_config_keys=kept_config_keys,
        kept_reason=rng.choice(_KEPT_REASONS),
    )


# --------------------------------------------------------------------------- items

# An item is what a record line carries: a key name (or None for free text) and the
# value as segments, where a segment is plain text or a labelled piece.


@dataclass(frozen=True)
class _Piece:
    label: SpanLabel
    family: str
    value: str


_Segment = str | _Piece


@dataclass(frozen=True)
class _Item:
    key: str | None
    value: tuple[_Segment, ...]
    bearer: bool = False


_FAMILY_KEYS: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("aws_access_key_id",),
    "aws_secret_access_key": ("aws_secret_access_key",),
    "github_token": ("github_token", "gh_token", "ci_github_token"),
    "slack_token": ("slack_bot_token", "slack_token"),
    "stripe_secret_key": ("stripe_secret_key", "stripe_api_key"),
    "google_api_key": ("google_api_key", "maps_api_key"),
    "jwt": ("session_token", "id_token"),
    "private_key": ("private_key", "tls_private_key"),
    "npm_token": ("npm_token",),
    "inhouse_token": ("service_token", "internal_api_token"),
}


def _family_key(rng: random.Random, family: str) -> str:
    return rng.choice(_FAMILY_KEYS[family])


def _dsn(rng: random.Random, profile: TenantProfile, password: _Segment | None) -> _Item:
    scheme, port = rng.choice(
        (("postgres", 5432), ("mysql", 3306), ("mongodb", 27017), ("redis", 6379), ("amqp", 5672))
    )
    user = rng.choice(("app", "svc_ledger", "admin", "reporting", "worker"))
    host = f"{rng.choice(('db', 'primary', 'cache', 'mq'))}.{profile.domain}"
    tail = f"@{host}:{port}/{rng.choice(('main', 'orders', '0', 'events'))}"
    key = rng.choice(("database_url", "dsn", "broker_url"))
    if password is None:
        return _Item(key, (f"{scheme}://{host}:{port}/{rng.choice(('main', '0'))}",))
    return _Item(key, (f"{scheme}://{user}:", password, tail))


def _secret_item(
    rng: random.Random, unit: str, profile: TenantProfile, *, kept: bool = False
) -> _Item:
    """A line item carrying a fresh value of ``unit``: a secret, or (``kept``) the same
    shape in the same places labelled as a decoy of family ``kept:<unit>``."""
    family, variant = unit.split(":", 1)
    value = secret_value(rng, unit, profile)
    piece = _Piece("decoy", f"kept:{unit}", value) if kept else _Piece("secret", family, value)
    if family == "dsn_password":
        return _dsn(rng, profile, piece)
    if family == "bearer_token":
        return _Item(None, (piece,), bearer=True)
    if family == "config_password":
        return _Item(variant, (piece,))
    if family == "aws_secret_access_key":
        return _Item("aws_secret_access_key", (piece,))
    if family in ("jwt",) and rng.random() < 0.4:
        return _Item(None, (piece,), bearer=True)
    if family == "private_key" or rng.random() < 0.75:
        return _Item(_family_key(rng, family), (piece,))
    return _Item(None, (piece,))


def _near_miss(rng: random.Random, profile: TenantProfile) -> _Piece:
    """A value one step away from a real credential: wrong alphabet, length or truncated."""
    options = ["aws", "github", "google", "npm", "slack", "stripe", "inhouse", "jwt"]
    pick = rng.choice(options)
    if pick == "aws":
        body = _chars(rng, UPPER + DIGITS, 15) + rng.choice("0189")
        value = "AKIA" + "".join(rng.sample(body, len(body)))
    elif pick == "github":
        value = _checksummed(rng, "ghp_", 36)[: rng.randint(14, 30)] + "..."
    elif pick == "google":
        value = "AIza" + _chars(rng, URLSAFE, rng.choice((33, 34)))
    elif pick == "npm":
        value = "npm_" + _chars(rng, ALNUM, rng.choice((30, 35)))
    elif pick == "slack":
        value = f"xoxb-{rng.randint(10**10, 10**12)}-{_chars(rng, ALNUM, 18)}"
    elif pick == "stripe":
        value = "sk_live_" + _chars(rng, ALNUM, rng.randint(6, 12)) + "..."
    elif pick == "inhouse":
        fmt = profile.inhouse
        wrong = {"hex": "ghijkmnpqrstuvwxyz", "base62": "_.", "base32": "01890189"}[
            fmt.alphabet_name
        ]
        body = _inhouse_body(rng, fmt)
        if rng.random() < 0.5:
            cut = rng.randint(4, fmt.length - 4)
            body = body[:cut] + rng.choice(wrong) + body[cut + 1 :]
            if fmt.alphabet_name == "base62":
                # "_" and "." end an in-house token, so a wrong character there is
                # a truncation; make it a length error instead.
                body = body.replace("_", "").replace(".", "")
        else:
            body = body[: fmt.length - rng.choice((2, 3, 5))]
        value = fmt.head(fmt.live_word) + body
    else:
        token = _jwt(rng, profile.domain)
        value = token[: token.rindex(".") + 1]
    return _Piece("decoy", "near_miss", value)


def _masked(rng: random.Random) -> tuple[str | None, str]:
    last4 = _chars(rng, DIGITS + LOWER, 4)
    return rng.choice(
        (
            ("stripe_secret_key", f"sk_live_****{last4}"),
            ("github_token", f"ghp_****{last4}"),
            ("aws_secret_access_key", "*" * rng.choice((8, 12, 40))),
            (None, f"****{last4}"),
            ("aws_access_key_id", f"AKIA{'*' * 12}{_chars(rng, BASE32, 4)}"),
        )
    )


_PLACEHOLDERS: tuple[Callable[[str], str], ...] = (
    lambda key: "${" + key.upper() + "}",
    lambda key: "<YOUR_TOKEN>",
    lambda key: "{{ secrets." + key.upper() + " }}",
    lambda key: "your-api-key-here",
    lambda key: "<" + key.upper() + ">",
)


def _decoy_item(rng: random.Random, kind: str, profile: TenantProfile) -> _Item:
    def one(family: str, value: str, key: str | None) -> _Item:
        return _Item(key, (_Piece("decoy", family, value),))

    if kind == "aws_example_key":
        if rng.random() < 0.5:
            return one("aws_example_key", AWS_EXAMPLE_KEY_ID, "aws_access_key_id")
        return one("aws_example_key", AWS_EXAMPLE_SECRET, "aws_secret_access_key")
    if kind == "jwt_example":
        if rng.random() < 0.5:
            return _Item(None, (_Piece("decoy", "jwt_example", JWT_IO_EXAMPLE),), bearer=True)
        return one("jwt_example", JWT_IO_EXAMPLE, "example_token")
    if kind == "stripe_publishable_key":
        mode = rng.choice(("live", "test"))
        return one(
            "stripe_publishable_key",
            f"pk_{mode}_{_chars(rng, ALNUM, 24)}",
            "stripe_publishable_key",
        )
    if kind == "sha256":
        return one(
            "hash", _chars(rng, HEX, 64), rng.choice(("checksum", "sha256", "artifact_digest"))
        )
    if kind == "git_sha":
        return one("git_sha", _chars(rng, HEX, 40), rng.choice(("commit", "git_sha", None)))
    if kind == "uuid":
        h = _chars(rng, HEX, 32)
        value = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"
        return one("uuid", value, rng.choice(("request_id", "tenant_id", None)))
    if kind == "base64_blob":
        value = base64.b64encode(_bytes(rng, rng.choice((30, 32)))).decode("ascii")
        return one("base64_blob", value, rng.choice(("nonce", "content_md5", "etag")))
    if kind == "ssh_public_key":
        blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + _bytes(rng, 32)
        user = rng.choice(_USERS)
        value = f"ssh-ed25519 {base64.b64encode(blob).decode('ascii')} {user}@laptop"
        return one("public_key", value, "ssh_public_key")
    if kind == "pem_public_key":
        der = bytes.fromhex("302a300506032b6570032100") + _bytes(rng, 32)
        return one("public_key", _pem("PUBLIC KEY", der), "public_key")
    if kind == "bcrypt_hash":
        value = "$2b$12$" + _chars(rng, ALNUM + "./", 53)
        return one("hash", value, "password_hash")
    if kind == "placeholder":
        family_key = rng.choice(
            ("github_token", "npm_token", "slack_bot_token", "api_key", *profile.config_keys)
        )
        choices = _PLACEHOLDERS
        if family_key in profile.config_keys:
            # A word-like placeholder under a password key is indistinguishable from a
            # password unless the examples happen to show it; keep those unambiguous.
            choices = tuple(p for p in _PLACEHOLDERS if not p(family_key)[0].isalnum())
        value = rng.choice(choices)(family_key)
        if rng.random() < 0.25:
            return _Item(None, (_Piece("decoy", "placeholder", "<YOUR_TOKEN>"),), bearer=True)
        return one("placeholder", value, family_key)
    if kind == "masked":
        key, value = _masked(rng)
        if key is None and rng.random() < 0.5:
            return _Item(rng.choice(profile.config_keys), (_Piece("decoy", "masked", "********"),))
        return one("masked", value, key)
    if kind == "key_name":
        name = rng.choice(
            (
                "AWS_SECRET_ACCESS_KEY",
                "GITHUB_TOKEN",
                "STRIPE_SECRET_KEY",
                *(k.upper() for k in profile.config_keys),
            )
        )
        return one("key_name", name, None)
    if kind == "near_miss":
        return (
            _Item(None, (_near_miss(rng, profile),))
            if rng.random() < 0.5
            else _Item("token", (_near_miss(rng, profile),))
        )
    raise ValueError(f"unknown decoy kind {kind!r}")


# --------------------------------------------------------------------------- rendering


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _replace_newlines(segments: Sequence[_Segment], replacement: str) -> tuple[_Segment, ...]:
    """``segments`` with every newline, labelled pieces included, replaced by ``replacement``."""
    out: list[_Segment] = []
    for seg in segments:
        if isinstance(seg, _Piece):
            out.append(_Piece(seg.label, seg.family, seg.value.replace("\n", replacement)))
        else:
            out.append(seg.replace("\n", replacement))
    return tuple(out)


def _multiline(segments: Sequence[_Segment]) -> bool:
    return any("\n" in (s.value if isinstance(s, _Piece) else s) for s in segments)


@dataclass
class _Context:
    rng: random.Random
    profile: TenantProfile
    service: str
    clock: int
    python: bool

    def ts(self) -> str:
        self.clock += self.rng.randint(1, 90)
        h, rem = divmod(self.clock, 3600)
        m, s = divmod(rem, 60)
        return f"2024-03-{11 + self.rng.randint(0, 2):02d}T{h % 24:02d}:{m:02d}:{s:02d}Z"

    def hhmm(self) -> str:
        self.clock += self.rng.randint(20, 400)
        return f"{(self.clock // 3600) % 24:02d}:{(self.clock // 60) % 60:02d}"

    def ip(self) -> str:
        return f"10.{self.rng.randint(0, 40)}.{self.rng.randint(0, 255)}.{self.rng.randint(2, 254)}"


def _bearer_line(kind: str, ctx: _Context, value: tuple[_Segment, ...]) -> list[_Segment]:
    api = f"https://api.{ctx.profile.domain}/v1/{ctx.rng.choice(('orders', 'users', 'exports'))}"
    if kind in ("json",):
        return ['  "Authorization": "Bearer ', *value, '",\n']
    if kind in ("yaml",):
        return ["  authorization: Bearer ", *value, "\n"]
    if kind in ("env",):
        return ['AUTH_HEADER="Bearer ', *value, '"\n']
    if kind == "source":
        if ctx.python:
            return ['HEADERS = {"Authorization": "Bearer ', *value, '"}\n']
        return ["const headers = { Authorization: `Bearer ", *value, "` };\n"]
    if kind in ("shell", "ci_log", "markdown"):
        lead = {"shell": "$ ", "ci_log": f"[{ctx.ts()}] ", "markdown": "    "}[kind]
        return [f'{lead}curl -sH "Authorization: Bearer ', *value, f'" {api}\n']
    if kind == "http_log":
        return [f"{ctx.ts()} DEBUG > Authorization: Bearer ", *value, "\n"]
    if kind == "app_log":
        return [
            f"{ctx.ts()} DEBUG [{ctx.service}] outgoing headers: Authorization: Bearer ",
            *value,
            "\n",
        ]
    return [
        f"[{ctx.hhmm()}] {ctx.rng.choice(_USERS)}: header is Authorization: Bearer ",
        *value,
        "\n",
    ]


def _assignment_line(
    kind: str, ctx: _Context, key: str, value: tuple[_Segment, ...]
) -> list[_Segment]:
    rng = ctx.rng
    multi = _multiline(value)
    upper = key.upper()
    if kind == "env":
        if multi:
            return [f'{upper}="', *value, '"\n']
        return [f"{upper}=", *value, "\n"] if rng.random() < 0.7 else [f'{upper}="', *value, '"\n']
    if kind == "yaml":
        if multi:
            return [f"  {key}: |\n    ", *_replace_newlines(value, "\n    "), "\n"]
        return (
            [f"  {key}: ", *value, "\n"] if rng.random() < 0.7 else [f'  {key}: "', *value, '"\n']
        )
    if kind == "json":
        return [f'  "{_camel(key)}": "', *_replace_newlines(value, "\\n"), '",\n']
    if kind == "shell":
        if multi:
            return [f"export {upper}='", *value, "'\n"]
        return [f"  {rng.randint(100, 999)}  export {upper}=", *value, "\n"]
    if kind == "source":
        if ctx.python:
            return [
                f'{upper} = """' if multi else f'{upper} = "',
                *value,
                '"""\n' if multi else '"\n',
            ]
        return [
            f"const {_camel(key)} = `" if multi else f'const {_camel(key)} = "',
            *value,
            "`;\n" if multi else '";\n',
        ]
    if kind == "app_log":
        return [
            f"{ctx.ts()} INFO  [{ctx.service}] config loaded {key}=",
            *_replace_newlines(value, "\\n"),
            "\n",
        ]
    if kind == "ci_log":
        return [f"[{ctx.ts()}] ENV {upper}=", *_replace_newlines(value, "\\n"), "\n"]
    if kind == "http_log":
        plain = "".join(s.value if isinstance(s, _Piece) else s for s in value)
        if all(c in URLSAFE + ".~:/@" for c in plain) and not multi:
            path = rng.choice(("export", "sync", "webhook"))
            return [
                f'{ctx.ip()} - - [11/Mar/2024:{ctx.hhmm()}:07 +0000] "GET /v1/{path}?{key}=',
                *value,
                f' HTTP/1.1" 200 {rng.randint(200, 9000)}\n',
            ]
        return [
            f'{ctx.ts()} DEBUG request body: {{"{_camel(key)}": "',
            *_replace_newlines(value, "\\n"),
            '"}\n',
        ]
    if kind == "markdown":
        if multi:
            return [f"`{upper}`:\n\n```\n", *value, "\n```\n"]
        return [f"- `{upper}={''}", *value, "`\n"]
    user = rng.choice(_USERS)
    if multi:
        return [f"[{ctx.hhmm()}] {user}: {key} below\n", *value, "\n"]
    return [f"[{ctx.hhmm()}] {user}: {upper}=", *value, " should work now\n"]


def _mention_line(kind: str, ctx: _Context, value: tuple[_Segment, ...]) -> list[_Segment]:
    rng = ctx.rng
    flat = _replace_newlines(value, "\\n")
    if kind == "env":
        return ["# previously: ", *flat, "\n"]
    if kind == "yaml":
        return ["  # previous value: ", *flat, "\n"]
    if kind == "json":
        return ['  "note": "rotated from ', *flat, '",\n']
    if kind == "shell":
        return [f"  {rng.randint(100, 999)}  echo ", *flat, " | pbcopy\n"]
    if kind == "source":
        return ["# TODO drop " if ctx.python else "// TODO drop ", *flat, "\n"]
    if kind == "app_log":
        return [f"{ctx.ts()} WARN  [{ctx.service}] rejected credential ", *flat, "\n"]
    if kind == "ci_log":
        return [f"[{ctx.ts()}] using credential ", *flat, "\n"]
    if kind == "http_log":
        return [f"{ctx.ts()} WARN  token ", *flat, " failed validation\n"]
    if kind == "markdown":
        return ["Seen in yesterday's logs: `", *flat, "`.\n"]
    return [f"[{ctx.hhmm()}] {rng.choice(_USERS)}: try ", *flat, "\n"]


def _item_line(kind: str, ctx: _Context, item: _Item) -> list[_Segment]:
    if item.bearer:
        return _bearer_line(kind, ctx, item.value)
    if item.key is None:
        return _mention_line(kind, ctx, item.value)
    return _assignment_line(kind, ctx, item.key, item.value)


def _key_name_line(kind: str, ctx: _Context, piece: _Piece) -> list[_Segment]:
    """Prose about a key name: the name looks sensitive but carries no value."""
    lead = {
        "env": "# rotate ",
        "yaml": "  # rotate ",
        "shell": "  # rotate ",
        "source": "# rotate " if ctx.python else "// rotate ",
        "ci_log": f"[{ctx.ts()}] note: rotate ",
        "app_log": f"{ctx.ts()} INFO  [{ctx.service}] reminder: rotate ",
        "http_log": f"{ctx.ts()} INFO  reminder: rotate ",
        "markdown": "Rotate ",
        "chat": f"[{ctx.hhmm()}] {ctx.rng.choice(_USERS)}: pls rotate ",
    }.get(kind)
    if kind == "json":
        return ['  "comment": "rotate ', piece, ' every 90 days",\n']
    return [lead or "", piece, " every 90 days\n"]


def _filler(kind: str, ctx: _Context) -> list[str]:
    rng, svc, dom = ctx.rng, ctx.service, ctx.profile.domain
    if kind == "env":
        return [
            f"APP_NAME={svc}\n",
            "NODE_ENV=production\n",
            f"PORT={rng.choice((3000, 8080, 9090))}\n",
            "LOG_LEVEL=info\n",
            f"PUBLIC_URL=https://{svc}.{dom}\n",
            f"WORKERS={rng.randint(2, 8)}\n",
        ]
    if kind == "yaml":
        return [
            f"  replicas: {rng.randint(1, 6)}\n",
            "  region: eu-west-1\n",
            f"  image: registry.{dom}/{svc}:1.{rng.randint(0, 9)}.{rng.randint(0, 20)}\n",
            "  timeout_seconds: 30\n",
            "  log_level: info\n",
        ]
    if kind == "json":
        return [
            f'  "service": "{svc}",\n',
            f'  "region": "{rng.choice(("us-east-1", "eu-central-1"))}",\n',
            f'  "retries": {rng.randint(1, 5)},\n',
            '  "debug": false,\n',
        ]
    if kind == "shell":
        return [
            f"  {rng.randint(100, 999)}  cd ~/src/{svc}\n",
            f"  {rng.randint(100, 999)}  git pull --rebase\n",
            f"  {rng.randint(100, 999)}  kubectl -n {svc} get pods\n",
            f"  {rng.randint(100, 999)}  docker compose up -d\n",
        ]
    if kind == "http_log":
        return [
            f'{ctx.ip()} - - [11/Mar/2024:{ctx.hhmm()}:41 +0000] "GET /healthz HTTP/1.1" 200 2\n',
            f'{ctx.ip()} - - [11/Mar/2024:{ctx.hhmm()}:02 +0000] "POST /v1/{svc}/jobs HTTP/1.1" 202 {rng.randint(40, 900)}\n',
            f"{ctx.ts()} DEBUG > Host: api.{dom}\n",
        ]
    if kind == "app_log":
        return [
            f"{ctx.ts()} INFO  [{svc}] request handled in {rng.randint(3, 400)}ms\n",
            f"{ctx.ts()} ERROR [{svc}] upstream failed\n"
            "Traceback (most recent call last):\n"
            f'  File "/srv/{svc}/app/client.py", line {rng.randint(20, 300)}, in fetch\n'
            "    resp.raise_for_status()\n"
            "requests.exceptions.HTTPError: 502 Server Error: Bad Gateway\n",
            f"{ctx.ts()} INFO  [{svc}] retry 1/3 scheduled\n",
        ]
    if kind == "ci_log":
        return [
            "##[group]Run actions/checkout@v4\n",
            f"[{ctx.ts()}] Step {rng.randint(2, 9)}/9 : RUN make test\n",
            f"added {rng.randint(200, 900)} packages in {rng.randint(5, 40)}s\n",
            "##[endgroup]\n",
        ]
    if kind == "source":
        if ctx.python:
            return [
                "import os\nimport requests\n",
                f'BASE_URL = "https://api.{dom}/v1"\n',
                "def fetch(session, path):\n    return session.get(BASE_URL + path, timeout=10).json()\n",
            ]
        return [
            "import fetch from 'node-fetch';\n",
            f"const baseUrl = 'https://api.{dom}/v1';\n",
            "export async function get(path) { return (await fetch(baseUrl + path)).json(); }\n",
        ]
    if kind == "markdown":
        return [
            f"Run `make dev` to start {svc} locally.\n",
            "Credentials come from the vault; never commit them.\n",
            f"See the runbook at https://wiki.{dom}/{svc}.\n",
        ]
    return [
        f"[{ctx.hhmm()}] {rng.choice(_USERS)}: deploy of {svc} is stuck again\n",
        f"[{ctx.hhmm()}] {rng.choice(_USERS)}: looking\n",
        f"[{ctx.hhmm()}] {rng.choice(_USERS)}: fixed, it was the config\n",
    ]


def _header(kind: str, ctx: _Context) -> str:
    svc = ctx.service
    return {
        "env": f"# .env for {svc} ({ctx.profile.tenant})\n",
        "yaml": f"# deploy/{svc}/values.yaml\n{svc}:\n",
        "json": "{\n",
        "shell": "",
        "http_log": "",
        "app_log": "",
        "ci_log": f"CI job #{ctx.rng.randint(1000, 99999)} ({svc})\n",
        "source": f"# {svc}/settings.py\n" if ctx.python else f"// {svc}/config.js\n",
        "markdown": f"# {svc} setup\n\n",
        "chat": f"#{svc}-oncall\n",
    }[kind]


def _footer(kind: str) -> str:
    return '  "version": 2\n}\n' if kind == "json" else ""


def _build_record(index: int, kind: str, ctx: _Context, items: Sequence[_Item]) -> LabelledRecord:
    rng = ctx.rng
    filler = _filler(kind, ctx)
    keep = rng.randint(min(2, len(filler)), len(filler))
    body: list[list[_Segment]] = [[line] for line in filler[:keep]]
    for item in items:
        if (
            item.key is None
            and len(item.value) == 1
            and isinstance(item.value[0], _Piece)
            and item.value[0].family == "key_name"
        ):
            line = _key_name_line(kind, ctx, item.value[0])
        else:
            line = _item_line(kind, ctx, item)
        body.insert(rng.randint(0, len(body)), line)
    segments: list[_Segment] = [_header(kind, ctx)]
    for line in body:
        segments.extend(line)
    segments.append(_footer(kind))
    text_parts: list[str] = []
    spans: list[LabelledSpan] = []
    offset = 0
    for seg in segments:
        if isinstance(seg, _Piece):
            spans.append(
                LabelledSpan(
                    start=offset, end=offset + len(seg.value), label=seg.label, family=seg.family
                )
            )
            text_parts.append(seg.value)
            offset += len(seg.value)
        else:
            text_parts.append(seg)
            offset += len(seg)
    return LabelledRecord(index=index, kind=kind, text="".join(text_parts), spans=tuple(spans))


# --------------------------------------------------------------------------- the task


def _example_rng(task_seed: int) -> random.Random:
    return random.Random(f"redaction-pressure/{EXAMPLE_STREAM_VERSION}/task/{task_seed}")


def public_evaluation_key(task_seed: int) -> bytes:
    """The evaluation key of a public task: derivable from its (public) seed by design.

    Public tasks hide nothing from someone who knows the seed; what matters is that the
    examples do not determine it (they come from a different stream). private_eval keys
    come from the private secret instead, never from the task seed.
    """
    text = f"redaction-pressure/{CORPUS_VERSION}/evaluation-key/{task_seed}"
    return hashlib.sha256(text.encode("utf-8")).digest()


def _record(
    rng: random.Random,
    profile: TenantProfile,
    index: int,
    secrets: Sequence[str],
    decoys: Sequence[str],
    kinds: Sequence[str],
    kept: Sequence[str] = (),
) -> LabelledRecord:
    kind = kinds[rng.randrange(len(kinds))]
    ctx = _Context(rng, profile, rng.choice(_SERVICES), rng.randint(0, 80_000), rng.random() < 0.6)
    items = [_secret_item(rng, unit, profile) for unit in secrets]
    items += [_secret_item(rng, unit, profile, kept=True) for unit in kept]
    items += [_decoy_item(rng, decoy, profile) for decoy in decoys]
    rng.shuffle(items)
    return _build_record(index, kind, ctx, items)


def generate_task(
    task_seed: int, evaluation_key: bytes | None = None, knobs: CorpusKnobs | None = None
) -> GeneratedTask:
    """The task for ``task_seed``: tenant profile, example records, evaluation records.

    ``evaluation_key`` keys the evaluation stream (32 bytes); the default is
    :func:`public_evaluation_key`. ``knobs`` default to the standard corpus. The profile
    and examples depend on ``task_seed`` and the knobs only, the evaluation records on
    the profile, the knobs and ``evaluation_key`` only.
    """
    knobs = CorpusKnobs() if knobs is None else knobs
    profile, examples = _draw_examples(_example_rng(task_seed), knobs)
    key = public_evaluation_key(task_seed) if evaluation_key is None else evaluation_key
    evaluation = _draw_evaluation(KeyedStream(key), profile, knobs, first_index=len(examples))
    return GeneratedTask(
        seed=task_seed,
        corpus_version=CORPUS_VERSION,
        profile=profile,
        examples=examples,
        evaluation=evaluation,
    )


def _draw_examples(
    rng: random.Random, knobs: CorpusKnobs
) -> tuple[TenantProfile, tuple[LabelledRecord, ...]]:
    """The tenant and the records shown in the prompt, from the example stream.

    Every secret unit of the profile and every kept unit (public families, kept
    variants, sandbox tokens, public ids, kept config keys) appears in the examples, so
    the evaluation records never need a decision the examples give no evidence for.
    """
    profile = _tenant_profile(rng, knobs)
    units = list(profile.secret_variants)
    rng.shuffle(units)
    kept = list(profile.kept_variants)
    rng.shuffle(kept)
    count = knobs.example_records
    per_record = max(2, -(-len(units) // count))
    kept_per_record = max(1, -(-len(kept) // count))
    examples: list[LabelledRecord] = []
    for index in range(count):
        chunk = units[index * per_record : (index + 1) * per_record]
        kept_chunk = kept[index * kept_per_record : (index + 1) * kept_per_record]
        decoys = _sample_decoys(rng, profile, knobs)
        examples.append(_record(rng, profile, index, chunk, decoys, knobs.record_kinds, kept_chunk))
    return profile, tuple(examples)


def _sample_decoys(rng: random.Random, profile: TenantProfile, knobs: CorpusKnobs) -> list[str]:
    wanted = rng.randint(knobs.decoys_per_record.low, knobs.decoys_per_record.high)
    return rng.sample(profile.decoy_kinds, min(wanted, len(profile.decoy_kinds)))


_PER_RECORD_COUNTS: tuple[int, ...] = (0, 1, 2, 3)
_PER_RECORD_WEIGHTS: tuple[int, ...] = (1, 4, 4, 2)
_KEPT_PER_RECORD_WEIGHTS: tuple[int, ...] = (1, 2, 4, 4)
"""Kept look-alikes per evaluation record: a little more of them than of secrets (mean
2.0 against 1.64), so redacting every credential shape costs more precision than it
earns recall."""


def _draw_evaluation(
    rng: KeyedStream, profile: TenantProfile, knobs: CorpusKnobs, *, first_index: int
) -> tuple[LabelledRecord, ...]:
    """The scored records, from the keyed evaluation stream only.

    Kept look-alikes are drawn exactly like secrets (same count distribution, uniform
    over the kept units), so a reply that redacts a shape without knowing whether this
    tenant keeps it pays for it in precision and in the clean gate.

    Typed to take a :class:`KeyedStream` so that the example stream (a Mersenne Twister)
    cannot be passed here by mistake; the profile is the only thing shared, and the
    prompt shows it anyway.
    """
    evaluation: list[LabelledRecord] = []
    for offset in range(knobs.evaluation_records):
        count = rng.choices(_PER_RECORD_COUNTS, weights=_PER_RECORD_WEIGHTS)[0]
        if offset == 0:
            count = max(count, 1)
        secrets = [rng.choice(profile.secret_variants) for _ in range(count)]
        kept_count = rng.choices(_PER_RECORD_COUNTS, weights=_KEPT_PER_RECORD_WEIGHTS)[0]
        kept = [
            rng.choice(profile.kept_variants)
            for _ in range(kept_count if profile.kept_variants else 0)
        ]
        decoys = _sample_decoys(rng, profile, knobs)
        index = first_index + offset
        evaluation.append(_record(rng, profile, index, secrets, decoys, knobs.record_kinds, kept))
    return tuple(evaluation)
