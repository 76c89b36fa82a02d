"""Word-level helpers shared by the program-writer readers: getopt-style long-option
abbreviations, a short option's value, and the values of named output options."""

from __future__ import annotations

from collections.abc import Sequence

# The long tail of programs that write a file an option or operand names (issue 19):
# each reader hands every file the program would write to ``checker.not_onto_grading``
# and every file it would load as code to ``checker.script``. Long options match by
# any prefix (getopt's abbreviations, fail closed: ``--out`` is ``--output``).


def abbreviates(name: str, option: str) -> bool:
    return bool(name) and option.startswith(name)


def short_value(args: Sequence[str], i: int, j: int) -> tuple[str, int]:
    """The value of the short option at ``args[i][j]``: the rest of its word, else the
    next word; and the index of the word after it."""
    rest = args[i][j + 1 :]
    if rest:
        return rest, i + 1
    return (args[i + 1] if i + 1 < len(args) else ""), i + 2


def option_values(args: Sequence[str], options: tuple[str, ...]) -> list[str]:
    short = [o for o in options if not o.startswith("--")]
    long = [o for o in options if o.startswith("--")]
    values: list[str] = []
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg in options:
            values.append(following)
        elif any(arg.startswith(o + "=") for o in long):
            values.append(arg.partition("=")[2])
        elif any(
            arg.startswith(o) and len(arg) > len(o) and not arg.startswith("--") for o in short
        ):
            values.append(arg[2:])
    return values
