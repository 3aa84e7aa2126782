"""The ledger is authoritative: summary statements it contradicts are taken out.

The summariser is told not to restate the ledger, but small models still write
"stats.py has been modified" when no file changed, or list a done plan step as
the next action. After the summary comes back, each line is checked against
the ledger and the plan for three kinds of claim:

* a file changed (modified, created, edited, …) that the ledger records no
  change to, and that no recorded command names either (a `sed -i` is not a
  file fact, so a command naming the file is given the benefit of the doubt).
  Dotfiles (`.env`) and names with several dots (`orders.test.js`, whole) are
  file names too;
* a command's result (passed, failed, exit code N) that none of its recorded
  runs had, or a result claimed for a command that never ran;
* a plan step said to be done that the plan shows open, in progress or
  blocked, or a done step given as the next action;
* a command or the tests said to fail *now* ("fails", "is failing", "still
  fail") when the latest run passed;
* a cause the summary itself says was ruled out, given elsewhere as a cause
  ("because of `X`" after "`X` was ruled out").

Quoted output is not a command nor a claim: backticked text that the ledger's
errors or outputs contain (an error message the summary quotes, a `modified: .env`
a command printed), or that does not start like a command line, is never taken
for a command that did not run nor for a file the summary says was changed.

Each sentence of a line is checked on its own: a contradicted sentence is
taken out (the line's other sentences stay, the true "3 retry attempts" beside a
stale "the tests fail") and a one-line correction naming what the ledger says
follows the line, so the model neither keeps the false claim nor loses the fact
that it was wrong; the record's notes count them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from baton import protocol as p

_CHANGED = re.compile(
    r"\b(modif(?:y|ied|ies|ying)|chang(?:ed|es|ing)|edit(?:ed|s|ing)?|updat(?:ed|es|ing)|"
    r"creat(?:ed|es|ing)|wrote|written|rewrit(?:ten|e)|added|implemented|fixed|"
    r"delet(?:ed|es)|removed|refactored|patched)\b",
    re.I,
)
_NEGATION = re.compile(
    r"\b(not|no|never|unchanged|without|nothing|none|yet to|still needs?|to be|should|"
    r"will|must|need to|needs to|plan to|next)\b",
    re.I,
)
# A file name: `name.ext`, with more dots (`orders.test.js`, whole, not `orders.test`), or
# a dotfile (`.env`, `.env.local`, `config/.gitignore`), optionally under folders. Not a
# call (`app.use(`) nor an abbreviation (`e.g.`).
_FILE = re.compile(
    r"(?<![\w/.:-])((?:[\w.-]+/)*(?:[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,5}"
    r"|\.[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)*))(?![\w/(])"
)
_NOT_FILES = frozenset({"e.g", "i.e"})
_ABBREVIATIONS = _NOT_FILES | {"etc", "vs", "cf", "mr", "dr", "no", "approx"}
_COMMAND = re.compile(r"`([^`\n]{2,200})`")
_PASS = re.compile(r"\b(passed|passes|passing|succeeded|succeeds|successful(?:ly)?|green)\b", re.I)
_FAIL = re.compile(r"\b(failed|fails|failing|errored|non-zero)\b", re.I)
_EXIT = re.compile(r"(?:exit(?:ed)?(?: with)?(?: code| status)?|→|returned)\s*(-?\d+)\b", re.I)
_DONE = re.compile(r"\b(done|completed?|finished|ticked|checked off)\b", re.I)
_HEADING = re.compile(r"^\s{0,3}#{1,4}\s*(.+?)\s*#*\s*$")
# Failing now, not once: what a later passing run contradicts.
_FAILS_NOW = re.compile(
    r"\b(fail|fails|failing|still fail\w*|keeps? failing|is broken|are broken|do(?:es)? not pass)\b",
    re.I,
)
_TESTS = re.compile(r"\btests?\b|\bsuite\b", re.I)
# The failing tests as the work's object ("the goal is to fix the failing tests"): the
# task, still true once they pass. Model summaries lost their goal line to the tests
# claim (3 of 4 bench summaries, 2026-12-04).
_FAILING_AS_TASK = re.compile(
    r"\b(?:fix|fixing|fixes|repair|repairing|debug|debugging|investigate|investigating|"
    r"make|making)\b[^.;]*?\bfail\w*",
    re.I,
)
_TEST_COMMAND = re.compile(r"\b(pytest|test|tests|jest|vitest|mocha|tox|nox|unittest)\b")
_RULED_OUT = re.compile(
    r"\b(ruled out|rejected|not the cause|was wrong|disproved|is not why|was not why|"
    r"not caused by|unrelated)\b",
    re.I,
)
_CAUSE = re.compile(r"\b(because(?: of)?|caused by|due to|the cause is|is why)\b", re.I)
# How a command line starts: a program name or path (not a sentence, not an error).
_PROGRAM = re.compile(r"^(?:[A-Z_]+=\S*\s+)*[a-z0-9_./~-][\w./~+-]*$")

CORRECTION = "- [Baton] Removed a summary statement the ledger contradicts: {reason}."


@dataclass(frozen=True)
class Correction:
    line: str
    reason: str
    # The files a change claim named that the ledger records no change to.
    files: tuple[str, ...] = ()

    def wire(self) -> p.ClaimCorrection:
        return p.ClaimCorrection(line=self.line, reason=self.reason, files=list(self.files))


@dataclass(frozen=True)
class _FileClaim:
    reason: str
    files: tuple[str, ...]


def check_summary(
    summary: str,
    ledger: p.Ledger,
    steps: list[p.PlanStep] | None = None,
    said: list[str] | None = None,
) -> tuple[str, list[Correction]]:
    """(the summary with contradicted lines replaced, what was corrected).

    `said`: what the agent wrote in the compacted messages, where a hypothesis it
    ruled out ("the cache is ruled out") is found as well as in the summary."""
    steps = steps if steps is not None else (ledger.plan.steps if ledger.plan else [])
    changed = [touch.path for touch in ledger.files_modified]
    runs = {run.command: (run.exit_codes or [run.exit_code]) for run in ledger.commands}
    printed = _printed(ledger)
    ruled_out = _ruled_out(summary) + ruled_out_in_prose(said or [])
    out: list[str] = []
    corrections: list[Correction] = []
    section = ""
    for line in summary.splitlines():
        heading = _HEADING.match(line)
        if heading:
            section = heading.group(1).lower()
            out.append(line)
            continue
        kept: list[str] = []
        found: list[Correction] = []
        for sentence in sentences(line):
            file_claim = _file_claim(sentence, changed, runs, printed)
            if file_claim is not None:
                found.append(Correction(sentence.strip(), file_claim.reason, file_claim.files))
                continue
            reason = (
                _command_claim(sentence, runs, printed)
                or _tests_claim(sentence, runs)
                or _step_claim(sentence, steps, next_action="next" in section)
                or _cause_claim(sentence, ruled_out)
            )
            if reason is None:
                kept.append(sentence)
            else:
                found.append(Correction(sentence.strip(), reason))
        if not found:
            out.append(line)
            continue
        if any(part.strip() for part in kept):
            # The line's other sentences are kept, under its own bullet or indent.
            lead = line[: len(line) - len(line.lstrip(" -*\t"))]
            out.append(lead + " ".join(part.strip(" -*\t") for part in kept))
        corrections.extend(found)
        out.extend(CORRECTION.format(reason=c.reason) for c in found)
    return "\n".join(out), corrections


def sentences(line: str) -> list[str]:
    """A summary line's sentences: split after `.`, `!` or `?` followed by a space and a
    capital, a backtick or a quote, never inside backticks (`os.path. X` is not a stop)
    nor after a one-letter or lower-case abbreviation (`e.g. Foo`)."""
    parts: list[str] = []
    start = 0
    in_code = False
    for i, char in enumerate(line):
        if char == "`":
            in_code = not in_code
            continue
        if in_code or char not in ".!?" or i + 2 >= len(line):
            continue
        if line[i + 1] != " " or not (line[i + 2].isupper() or line[i + 2] in "`'\""):
            continue
        word = line[start:i].rsplit(" ", 1)[-1]
        if char == "." and (len(word) <= 1 or word.lower() in _ABBREVIATIONS):
            continue
        parts.append(line[start : i + 1])
        start = i + 2
    parts.append(line[start:])
    return [part for part in parts if part.strip()]


def _relative(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def _same_file(token: str, path: str) -> bool:
    # Only a leading "./" goes: `.env` is not `env`.
    token, path = _relative(token), _relative(path)
    return path == token or path.endswith("/" + token) or token.endswith("/" + path)


def _unquoted(line: str, printed: str) -> str:
    """The line without the output it quotes: backticked text with a space in it that the
    ledger's errors or outputs hold (`modified: .env` from a `git status`) is what a tool
    printed, not the summary's claim."""
    return _COMMAND.sub(
        lambda m: (
            " " if " " in m.group(1).strip() and m.group(1).lower() in printed else m.group(0)
        ),
        line,
    )


def _file_claim(
    line: str, changed: list[str], runs: dict[str, list[int | None]], printed: str = ""
) -> _FileClaim | None:
    line = _unquoted(line, printed)
    if not _CHANGED.search(line) or _NEGATION.search(line):
        return None
    files = [
        f
        for f in _FILE.findall(line)
        if not f.lower().startswith(("http", "www.")) and f.lower() not in _NOT_FILES
    ]
    if not files:
        return None
    if any(_same_file(f, path) for f in files for path in changed):
        return None
    if any(f.split("/")[-1] in command for f in files for command in runs):
        return None  # a command may have changed it; the ledger cannot tell
    listed = ", ".join(changed) if changed else "none"
    named = tuple(dict.fromkeys(files))
    return _FileClaim(
        f"the ledger records no change to {', '.join(named)} (files changed: {listed})", named
    )


def _printed(ledger: p.Ledger) -> str:
    """Every text the ledger quotes from the tools (errors, failures, outputs)."""
    texts = [e.message for e in ledger.errors] + [e.message for e in ledger.resolved_errors]
    for run in ledger.commands:
        texts += [f.error for f in run.failures] + ([run.output] if run.output else [])
    return "\n".join(texts).lower()


def _looks_like_command(text: str, printed: str) -> bool:
    """Whether backticked text is a command line rather than quoted output or a name."""
    words = text.split()
    if len(words) < 2 or not _PROGRAM.match(words[0]):
        return False
    return text.lower() not in printed  # an error message the summary quotes


def _shown(codes: list[int | None]) -> str:
    return ", ".join("killed" if c is None else str(c) for c in codes)


def _command_claim(line: str, runs: dict[str, list[int | None]], printed: str = "") -> str | None:
    exit_code = _EXIT.search(line)
    passed, failed = bool(_PASS.search(line)), bool(_FAIL.search(line))
    if not (exit_code or passed or failed):
        return None
    for command in _COMMAND.findall(line):
        command = command.strip()
        codes = runs.get(command)
        if codes is None:
            if command.split() and any(command.split()[0] == c.split()[0] for c in runs):
                continue  # a variant of a recorded command; too loose to judge
            if _looks_like_command(command, printed):
                return f"the ledger records no run of `{command}`"
            continue
        shown = _shown(codes)
        if exit_code and int(exit_code.group(1)) not in codes:
            return f"`{command}` never exited {exit_code.group(1)} (runs: {shown})"
        if passed and not failed and 0 not in codes:
            return f"`{command}` never passed (runs: {shown})"
        if failed and not passed and all(c == 0 for c in codes):
            return f"`{command}` never failed (runs: {shown})"
        if _FAILS_NOW.search(line) and not passed and codes[-1] == 0:
            return f"`{command}` passes now: its latest run exited 0 (runs: {shown})"
    return None


def _tests_claim(line: str, runs: dict[str, list[int | None]]) -> str | None:
    """ "The tests fail" when every test command's latest run passed."""
    if _COMMAND.search(line) or not (_TESTS.search(line) and _FAILS_NOW.search(line)):
        return None
    if _NEGATION.search(line) or _PASS.search(line) or _FAILING_AS_TASK.search(line):
        return None
    tests = {c: codes for c, codes in runs.items() if _TEST_COMMAND.search(c)}
    if not tests or any(codes[-1] != 0 for codes in tests.values()):
        return None
    shown = "; ".join(f"`{c}` → {_shown(codes)}" for c, codes in tests.items())
    return f"the latest test runs passed ({shown})"


def _ruled_out(summary: str) -> list[str]:
    """What the summary itself says was ruled out: the backticked names on such lines."""
    found: list[str] = []
    for line in summary.splitlines():
        if _RULED_OUT.search(line) and not _CAUSE.search(line.split(",")[0]):
            found += [t.strip() for t in _COMMAND.findall(line) if len(t.strip()) >= 3]
    return found


_PROSE_RULED_OUT = re.compile(
    r"([\w./-]+(?:\s+[\w./-]+){0,3})\s+(?:is|was|has been)\s+(?:ruled out|not the cause)", re.I
)
_STOP = frozenset({"the", "a", "an", "so", "and", "that", "this", "it", "which", "then", "also"})


def ruled_out_in_prose(texts: list[str]) -> list[str]:
    """What the agent said was ruled out, in its own words ("so the cache is ruled out"
    gives "cache"): the last words before the verdict, without articles."""
    found: list[str] = []
    for text in texts:
        for match in _PROSE_RULED_OUT.finditer(text):
            words = [w for w in match.group(1).split() if w.lower() not in _STOP][-2:]
            if words and len(" ".join(words)) >= 3:
                found.append(" ".join(words))
    return found


def _cause_claim(line: str, ruled_out: list[str]) -> str | None:
    if not ruled_out or _RULED_OUT.search(line) or not _CAUSE.search(line):
        return None
    cause = _CAUSE.split(line, maxsplit=1)[-1].lower()  # what the line gives as the cause
    for name in ruled_out:
        if f"`{name}`" in line or re.search(rf"\b{re.escape(name.lower())}\b", cause):
            return f"{name!r} was ruled out as a cause earlier in the session"
    return None


def _step_claim(line: str, steps: list[p.PlanStep], *, next_action: bool) -> str | None:
    lowered = line.lower()
    for step in steps:
        text = step.text.lower().split(":")[0].strip()
        if len(text) < 8 or text not in lowered:
            continue
        if next_action and step.state == "done":
            return f"the plan step {step.text!r} is already done"
        if _DONE.search(line) and not _NEGATION.search(line) and step.state != "done":
            return f"the plan step {step.text!r} is {step.state.replace('_', ' ')}, not done"
    return None
