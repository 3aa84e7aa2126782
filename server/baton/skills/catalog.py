"""The skills block: each model-invocable skill's name and description, within a budget.

It sits with the instructions, at the head of every request, so its text must
depend only on the skills and the budget: the same skills give the same bytes,
and the provider's cached prefix holds. Over the budget (a share of the context
window, `skills.catalogShare`) every description is cut to one common length,
the longest that fits, and the block says how many were cut. When even the names
alone do not fit, the block lists as many names as fit, in order, and says how many
were left out and how to reach them (the `skill` tool finds a skill by a word of its
name or description). So the block stays within its budget at any count.
"""

from __future__ import annotations

from baton.agent import framing, prompts
from baton.agent.tokens import estimate
from baton.skills.model import Skill

ELLIPSIS = "…"


def render(skills: list[Skill], budget_tokens: int) -> str | None:
    """The block for `skills`, or None when there are none."""
    if not skills:
        return None
    full = [(s.name, s.description) for s in skills]
    text = _block(full, cut=0)
    if estimate(text) <= budget_tokens:
        return text
    longest = max(len(d) for _, d in full)
    low, high = 0, longest
    # The longest common cap that fits: a binary search over the description length.
    while low < high:
        middle = (low + high + 1) // 2
        if estimate(_block(_capped(full, middle), cut=_cut_count(full, middle))) <= budget_tokens:
            low = middle
        else:
            high = middle - 1
    if low > 0 or estimate(_block(_capped(full, 0), cut=len(full))) <= budget_tokens:
        return _block(_capped(full, low), cut=_cut_count(full, low))
    return _names_only(full, budget_tokens)


def _names_only(entries: list[tuple[str, str]], budget_tokens: int) -> str:
    """As many names as fit, and how many were left out and how to reach them."""
    low, high = 0, len(entries)
    while low < high:
        middle = (low + high + 1) // 2
        shown = [(name, "") for name, _ in entries[:middle]]
        if estimate(_block(shown, cut=0, left=len(entries) - middle)) <= budget_tokens:
            low = middle
        else:
            high = middle - 1
    shown = [(name, "") for name, _ in entries[:low]]
    return _block(shown, cut=0, left=len(entries) - low)


def _capped(entries: list[tuple[str, str]], cap: int) -> list[tuple[str, str]]:
    out = []
    for name, description in entries:
        if len(description) > cap:
            description = description[:cap].rstrip() + ELLIPSIS if cap else ""
        out.append((name, description))
    return out


def _cut_count(entries: list[tuple[str, str]], cap: int) -> int:
    return sum(1 for _, d in entries if len(d) > cap)


def _block(entries: list[tuple[str, str]], *, cut: int, left: int = 0) -> str:
    lines = [prompts.SKILLS_INTRO]
    for name, description in entries:
        entry = f"- {framing.inline(name)}"
        lines.append(f"{entry}: {framing.inline(description)}" if description else entry)
    if left:
        lines.append(prompts.SKILLS_LEFT_OUT.format(left=left, total=len(entries) + left))
    elif cut:
        lines.append(prompts.SKILLS_CUT.format(count=cut, total=len(entries)))
    return framing.block("skills", "\n".join(lines), trusted=True)
