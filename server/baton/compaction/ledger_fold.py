"""How the ledger stays within its budget whatever the session's length: folding.

The ledger is a list of sections (files read, files changed, commands, errors, …),
each a list of entries, oldest first. An entry is shown in one of three states:

* **full**: every line of it (a command's failing runs, what it printed);
* **trimmed**: its head and its details on one line each (a command's distinct error
  lines, what it printed), where it has details;
* **minimal**: its head and the details worth most (the first and the latest distinct
  error), where that is shorter still;
* **short**: one line that ends in the entry's id (`[ledger:3f9a01c2]`);
* **counted**: not shown; its section says how many entries folded into one count
  line, which carries the section's id (`[ledger:commands]`).

`fold` moves entries along those states by value, until the block fits its budget:
what is worth least goes first (reads of files never changed, commands that only
ever passed and printed nothing worth keeping, long outputs), what is worth most
stays longest (files created or changed, the command run again and again, the
errors of a command that failed and later passed, versions and config values). An
entry loses its detail lines before its head, and its head before it joins a count. `recall {"call_id": <id>}` returns
what an id names in full (`ledger.folded_record`), so nothing is lost: every fact
the block stops showing is one call away. Pure and deterministic: the same ledger
and budget fold the same way, so a request's prefix does not change by itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

State = Literal["full", "trimmed", "minimal", "short", "counted"]
ID_PREFIX = "ledger:"
# Estimated tokens are UTF-8 bytes / 4 (baton.tokens.estimate).
BYTES_PER_TOKEN = 4
# What a count line costs at most, in bytes (`- … 1,234 earlier …, folded [ledger:…]`).
COUNT_LINE_BYTES = 90
# The newest entries of a section a first sweep leaves as they are.
KEEP_NEWEST = 3


def entry_id(key: str) -> str:
    """The id of one entry: stable for as long as the entry exists (derived from what it
    is about, not from where it stands), so a folded line names the same id after every
    compaction."""
    return ID_PREFIX + hashlib.sha1(key.encode("utf-8")).hexdigest()[:8]


def group_id(section: str) -> str:
    return ID_PREFIX + section


@dataclass
class Entry:
    key: str
    full: list[str]
    # The one-line form; None: the entry cannot be shortened (it is one line already).
    short: str | None = None
    # Whether the entry may fold into its section's count (unresolved errors may not).
    countable: bool = True
    state: State = "full"
    # What the entry is, for the fold's order (`STEPS`): "plain" (worth least), "output"
    # (it printed a long output), "value" (it printed a short one: a version), "fixed" (it failed and later passed), "repeated" (run
    # again and again), "created" (a file the session created), "" (its section says).
    tag: str = ""
    # The detail lines one line each, then only the ones worth most; None: no such form.
    trimmed: list[str] | None = None
    minimal: list[str] | None = None
    # What `recall` returns for the id when the full form is itself cut; None: `full`.
    record: list[str] | None = None

    @property
    def id(self) -> str:
        return entry_id(self.key)

    def lines(self) -> list[str]:
        if self.state == "counted":
            return []
        if self.state == "short" and self.short is not None:
            return [self.short]
        return self.form(self.state)

    def form(self, state: State) -> list[str]:
        if state == "minimal" and self.minimal is not None:
            return self.minimal
        if state in ("trimmed", "minimal") and self.trimmed is not None:
            return self.trimmed
        return self.full

    def size(self, state: State | None = None) -> int:
        state = state or self.state
        if state == "counted":
            return 0
        if state == "short" and self.short is not None:
            return _bytes(self.short)
        return sum(_bytes(line) for line in self.form(state))

    def has(self, state: State) -> bool:
        """Whether the entry has a form for `state` (every entry can be counted)."""
        if state == "trimmed":
            return self.trimmed is not None
        if state == "minimal":
            return self.minimal is not None
        if state == "short":
            return self.short is not None
        return True


@dataclass
class Section:
    name: str
    # Its heading (one line), shown while any entry is; "" for a section rendered whole.
    title: str
    entries: list[Entry] = field(default_factory=list)
    # What its count line calls the entries ("commands that passed", "files").
    noun: str = "entries"

    @property
    def counted(self) -> int:
        return sum(1 for e in self.entries if e.state == "counted")

    def count_line(self) -> str | None:
        n = self.counted
        if not n:
            return None
        return f"- … {n:,} earlier {self.noun}, folded [{group_id(self.name)}]"


# One sweep: (section, the state it moves entries to, which entries may move: a tag,
# "passed" for any whose latest run passed, "any"). Worth least first.
Step = tuple[str, State, str]
STEPS: tuple[Step, ...] = (
    ("read", "counted", "any"),
    ("commands", "counted", "plain"),
    ("children", "short", "any"),
    ("commands", "trimmed", "output"),
    ("children", "counted", "any"),
    ("resolved", "short", "any"),
    ("commands", "short", "output"),
    ("commands", "counted", "output"),
    ("commands", "trimmed", "passed"),
    ("config", "short", "any"),
    ("commands", "minimal", "passed"),
    ("resolved", "counted", "any"),
    ("commands", "trimmed", "any"),
    ("commands", "short", "fixed"),
    ("config", "counted", "any"),
    ("commands", "short", "any"),
    ("commands", "counted", "ordinary"),
    ("changed", "counted", "modified"),
    ("commands", "counted", "passed"),
    ("changed", "counted", "any"),
    ("errors", "short", "any"),
)
_ORDER: dict[State, int] = {"full": 0, "trimmed": 1, "minimal": 2, "short": 3, "counted": 4}


def _matches(entry: Entry, which: str) -> bool:
    if which == "any":
        return True
    if which == "passed":
        return entry.countable
    if which == "fixed":
        return entry.tag in ("fixed", "repeated") and entry.countable
    if which == "ordinary":
        return entry.tag not in ("fixed", "repeated") and entry.countable
    if which == "modified":
        return entry.tag != "created" and entry.countable
    return entry.tag == which and entry.countable


def total_bytes(sections: Sequence[Section], fixed: int) -> int:
    size = fixed
    for section in sections:
        shown = [e for e in section.entries if e.state != "counted"]
        if shown or section.counted:
            size += _bytes(section.title) if section.title else 0
        size += sum(e.size() for e in shown)
        if section.counted:
            size += COUNT_LINE_BYTES
    return size


def fold(sections: Sequence[Section], budget_tokens: int, fixed_bytes: int = 0) -> bool:
    """Fold entries, in `STEPS` order and the oldest first, until the sections fit
    `budget_tokens`; whether they do.

    `fixed_bytes` is what the block holds besides the sections (its header, the plan
    line). The first sweep leaves the newest `KEEP_NEWEST` entries of every section as
    they are, the second only the newest one: the latest facts are the likeliest to
    be needed, and a short line of them still names its id."""
    limit = budget_tokens * BYTES_PER_TOKEN
    by_name = {s.name: s for s in sections}
    size = total_bytes(sections, fixed_bytes)
    for keep in (KEEP_NEWEST, 1):
        for name, target, which in STEPS:
            if size <= limit:
                return True
            section = by_name.get(name)
            if section is None:
                continue
            candidates = section.entries[: max(0, len(section.entries) - keep)]
            for entry in candidates:
                if size <= limit:
                    break
                if _ORDER[entry.state] >= _ORDER[target]:
                    continue
                if target == "counted" and not entry.countable:
                    continue
                if not entry.has(target) or not _matches(entry, which):
                    continue
                was_counted = section.counted
                before = entry.size()
                entry.state = target
                size += entry.size() - before
                if target == "counted" and not was_counted:
                    size += COUNT_LINE_BYTES
    return size <= limit


def _bytes(line: str) -> int:
    return (len(line) if line.isascii() else len(line.encode("utf-8"))) + 1
