"""Splits: which task seeds a split holds, and the commitment that names the split.

* ``train`` and ``dev`` are public: seeds are ``base + index`` over disjoint ranges.
* ``private_eval`` seeds are ``HMAC-SHA256(secret, f"private_eval:{index}")`` with the
  secret read from ``REDACTION_PRESSURE_PRIVATE_SEED``; the top bit is set so a private
  seed can never coincide with a public one. The secret itself goes nowhere: reports and
  traces carry only its SHA-256 commitment.
* Evaluation keys (which key the stream the scored records come from, see corpus.py):
  public tasks derive theirs from the seed; private_eval tasks from the secret, with a
  message distinct from the seed's, so a task seed (even one recovered from the prompt's
  example stream) does not yield its evaluation key.

A :class:`SplitIdentity` is the one value every table, report and trace uses to name
its split. It validates its own commitment, so a dev result cannot be relabelled as a
private evaluation: the public commitments are fixed strings, and a private identity
carrying one of them is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import re
import threading
from collections.abc import Mapping
from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, model_validator

from redaction_pressure.corpus import public_evaluation_key

SplitName = Literal["train", "dev", "private_eval"]
SPLIT_NAMES: tuple[SplitName, ...] = get_args(SplitName)

TRAIN_SEED_BASE = 10_000_000
TRAIN_SIZE = 1_000_000
DEV_SEED_BASE = 20_000_000
DEV_SIZE = 64
PRIVATE_EVAL_DEFAULT_SIZE = 64
PRIVATE_SEED_ENV = "REDACTION_PRESSURE_PRIVATE_SEED"
PRIVATE_SEED_MIN_CHARS = 32
PRIVATE_SEED_MIN_BITS = 128
"""Estimated entropy a secret read from the environment must have: traces publish its
SHA-256 commitment, so a guessable secret can be found offline."""
MAKE_A_SECRET = "python -c 'import secrets; print(secrets.token_hex(32))'"
_PRIVATE_SEED_FLOOR = 1 << 63

_PUBLIC_RANGES: dict[str, tuple[int, int]] = {
    "train": (TRAIN_SEED_BASE, TRAIN_SIZE),
    "dev": (DEV_SEED_BASE, DEV_SIZE),
}


class SplitError(ValueError):
    """A split name, index or private secret is not usable; the message says why."""


def _public_commitment(split: str) -> str:
    base, size = _PUBLIC_RANGES[split]
    text = f"redaction-pressure/public-split/{split}/seeds={base}+[0,{size})"
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


PUBLIC_COMMITMENTS: dict[str, str] = {name: _public_commitment(name) for name in _PUBLIC_RANGES}


def secret_commitment(secret: str) -> str:
    """The SHA-256 commitment to a private secret, as recorded in traces."""
    return "sha256:" + hashlib.sha256(secret.encode("utf-8")).hexdigest()


class SplitIdentity(BaseModel):
    """Names a split and commits to its seed source."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: SplitName
    commitment: str

    @model_validator(mode="after")
    def _commitment_matches_split(self) -> SplitIdentity:
        public = PUBLIC_COMMITMENTS.get(self.split)
        if public is not None and self.commitment != public:
            raise ValueError(f"split {self.split!r} must carry its public commitment {public}")
        if self.split == "private_eval" and self.commitment in PUBLIC_COMMITMENTS.values():
            raise ValueError("a private_eval identity cannot carry a public split's commitment")
        if not self.commitment.startswith("sha256:") or len(self.commitment) != 71:
            raise ValueError("commitment must be 'sha256:' followed by 64 hex digits")
        return self

    @property
    def is_private(self) -> bool:
        return self.split == "private_eval"

    def label(self) -> str:
        """How tables title the split: the name and a short commitment prefix."""
        return f"{self.split} ({self.commitment[:19]})"


def check_split(split: str) -> SplitName:
    """``split`` as a :data:`SplitName`, or a :class:`SplitError` listing the choices."""
    for name in SPLIT_NAMES:
        if split == name:
            return name
    raise SplitError(f"unknown split {split!r}; allowed: {', '.join(SPLIT_NAMES)}")


def estimated_entropy_bits(secret: str) -> float:
    """A conservative estimate of a secret's entropy in bits.

    The smaller of two estimates: (a) each word-like run of letters (3-12 letters in
    one case, or capitalised) counts as one dictionary word (13 bits, a diceware word),
    every other character as a draw from the character classes the secret uses; (b) the secret's length times the Shannon entropy
    of its own character frequencies. Random tokens (``secrets.token_hex(32)``: about
    256 bits) pass; repeated characters, words and short passphrases do not.
    """
    if not secret:
        return 0.0
    for period in range(1, len(secret) // 2 + 1):
        # A repeated unit adds nothing: judge one copy of it.
        if secret == (secret[:period] * (len(secret) // period + 1))[: len(secret)]:
            secret = secret[:period]
            break
    pool = 0
    pool += 10 if any(c.isdigit() for c in secret) else 0
    pool += 26 if any(c.islower() for c in secret) else 0
    pool += 26 if any(c.isupper() for c in secret) else 0
    pool += 33 if any(not c.isalnum() for c in secret) else 0
    per_char = math.log2(max(pool, 2))
    by_class = 0.0
    for run in _RUNS.findall(secret):
        if _WORD.fullmatch(run):
            by_class += _WORD_BITS  # a dictionary word, however long it looks
        else:
            by_class += len(run) * per_char
    counts: dict[str, int] = {}
    for char in secret:
        counts[char] = counts.get(char, 0) + 1
    shannon = -sum(n / len(secret) * math.log2(n / len(secret)) for n in counts.values())
    return max(0.0, min(by_class, shannon * len(secret)))


def check_secret_strength(secret: str) -> None:
    """Refuse a secret shorter than the documented length or weaker than 128 bits."""
    if len(secret) < PRIVATE_SEED_MIN_CHARS:
        state = "is not set" if not secret else f"holds {len(secret)} characters"
        raise SplitError(
            f"{PRIVATE_SEED_ENV} {state}; the private_eval split needs a secret of at "
            f"least {PRIVATE_SEED_MIN_CHARS} characters and {PRIVATE_SEED_MIN_BITS} bits of "
            f"entropy; make one with: {MAKE_A_SECRET}"
        )
    bits = estimated_entropy_bits(secret)
    if bits < PRIVATE_SEED_MIN_BITS:
        raise SplitError(
            f"{PRIVATE_SEED_ENV} has an estimated {bits:.0f} bits of entropy, under the "
            f"{PRIVATE_SEED_MIN_BITS} required: traces publish its SHA-256 commitment, so a "
            f"guessable secret can be found offline; make one with: {MAKE_A_SECRET}"
        )


_RUNS: Final = re.compile(r"[A-Za-z]+|[^A-Za-z]")
_WORD: Final = re.compile(r"[a-z]{3,12}|[A-Z][a-z]{2,11}|[A-Z]{3,12}")
_WORD_BITS: Final = 13.0
"""About a diceware word (7776 words: 12.9 bits)."""

_held_secret: str | None = None
_held_lock = threading.Lock()


def _scrub_initial_environment(name: str) -> None:
    """Overwrite ``name=...`` in this process's initial environment block.

    Removing a variable from ``os.environ`` only drops libc's pointer to it: the string
    stays in the block the kernel copied at exec, which ``/proc/<pid>/environ`` shows
    to every process of the same user. The block's address is in ``/proc/self/stat``
    (fields 50-51); the process may write its own memory through ``/proc/self/mem``.
    Best effort off Linux (no such files): nothing to scrub there in the same way.
    """
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        start, end = int(fields[47]), int(fields[48])  # fields 50-51: env_start, env_end
        with open("/proc/self/mem", "r+b", buffering=0) as memory:
            memory.seek(start)
            block = memory.read(end - start)
            prefix = name.encode() + b"="
            offset = 0
            for entry in block.split(b"\0"):
                if entry.startswith(prefix):
                    memory.seek(start + offset)
                    memory.write(b"\0" * len(entry))
                offset += len(entry) + 1
    except (OSError, ValueError, IndexError):
        return


def take_private_secret() -> str:
    """The private secret, read from ``os.environ`` once and then held here only.

    The first call reads ``REDACTION_PRESSURE_PRIVATE_SEED``, checks its strength,
    removes it from ``os.environ`` and scrubs it from the process's initial environment
    block, so no program started afterwards (an agent runtime that inherits the host
    environment, a scoring worker) and no reader of ``/proc/<pid>/environ`` sees it.
    Later calls return the held secret, unless the variable was set again: then the
    new value is checked and held instead (rotation), and removed the same way.
    """
    global _held_secret
    with _held_lock:
        value = os.environ.pop(PRIVATE_SEED_ENV, None)
        _scrub_initial_environment(PRIVATE_SEED_ENV)
        if value is None:
            if _held_secret is None:
                check_secret_strength("")
            assert _held_secret is not None
            return _held_secret
        check_secret_strength(value)
        _held_secret = value
        return value


def forget_private_secret() -> None:
    """Drop the held secret (tests, and tools that must read a new one from scratch)."""
    global _held_secret
    with _held_lock:
        _held_secret = None


def private_secret_exposed() -> bool:
    """Whether the secret is still in ``os.environ`` (so a runtime that inherits the host
    environment would hand it to the agent)."""
    return PRIVATE_SEED_ENV in os.environ


def read_private_secret(environ: Mapping[str, str] | None = None) -> str:
    """The private secret: from ``environ`` when given (read only, for tests and tools),
    else taken from ``os.environ`` once (:func:`take_private_secret`). Refuses a missing,
    short or weak one with how to make a good one."""
    if environ is None:
        return take_private_secret()
    secret = environ.get(PRIVATE_SEED_ENV, "")
    check_secret_strength(secret)
    return secret


def private_task_seed(secret: str, index: int) -> int:
    """The private task seed for ``index``: a 64-bit HMAC-derived integer >= 2**63."""
    if len(secret) < PRIVATE_SEED_MIN_CHARS:
        raise SplitError(
            f"{PRIVATE_SEED_ENV} must hold at least {PRIVATE_SEED_MIN_CHARS} characters"
        )
    if index < 0:
        raise SplitError(f"index {index} is negative")
    digest = hmac.new(
        secret.encode("utf-8"), f"private_eval:{index}".encode(), hashlib.sha256
    ).digest()
    return _PRIVATE_SEED_FLOOR | int.from_bytes(digest[:8], "big")


def private_evaluation_key(secret: str, index: int) -> bytes:
    """The evaluation-stream key of private task ``index``: HMAC of the secret only."""
    if len(secret) < PRIVATE_SEED_MIN_CHARS:
        raise SplitError(
            f"{PRIVATE_SEED_ENV} must hold at least {PRIVATE_SEED_MIN_CHARS} characters"
        )
    if index < 0:
        raise SplitError(f"index {index} is negative")
    message = f"private_eval:evaluation-key:{index}".encode()
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).digest()


def public_task_seed(split: str, index: int) -> int:
    """The seed of task ``index`` of the public ``train`` or ``dev`` split."""
    if split not in _PUBLIC_RANGES:
        raise SplitError(f"split {split!r} has no public seeds; public splits: train, dev")
    base, size = _PUBLIC_RANGES[split]
    if not 0 <= index < size:
        raise SplitError(f"index {index} is outside split {split!r} (0..{size - 1})")
    return base + index


def split_size(split: SplitName, private_size: int = PRIVATE_EVAL_DEFAULT_SIZE) -> int:
    return _PUBLIC_RANGES[split][1] if split in _PUBLIC_RANGES else private_size


class SplitSeeds:
    """Resolves task indices of one split to seeds; holds the private secret if any.

    The secret stays inside this object: :attr:`identity` exposes only its commitment.
    """

    def __init__(
        self,
        split: str,
        *,
        private_size: int = PRIVATE_EVAL_DEFAULT_SIZE,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.split: SplitName = check_split(split)
        self._secret: str | None = None
        if self.split == "private_eval":
            self._secret = read_private_secret(environ)
            commitment = secret_commitment(self._secret)
        else:
            commitment = PUBLIC_COMMITMENTS[self.split]
        self.size = split_size(self.split, private_size)
        self.identity = SplitIdentity(split=self.split, commitment=commitment)

    def seed(self, index: int) -> int:
        if not 0 <= index < self.size:
            raise SplitError(f"index {index} is outside split {self.split!r} (0..{self.size - 1})")
        if self._secret is not None:
            return private_task_seed(self._secret, index)
        return public_task_seed(self.split, index)

    def evaluation_key(self, index: int) -> bytes:
        """The key of task ``index``'s evaluation stream (see corpus.generate_task)."""
        seed = self.seed(index)  # validates the index
        if self._secret is not None:
            return private_evaluation_key(self._secret, index)
        return public_evaluation_key(seed)

    def __repr__(self) -> str:  # never show the secret
        return f"SplitSeeds(split={self.split!r}, size={self.size})"
