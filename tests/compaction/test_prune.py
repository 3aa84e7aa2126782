"""Masks of old outputs (compaction/prune.py): whole, or the last one only cut so a mask
saves no more than it is asked to."""

from __future__ import annotations

from baton.agent.tokens import estimate
from baton.compaction.prune import cut_note, plan_masks
from tests.compaction.test_planning import run

READ = "".join(f"line {n:04d} of the module: value_{n} = {n * 7}\n" for n in range(400))


def test_a_mask_asked_for_part_of_an_output_saves_the_whole_of_it_by_default() -> None:
    messages = [run(1, "cat big.py", READ, 0)]
    masks, saved = plan_masks(messages, {}, protect_tokens=0, needed_tokens=300)
    assert "value_0 = 0" not in masks["call1"]
    assert saved > 3_000


def test_a_cut_mask_keeps_the_head_the_saving_does_not_need_and_says_where_it_cut() -> None:
    output = f"{READ}\n[exit code 0]"
    messages = [run(1, "cat big.py", READ, 0)]
    masks, saved = plan_masks(messages, {}, protect_tokens=0, needed_tokens=300, cut_last=True)
    cut = masks["call1"]
    assert 300 <= saved <= 300 + 40
    assert estimate(output) - estimate(cut) == saved
    head, note = cut.rsplit("[output cut by compaction", 1)
    assert output.startswith(head) and head.endswith("\n")  # whole lines, exactly as read
    shown = head.count("\n")
    assert f" after line {shown:,} of 402 " in note
    assert '`recall {"call_id": "call1"}` returns it whole]' in note


def test_only_the_last_output_chosen_is_cut_and_earlier_ones_are_masked_whole() -> None:
    messages = [run(1, "cat a.py", READ, 0), run(2, "cat b.py", READ, 0)]
    one = estimate(f"{READ}\n[exit code 0]")
    masks, saved = plan_masks(
        messages, {}, protect_tokens=0, needed_tokens=one + 200, cut_last=True
    )
    assert masks["call1"].startswith("[output pruned by compaction: bash")
    assert masks["call2"].startswith("line 0000 of the module")
    assert one + 200 <= saved <= one + 240


def test_a_cut_with_little_to_keep_is_a_whole_mask() -> None:
    messages = [run(1, "cat big.py", READ, 0)]
    needed = estimate(f"{READ}\n[exit code 0]") - 60
    masks, _ = plan_masks(messages, {}, protect_tokens=0, needed_tokens=needed, cut_last=True)
    assert masks["call1"].startswith("[output pruned by compaction: bash")


def test_a_cut_of_one_long_line_keeps_nothing_of_it_rather_than_half_a_line() -> None:
    note = cut_note("c", "read", {"path": "x.min.js"}, "x" * 5_000, 1_000)
    assert note.startswith("[output cut by compaction after line 0 of 1 (0 of 5,000 characters)")
