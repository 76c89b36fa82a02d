"""A keyed cryptographic random stream with the ``random.Random`` interface.

The corpus draws a task's evaluation records (scored, never shown) from this stream
instead of the Mersenne Twister that draws the examples (shown in the prompt). MT19937's
state is recoverable from enough of its visible output, and a recovered state yields the
seed; a keyed SHAKE-256 stream shares no state with it, and its output says nothing
about its key or about any other output, so no number of example records can predict an
evaluation record.

Output block ``i`` is ``SHAKE-256(domain || key || i)``, :data:`BLOCK_BYTES` bytes long.
Every draw reads from the blocks in order, so the stream is a pure function of its key
and identical on every machine. Only :meth:`getrandbits` and :meth:`random` produce
randomness; ``random.Random`` builds ``choice``, ``randint``, ``sample``, ``shuffle`` and
``choices`` on them (it picks ``getrandbits`` for bounded integers because this class
overrides it). The Mersenne Twister state that the base type allocates is never seeded
or read: :meth:`seed`, :meth:`getstate` and :meth:`setstate` refuse.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any, Final, NoReturn, TypeVar

_T = TypeVar("_T")

BLOCK_BYTES: Final = 1024
KEY_BYTES: Final = 32
_DOMAIN: Final = b"redaction-pressure/keyed-stream/v1\0"
_TWO_TO_MINUS_53: Final = 1.0 / (1 << 53)


class KeyedStream(random.Random):
    """``random.Random`` whose every draw comes from SHAKE-256 keyed with ``key``."""

    def __new__(cls, key: bytes) -> KeyedStream:
        # The C base would seed its Mersenne Twister from hash(key); give it nothing
        # of the key (it seeds from os.urandom and is never read).
        return super().__new__(cls)

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"a keyed stream needs a {KEY_BYTES}-byte key, got {len(key)}")
        # random.Random.__init__ would seed the (unused) Mersenne Twister: skip it.
        self._key = key
        self._block = 0
        self._buffer = b""
        self._position = 0
        self.gauss_next = None

    def _take(self, count: int) -> bytes:
        out = bytearray()
        while count:
            if self._position == len(self._buffer):
                shake = hashlib.shake_256(_DOMAIN + self._key + self._block.to_bytes(8, "big"))
                self._buffer = shake.digest(BLOCK_BYTES)
                self._block += 1
                self._position = 0
            step = min(count, len(self._buffer) - self._position)
            out += self._buffer[self._position : self._position + step]
            self._position += step
            count -= step
        return bytes(out)

    def getrandbits(self, k: int, /) -> int:
        if k <= 0:
            if k < 0:
                raise ValueError("number of bits must be non-negative")
            return 0
        nbytes = (k + 7) // 8
        position = self._position
        end = position + nbytes
        if end <= len(self._buffer):  # fast path: no block boundary
            self._position = end
            chunk = self._buffer[position:end]
        else:
            chunk = self._take(nbytes)
        return int.from_bytes(chunk, "big") >> (nbytes * 8 - k)

    def random(self) -> float:
        position = self._position
        if position + 7 <= len(self._buffer):
            self._position = position + 7
            bits = int.from_bytes(self._buffer[position : position + 7], "big") >> 3
        else:
            bits = int.from_bytes(self._take(7), "big") >> 3
        return bits * _TWO_TO_MINUS_53

    def choices(
        self,
        population: Sequence[_T],
        weights: Sequence[float] | None = None,
        *,
        cum_weights: Sequence[float] | None = None,
        k: int = 1,
    ) -> list[_T]:
        if weights is not None or cum_weights is not None:
            return super().choices(population, weights, cum_weights=cum_weights, k=k)
        # Same draws as random.Random.choices (floor(random() * n) per pick), in one read.
        n = len(population)
        data = self._take(7 * k)
        return [
            population[int((int.from_bytes(data[i : i + 7], "big") >> 3) * _TWO_TO_MINUS_53 * n)]
            for i in range(0, 7 * k, 7)
        ]

    def randbytes(self, n: int) -> bytes:
        return self._take(n)

    def seed(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a KeyedStream is keyed at construction and cannot be reseeded")

    def getstate(self) -> NoReturn:
        raise TypeError("a KeyedStream exposes no generator state")

    def setstate(self, state: Any) -> NoReturn:
        raise TypeError("a KeyedStream exposes no generator state")

    def __reduce__(self) -> NoReturn:
        raise TypeError("a KeyedStream is not picklable (it would carry its key)")

    def __repr__(self) -> str:  # never show the key
        return f"KeyedStream(block={self._block})"
