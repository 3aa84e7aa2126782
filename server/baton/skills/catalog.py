"""The skills block: each model-invocable skill's name and description, within a budget.

It sits with the instructions, at the head of every request, so its text must
depend only on the skills and the budget: the same skills give the same bytes,
and the provider's cached prefix holds. Over the budget (a share of the context
window, `skills.catalogShare`) every description is cut to one common length,
the longest that fits, and the block says how many were cut; names are never
cut (the `skill` tool's enum has them all anyway).
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
    return _block(_capped(full, low), cut=_cut_count(full, low))


def _capped(entries: list[tuple[str, str]], cap: int) -> list[tuple[str, str]]:
    out = []
    for name, description in entries:
        if len(description) > cap:
            description = description[:cap].rstrip() + ELLIPSIS if cap else ""
        out.append((name, description))
    return out


def _cut_count(entries: list[tuple[str, str]], cap: int) -> int:
    return sum(1 for _, d in entries if len(d) > cap)


def _block(entries: list[tuple[str, str]], *, cut: int) -> str:
    lines = [prompts.SKILLS_INTRO]
    for name, description in entries:
        entry = f"- {framing.inline(name)}"
        lines.append(f"{entry}: {framing.inline(description)}" if description else entry)
    if cut:
        lines.append(prompts.SKILLS_CUT.format(count=cut, total=len(entries)))
    return framing.block("skills", "\n".join(lines), trusted=True)
