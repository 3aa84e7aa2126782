"""Plan steps and their states: the one parser every face of a plan uses.

A step is a markdown task-list item. Its box says its state:

    - [ ] open
    - [~] in progress
    - [!] blocked: the reason is on the same line
    - [x] done (`[X]` too)

The plan block, the compaction ledger, the summary check, the webview and the
ACP `plan` updates all read steps through `parse_steps`, so they never
disagree on what a line means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

StepState = Literal["open", "in_progress", "blocked", "done"]

BOXES: dict[str, StepState] = {" ": "open", "~": "in_progress", "!": "blocked", "x": "done"}
MARKS: dict[StepState, str] = {state: mark for mark, state in BOXES.items()}
# ACP's plan entry status for each state (a blocked step is still pending there).
ACP_STATUS: dict[StepState, str] = {
    "open": "pending",
    "in_progress": "in_progress",
    "blocked": "pending",
    "done": "completed",
}

# "- [ ] step", "* [~] step", "1. [!] step: reason", "+ [x] step", indented or not.
_STEP = re.compile(
    r"^(?P<indent>[ \t]*)(?:[-*+]|\d+[.)])[ \t]+\[(?P<box>[ xX~!])\][ \t]+(?P<text>.+?)[ \t]*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class PlanStep:
    text: str
    state: StepState
    line: int  # 0-based line number in the plan's text
    depth: int  # indentation in characters (nested steps are deeper)

    @property
    def reason(self) -> str | None:
        """A blocked step's reason: what follows the first ':' or ' - ' on its line."""
        if self.state != "blocked":
            return None
        for sep in (":", " - ", " — "):
            if sep in self.text:
                reason = self.text.split(sep, 1)[1].strip()
                return reason or None
        return None


def parse_steps(content: str) -> list[PlanStep]:
    """Every task-list step of a plan, in order, with its state."""
    steps: list[PlanStep] = []
    for match in _STEP.finditer(content):
        box = match.group("box").lower()
        line = content.count("\n", 0, match.start())
        steps.append(
            PlanStep(
                text=match.group("text"),
                state=BOXES[box],
                line=line,
                depth=len(match.group("indent").expandtabs(4)),
            )
        )
    return steps


def current_step(content: str) -> PlanStep | None:
    """Where work goes on: the first step in progress, else the first open one.

    Blocked steps are skipped (they wait on something else); None when every
    step is done or blocked.
    """
    steps = parse_steps(content)
    for state in ("in_progress", "open"):
        for step in steps:
            if step.state == state:
                return step
    return None
