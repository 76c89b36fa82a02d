"""Memos of shell readings that do not key on every script the agent wrote.

A :class:`~benchguard.detection.shell.ShellState` keeps what a file tool wrote
(``scripts``), so a later ``bash x.sh`` reads the script. Keying a reading's memo on
the whole state made every command after a record's first write a miss: the state's
scripts differ from record to record, though almost no command runs one. Here a
reading is keyed on the rest of the state (directory, variables, links, and whether any
script is kept) and remembers the script lookups it made, in order, with what each
found (its *probes*). A later reading of the same key reuses it when every probe finds
the same thing again: the reading is a deterministic function of its key and of those
answers, so it would take the same path and give the same words. A reading that wrote
a script (``echo ... > f``, a file tool's write) changes the scripts themselves and is
never kept here (the callers keep it under the whole state, as before).

Bounded: at most :data:`MAX_KEYS` keys of at most :data:`MAX_VARIANTS` readings, and at
most :data:`MAX_PROBE_CHARS` characters of script text held by probes; past any bound
the memo starts over.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol, TypeVar, cast


class ShellState(Protocol):
    """What the memo reads and restores of ``detection.shell.ShellState`` (named here
    so this module sits below the shell reader, not in a cycle with it)."""

    scripts: dict[str, str]
    probes: list[tuple[str, str | None]] | None
    wrote: bool

    def loose(self) -> tuple[Any, ...]: ...
    def frozen(self) -> tuple[Any, ...]: ...
    def after(self) -> tuple[Any, ...]: ...
    def restore(self, frozen: tuple[Any, ...]) -> None: ...
    def restore_after(self, after: tuple[Any, ...]) -> None: ...


MAX_KEYS = 4096
MAX_VARIANTS = 8
MAX_PROBE_CHARS = 32 * 1024 * 1024

Probes = tuple[tuple[str, str | None], ...]
T = TypeVar("T")


def recorded(state: ShellState, compute: Callable[[], T]) -> tuple[T, Probes, bool]:
    """``compute()`` with the script lookups it makes on ``state`` recorded; returns its
    value, the probes and whether it wrote a script. Nests: an enclosing recording also
    sees this one's probes and write."""
    outer_probes, outer_wrote = state.probes, state.wrote
    state.probes, state.wrote = [], False
    try:
        value = compute()
    finally:
        probes, wrote = tuple(state.probes), state.wrote
        state.probes, state.wrote = outer_probes, outer_wrote or wrote
        if outer_probes is not None:
            outer_probes.extend(probes)
    return value, probes, wrote


class ScriptMemo:
    """Readings by their loose key (see the module's docstring), each with its probes."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, list[tuple[Probes, Any]]] = {}
        self._probe_chars = 0

    def get(self, key: Hashable, state: ShellState) -> Any | None:
        """The reading kept under ``key`` whose probes all find the same on ``state``
        now (``None``: none); its probes are replayed into an enclosing recording."""
        variants = self._entries.get(key)
        if variants is None:
            return None
        scripts = state.scripts
        for probes, value in variants:
            # Most readings looked up no script: nothing to check or replay.
            if not probes:
                return value
            if all(scripts.get(path) == found for path, found in probes):
                if state.probes is not None:
                    state.probes.extend(probes)
                return value
        return None

    def put(self, key: Hashable, probes: Probes, value: Any) -> None:
        chars = sum(len(found) for _, found in probes if found is not None)
        if len(self._entries) >= MAX_KEYS or self._probe_chars + chars > MAX_PROBE_CHARS:
            self._entries.clear()
            self._probe_chars = 0
        variants = self._entries.setdefault(key, [])
        if len(variants) >= MAX_VARIANTS:
            # Several script sets under one key: the oldest reading goes.
            dropped = variants.pop(0)[0]
            self._probe_chars -= sum(len(found) for _, found in dropped if found is not None)
        variants.append((probes, value))
        self._probe_chars += chars

    def __len__(self) -> int:
        return len(self._entries)


class StateMemo:
    """One kind of reading remembered by content: by the loose key when it wrote no
    script (:class:`ScriptMemo`), else by the whole state (scripts' text included).
    A state is left as the reading left it, variables and links in sorted order (as a
    state restored from :meth:`ShellState.frozen` has them)."""

    def __init__(self) -> None:
        self._loose = ScriptMemo()
        self._whole: dict[Hashable, tuple[Any, tuple[Any, ...]]] = {}

    def read(self, key: Hashable, state: ShellState, compute: Callable[[], T]) -> T:
        """``compute()``'s value for ``key`` read on ``state``, remembered."""
        loose_key = (key, state.loose())
        hit = self._loose.get(loose_key, state)
        if hit is not None:
            state.restore_after(hit[1])
            return cast("T", hit[0])
        whole_key = (key, state.frozen())
        kept = self._whole.get(whole_key)
        if kept is not None:
            state.restore(kept[1])
            # It wrote a script: an enclosing recording must not keep its own reading
            # under the loose key either.
            state.wrote = True
            return cast("T", kept[0])
        value, probes, wrote = recorded(state, compute)
        if wrote:
            if len(self._whole) >= MAX_KEYS:
                self._whole.clear()
            frozen = state.frozen()
            self._whole[whole_key] = (value, frozen)
            state.restore(frozen)
        else:
            after = state.after()
            self._loose.put(loose_key, probes, (value, after))
            state.restore_after(after)
        return value
