"""The store's health as the wire reports it: `baton/store/check` and `baton/store/repair`,
one implementation for `baton doctor` and for editors."""

from __future__ import annotations

from pathlib import Path

from baton import protocol as p
from baton.errors import REPAIR_COMMAND, StorageError
from baton.store.integrity import check_store, other_processes
from baton.store.repair import repair_store


def check_result(path: Path) -> p.StoreCheckResult:
    report = check_store(path)
    return p.StoreCheckResult(
        path=str(path),
        ok=report.ok,
        exists=report.exists,
        problems=report.problems,
        sessions=report.sessions,
        size_bytes=report.size,
        fix=None if report.ok else REPAIR_COMMAND,
    )


def repair_result(path: Path) -> p.StoreRepairResult:
    """Recover the store at `path` (see `baton.store.repair`); refused, changing nothing,
    while another process has it open."""
    others = other_processes(path)
    if others:
        pids = ", ".join(str(pid) for pid in others)
        raise StorageError(
            f"the store at {path} is open in another process (pid {pids}): close Baton there"
            " (an editor window on this folder, `baton serve`, `baton run`) and try again;"
            " nothing was changed"
        )
    report = repair_store(path)
    return p.StoreRepairResult(
        path=str(path),
        backup_path=str(report.backup),
        sessions=[
            p.RecoveredSession(
                session_id=s.id, title=s.title, messages=s.messages, recreated=s.recreated
            )
            for s in report.sessions
        ],
        messages=report.messages,
        rows_saved=report.rows_saved,
        damaged_regions=report.damaged_regions,
        rows_left_out=report.rows_left_out,
        rows_invalid=report.rows_invalid,
        unreadable_tables=report.unreadable_tables,
        check=check_result(path),
    )
