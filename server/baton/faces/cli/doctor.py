"""`baton doctor [--repair]`, `baton/store/check` and `baton/store/repair`: the way out of
a damaged store, one implementation for the terminal and for editors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from baton import protocol as p
from baton.errors import REPAIR_COMMAND, StorageError
from baton.store.db import workspace_db_path
from baton.store.health import check_result, repair_result


def doctor(workspace: Path, *, repair: bool, as_json: bool) -> int:
    """The command: 0 when the store is (now) whole, 1 when it is damaged or the repair
    failed."""
    path = workspace_db_path(workspace.resolve())
    checked = check_result(path)
    if not repair or checked.ok:
        if as_json:
            _print_json(checked)
        else:
            _print_check(checked, repair_asked=repair)
        return 0 if checked.ok else 1
    try:
        repaired = repair_result(path)
    except StorageError as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
        return 1
    if as_json:
        _print_json(repaired)
    else:
        _print_repair(repaired)
    return 0 if repaired.check.ok else 1


def _print_json(result: p.StoreCheckResult | p.StoreRepairResult) -> None:
    json.dump(result.model_dump(mode="json", by_alias=True), sys.stdout, indent=2)
    sys.stdout.write("\n")


def _print_check(result: p.StoreCheckResult, *, repair_asked: bool) -> None:
    if not result.exists:
        print(f"no session store yet for this folder (it will be {result.path})")
        return
    size = f"{result.size_bytes / 1_000_000:.1f} MB"
    if result.ok:
        note = "; nothing to repair" if repair_asked else ""
        print(f"store {result.path}: ok ({result.sessions} sessions, {size}){note}")
        return
    print(f"store {result.path} is damaged ({size}):")
    for problem in result.problems:
        print(f"  - {problem}")
    print(
        f"Run `{REPAIR_COMMAND}` here: it keeps the damaged file as it is, beside the store, and"
        " recovers every readable session into a new one."
    )


def _print_repair(result: p.StoreRepairResult) -> None:
    print(f"kept the damaged store, unchanged, at {result.backup_path}")
    print(
        f"recovered {len(result.sessions)} sessions ({result.messages} messages) into a new"
        f" store at {result.path}:"
    )
    for s in result.sessions:
        note = " (its own record was lost: titled anew)" if s.recreated else ""
        print(f"  {s.session_id}  {s.messages:5} messages  {s.title}{note}")
    if result.damaged_regions:
        skipped = ", ".join(f"{t} ({n})" for t, n in sorted(result.damaged_regions.items()))
        print(f"skipped damaged pages in: {skipped}")
    if result.unreadable_tables:
        print(f"could not read at all: {', '.join(result.unreadable_tables)}")
    left_out = {**result.rows_left_out}
    for table, n in result.rows_invalid.items():
        left_out[table] = left_out.get(table, 0) + n
    if left_out:
        rows = ", ".join(f"{t} ({n})" for t, n in sorted(left_out.items()))
        print(
            f"left out rows whose message or session was lost, or garbled: {rows};"
            " they remain in the kept copy"
        )
    state = "ok" if result.check.ok else "still damaged: " + "; ".join(result.check.problems)
    print(f"new store: {state}")
