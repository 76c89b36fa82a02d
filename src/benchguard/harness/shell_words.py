"""Splitting a ``sh -c`` string into words and operators the way the shell does.

:mod:`shlex` drops what decides whether a word is safe to read as written: whether a
``$``, a glob or a brace was quoted, where a comment really starts (bash starts one
only at the beginning of a word; shlex inside one too, so ``true x#; ./run.sh`` hid
``./run.sh``), and that ``\\<newline>`` joins two halves of a word (``s\\<nl>h`` is
``sh``). This lexer keeps that: each word carries ``expands``, true when the shell
would change it when the command runs (an unquoted or double-quoted ``$``, an
unquoted glob character, brace expansion, a leading ``~``, ANSI-C ``$'...'``).

What it refuses (:class:`ShellSyntax`, so the caller fails closed): an unbalanced
quote, a here-document (its body is read by rules this lexer does not model), a
command substitution outside single quotes and a process substitution. Bounded by
the caller's length limit: one pass, no recursion.
"""

from __future__ import annotations

from dataclasses import dataclass

# Longest first, so ``;;&`` is not read as ``;`` ``;`` ``&``.
_OPERATORS = (
    ";;&", "&>>", "<<<", "<<-", ";;", ";&", "&&", "||", "|&", "&>", ">>", ">&", ">|",
    "<<", "<&", "<>", "<(", ">(", ";", "&", "|", "(", ")", "<", ">", "\n",
)  # fmt: skip
REDIRECTS = frozenset({"<", ">", ">>", "<<<", "<&", ">&", "<>", ">|", "&>", "&>>"})
_GLOB = frozenset("*?[")
_BLANKS = " \t\r"


class ShellSyntax(ValueError):
    """The string uses a form this lexer does not read with certainty; which one."""


class Word(str):
    """A word as the shell sees it after quote removal; ``expands`` when the shell
    would still change it (parameter, glob, brace or tilde expansion)."""

    expands: bool
    braces: bool
    params: bool

    def __new__(
        cls, text: str, expands: bool = False, braces: bool = False, params: bool = False
    ) -> Word:
        word = super().__new__(cls, text)
        word.expands = expands or braces or params
        # A $ expansion's value is unknown here: it may become any option.
        word.params = params
        # Brace expansion can turn one word into several (find . {-exec,./x,\;}).
        word.braces = braces
        return word


@dataclass(frozen=True)
class Token:
    """A word, or an operator (``kind == "op"``: ``;``, ``|``, ``<``, ...)."""

    kind: str
    text: str
    word: Word | None = None


def split(text: str) -> list[Token]:
    """The tokens of ``text``; raise :class:`ShellSyntax` for a form not modelled."""
    return _Lexer(text).run()


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[Token] = []
        self.buf: list[str] = []
        self.started = False  # a word is under way (even an empty quoted one: '')
        self.expands = False
        self.params = False  # a $ expansion (or $'...'): its value is not known here
        self.unquoted: list[str] = []  # the word's unquoted characters, for braces

    def run(self) -> list[Token]:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char == "\\":
                self._backslash()
            elif char == "'":
                self._single()
            elif char == '"':
                self._double()
            elif char in _BLANKS:
                self._end_word()
                self.i += 1
            elif char == "#" and not self.started:
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif char == "`":
                raise ShellSyntax("a command substitution (`...`) is built when it runs")
            elif char == "$":
                self._dollar()
            elif self._operator():
                continue
            else:
                self._char(char, quoted=False)
                self.i += 1
        self._end_word()
        return self.tokens

    def _char(self, char: str, *, quoted: bool) -> None:
        self.started = True
        self.buf.append(char)
        if not quoted:
            self.unquoted.append(char)
            if char in _GLOB or (char == "~" and len(self.buf) == 1):
                self.expands = True
        else:
            self.unquoted.append("\0")

    def _backslash(self) -> None:
        nxt = self.text[self.i + 1 : self.i + 2]
        self.i += 2
        if nxt == "\n":
            return  # a line continuation: the two halves are one word
        if not nxt:
            raise ShellSyntax("the string ends with a lone backslash")
        self._char(nxt, quoted=True)

    def _single(self) -> None:
        end = self.text.find("'", self.i + 1)
        if end < 0:
            raise ShellSyntax("a single quote is not closed")
        self.started = True
        for char in self.text[self.i + 1 : end]:
            self._char(char, quoted=True)
        self.i = end + 1

    def _double(self) -> None:
        self.started = True
        i = self.i + 1
        text = self.text
        while i < len(text) and text[i] != '"':
            char = text[i]
            if char == "\\" and text[i + 1 : i + 2] in ('"', "\\", "$", "`", "\n"):
                if text[i + 1] != "\n":
                    self._char(text[i + 1], quoted=True)
                i += 2
                continue
            if char == "`" or text.startswith("$(", i):
                raise ShellSyntax("a command substitution is built when it runs")
            if char == "$":
                self.expands = self.params = True
            self._char(char, quoted=True)
            i += 1
        if i >= len(text):
            raise ShellSyntax("a double quote is not closed")
        self.i = i + 1

    def _dollar(self) -> None:
        nxt = self.text[self.i + 1 : self.i + 2]
        if nxt == "(":
            raise ShellSyntax("a command substitution ($(...)) is built when it runs")
        if nxt in ("'", '"'):
            # $'...' (ANSI-C escapes) and $"..." (translation): read as expanding.
            self.expands = self.params = True
            self.i += 1
            return
        self.expands = self.params = True
        self._char("$", quoted=False)
        self.i += 1

    def _operator(self) -> bool:
        for op in _OPERATORS:
            if self.text.startswith(op, self.i):
                break
        else:
            return False
        if op in ("<<", "<<-"):
            raise ShellSyntax("a here-document's body is not read here")
        if op in ("<(", ">("):
            raise ShellSyntax("a process substitution is built when it runs")
        if op[0] in "<>" and self.buf and "".join(self.buf).isdigit() and not self.expands:
            self._reset()  # the file descriptor a redirection applies to (2>file)
        self._end_word()
        self.tokens.append(Token("op", op))
        self.i += len(op)
        return True

    def _end_word(self) -> None:
        if not self.started:
            return
        text = "".join(self.buf)
        braces = _braces("".join(self.unquoted))
        self.tokens.append(Token("word", text, Word(text, self.expands, braces, self.params)))
        self._reset()

    def _reset(self) -> None:
        self.buf = []
        self.unquoted = []
        self.started = False
        self.expands = False
        self.params = False


def _braces(unquoted: str) -> bool:
    """``unquoted`` (quoted characters blanked) holds a brace expansion: ``{a,b}`` or
    ``{1..3}``. Read broadly: any unquoted ``{`` before a ``,`` or ``..`` and a ``}``."""
    start = unquoted.find("{")
    if start < 0:
        return False
    rest = unquoted[start:]
    close = rest.rfind("}")
    return close > 0 and ("," in rest[:close] or ".." in rest[:close])
