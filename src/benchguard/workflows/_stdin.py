"""``-`` as an input: standard input copied to a private temporary file.

Importers detect a format by content and some formats are read twice (sniffed, then
parsed), so standard input is spooled to a file first, in chunks (never held whole in
memory), inside a private temporary directory removed when the command ends.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

STDIN_NAME = "-"
# How standard input is named in output, as other tools name it.
STDIN_LABEL = "<stdin>"


@contextmanager
def spooled_stdin(source: BinaryIO | None = None) -> Iterator[Path]:
    """A file holding everything read from ``source`` (standard input by default),
    removed on exit."""
    stream = sys.stdin.buffer if source is None else source
    with tempfile.TemporaryDirectory(prefix="benchguard-stdin-") as folder:
        path = Path(folder) / "stdin"
        with path.open("wb") as handle:
            shutil.copyfileobj(stream, handle, length=1024 * 1024)
        yield path


__all__ = ["STDIN_LABEL", "STDIN_NAME", "spooled_stdin"]
