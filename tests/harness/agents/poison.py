"""A small agent that answers every task, then leaves one kind of poison behind.

The task's prompt names the poison (``POISON=<kind>``); every kind is something an
agent can really do, and each once crashed the harness after the whole batch ran:

- surrogate: a transcript line holding lone surrogates (``"\\ud800"``);
- deep-dir: a 1,100-level directory in the workspace;
- deep-json: a transcript line nested ~1,000 deep;
- tiny-steps: 16 MiB of tiny steps (about 1.3 M);
- nan: ``NaN`` and ``Infinity`` in a transcript line;
- none: nothing (an honest run beside the poisoned ones).
"""

from __future__ import annotations

import json
import os
import sys

TINY_STEPS_BYTES = 16 << 20


def _deep_dir(levels: int) -> None:
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir("deeper-and-deeper", dir_fd=fd)
        child = os.open("deeper-and-deeper", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)


def main() -> None:
    prompt = sys.argv[1]
    kind = prompt.split("POISON=", 1)[1].split()[0]
    transcript = os.environ["BENCHGUARD_TRAJECTORY"]
    with open("answer.txt", "w", encoding="utf-8") as handle:
        handle.write("ok\n")
    with open(transcript, "a", encoding="utf-8") as out:
        out.write(json.dumps({"name": "write", "args": {"path": "answer.txt"}, "result": "ok"}))
        out.write("\n")
        if kind == "surrogate":
            # json.dumps escapes a lone surrogate as the six characters \ud800.
            step = {"name": "bash", "args": {"command": "echo \ud800"}, "result": "\udc00x"}
            out.write(json.dumps(step) + "\n")
        elif kind == "deep-json":
            depth = 990
            out.write('{"name": "bash", "args": ' + '{"x": ' * depth + "1" + "}" * depth + "}\n")
        elif kind == "nan":
            out.write('{"name": "bash", "args": {"n": NaN, "m": -Infinity}, "result": "r"}\n')
        elif kind == "tiny-steps":
            line = '{"name":"s"}\n'
            out.write(line * (TINY_STEPS_BYTES // len(line)))
    if kind == "deep-dir":
        _deep_dir(1100)
    print("ok")


if __name__ == "__main__":
    main()
