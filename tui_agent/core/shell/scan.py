"""One pass over a shell line before it is split into words (`words.parse`): substitutions become a
placeholder with their bodies kept apart (they are command lines themselves), comments go, newlines
become `;`, and every construct an allow rule cannot vouch for is noted in the `ShellLine`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tui_agent.core.shell.heredoc import Heredoc, heredoc_word, skip_bodies

PLACEHOLDER = "$__tui_agent_subst__"  # stands in for `$(…)`, backticks and `<(…)`: a run-time value
_SIMPLE_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$|^[0-9#?$!@*-]$")


@dataclass
class ShellLine:
    """A parsed command line: its simple commands (words, no redirections) and what makes it unsafe."""

    commands: list[list[str]] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)  # human-readable reasons, e.g. "command substitution"
    inner: list[str] = field(default_factory=list)  # bodies of $(…), `…`, <(…): command lines themselves
    parsed: bool = True  # False: unbalanced quotes or parentheses; `commands` is a best effort
    # Why the commands found may not be all that runs (a deny rule then asks): what the scanner cannot
    # follow with certainty, e.g. a `case` inside `$(…)` or `$(…)` in an unquoted here-document.
    uncertain: list[str] = field(default_factory=list)

    @property
    def plain(self) -> bool:
        """Only simple commands whose words are all there is to know (what allow rules may cover)."""
        return self.parsed and not self.unsafe and bool(self.commands)


def _close(text: str, start: int, opener: str, closer: str, heredocs: bool = True) -> int:
    """Index just past the `closer` matching an `opener` before `start`, honouring quotes, comments,
    here-document bodies (data: an apostrophe there opens no quote) and nesting; -1 when it never closes."""
    depth, i, n = 1, start, len(text)
    quote: str | None = None
    pending: list[Heredoc] = []
    while i < n:
        char = text[i]
        if quote == "'":
            if char == "'":
                quote = None
        elif char == "\\":
            i += 1
        elif quote == '"':
            if char == '"':
                quote = None
            elif text.startswith("$(", i):
                end = _close(text, i + 2, "(", ")")
                if end < 0:
                    return -1
                i = end
                continue
        elif char in "'\"":
            quote = char
        elif opener == "(" and text.startswith("((", i):  # arithmetic: `1 << 2` is no here-document
            end = _close(text, i + 1, "(", ")", heredocs=False)
            if end < 0:
                return -1
            i = end
            continue
        elif heredocs and opener == "(" and text.startswith("<<", i) and not text.startswith("<<<", i):
            doc = heredoc_word(text, i)
            if doc is None:
                return -1
            pending.append(doc)
            i = doc.end
            continue
        elif char == "\n" and pending:
            i = skip_bodies(text, i + 1, pending, None)
            continue
        elif char == "#" and (i == 0 or text[i - 1] in " \t\n;&|()<>"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif char == opener:
            depth += 1
        elif char == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def scan(text: str, line: ShellLine) -> str:
    """The line with substitutions replaced by PLACEHOLDER, comments dropped, newlines turned into `;`.

    Their bodies go to `line.inner`; every construct that an allow rule cannot vouch for is noted."""
    return _Scanner(text, line).run()


class _Scanner:
    """`scan`'s one pass over a line: the position, the open quote and the here-documents whose bodies
    are still to come, with a method per kind of construct (quoted text, an escape, an expansion, the
    unquoted rest). Each method consumes the text at `i` and moves `i` past it."""

    def __init__(self, text: str, line: ShellLine) -> None:
        self.text, self.line, self.n = text, line, len(text)
        self.out: list[str] = []
        self.i = 0
        self.quote: str | None = None
        self.pending: list[Heredoc] = []

    def run(self) -> str:
        text, n = self.text, self.n
        while self.i < n:
            char = text[self.i]
            if self.quote == "'":
                self._keep(char)
            elif char == "\\" and self.i + 1 < n:
                self._escape()
            elif self._expansion():
                pass
            elif self.quote == '"':
                self._keep(char)
            else:
                self._unquoted(char)
        if self.quote is not None:
            self.line.parsed = False
            self.note("unterminated quote")
        if self.pending:
            self.doubt("here-document without its body")
        return "".join(self.out)

    def note(self, reason: str) -> None:
        if reason not in self.line.unsafe:
            self.line.unsafe.append(reason)

    def doubt(self, reason: str) -> None:
        self.note(reason)
        if reason not in self.line.uncertain:
            self.line.uncertain.append(reason)

    def substitution(self, body_start: int, opener: str, closer: str, reason: str, skip: int,
                     arithmetic: bool = False, placeholder: str = PLACEHOLDER) -> int:
        """Note a `$(…)`-like construct, keep its body in `line.inner`; where the text goes on after it."""
        text = self.text
        end = _close(text, body_start, opener, closer, heredocs=not arithmetic)
        self.note(reason)
        if end < 0:
            self.line.parsed = False
            self.line.inner.append(text[body_start:])
            return self.n
        body = text[body_start:end - skip]
        if arithmetic:
            body = body.replace("<<", "  ")  # a shift, not a here-document; `$(…)` in it still runs
        self.line.inner.append(body)
        self.out.append(placeholder)
        return end

    def _keep(self, char: str) -> None:
        """A character inside quotes, kept as it is; the matching quote closes them."""
        self.out.append(char)
        if char == self.quote:
            self.quote = None
        self.i += 1

    def _escape(self) -> None:
        text, i = self.text, self.i
        if text[i + 1] != "\n":  # a line continuation joins the lines
            self.out.append(text[i:i + 2])
        self.i = i + 2

    def _expansion(self) -> bool:
        """`$((…))`, `$(…)`, `` `…` `` or `${…}` at `i` (they expand inside double quotes too)."""
        text, i, n = self.text, self.i, self.n
        if text.startswith("$((", i):
            self.i = self.substitution(i + 3, "(", ")", "arithmetic expansion", 1, arithmetic=True)
            if self.i < n and text[self.i] == ")":
                self.i += 1
        elif text.startswith("$(", i):
            self.i = self.substitution(i + 2, "(", ")", "command substitution", 1)
        elif text[i] == "`":
            self._backquotes()
        elif text.startswith("${", i):
            self._parameter()
        else:
            return False
        return True

    def _backquotes(self) -> None:
        text, i, n = self.text, self.i, self.n
        end = i + 1
        while end < n and text[end] != "`":
            end += 2 if text[end] == "\\" else 1
        self.note("command substitution")
        if end >= n:
            self.line.parsed = False
            self.line.inner.append(text[i + 1:])
            self.i = n
            return
        self.line.inner.append(text[i + 1:end].replace("\\`", "`"))
        self.out.append(PLACEHOLDER)
        self.i = end + 1

    def _parameter(self) -> None:
        text, i = self.text, self.i
        end = _close(text, i + 2, "{", "}")
        if end < 0:
            self.line.parsed = False
            self.note("parameter expansion")
            self.i = self.n
            return
        body = text[i + 2:end - 1]
        if not _SIMPLE_PARAM.match(body):
            self.note("parameter expansion")
            inner = ShellLine()
            scan(body, inner)  # `${x:-$(rm …)}` still runs rm
            self.line.inner.extend(inner.inner)
        self.out.append("$__tui_agent_param__")
        self.i = end

    def _unquoted(self, char: str) -> None:
        text, i, n = self.text, self.i, self.n
        if text.startswith("$'", i):  # ANSI-C quoting: `$'\x72m'` is `rm`
            self.note("ANSI-C quoting")
            end = i + 2
            while end < n and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            self.out.append("$__tui_agent_ansi__")
            self.i = end + 1
        elif char in "'\"":
            self.quote = char
            self.out.append(char)
            self.i += 1
        elif text.startswith(("<(", ">("), i):
            self.i = self.substitution(i + 2, "(", ")", "process substitution", 1)
        elif text.startswith("=(", i):
            self.i = self.substitution(i + 2, "(", ")", "zsh process substitution =(…)", 1)
        elif text.startswith("((", i):  # an arithmetic command; `:` stands in for it
            self.i = self.substitution(i + 2, "(", ")", "arithmetic expansion", 1, arithmetic=True, placeholder=" : ")
            if self.i < n and text[self.i] == ")":
                self.i += 1
        elif text.startswith("<<", i) and not text.startswith("<<<", i):
            self._heredoc()
        elif char == "#" and (i == 0 or text[i - 1] in " \t\n;&|()<>"):
            end = text.find("\n", i)
            self.i = n if end < 0 else end
        elif char == "\n":
            self.out.append(" ; ")
            self.i = skip_bodies(text, i + 1, self.pending, self.doubt) if self.pending else i + 1
        else:
            if char in "()":
                self.note("subshell, group or glob qualifier (…)")
            self.out.append(char)
            self.i += 1

    def _heredoc(self) -> None:
        text, i = self.text, self.i
        doc = heredoc_word(text, i)
        if doc is None:
            self.line.parsed = False
            self.note("here-document without a delimiter")
            self.out.append(text[i:])
            self.i = self.n
            return
        self.pending.append(doc)
        self.out.append(text[i:doc.end])
        self.i = doc.end
