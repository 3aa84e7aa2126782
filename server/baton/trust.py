"""Whether the person trusts a workspace, and the record `baton trust` keeps of it.

A cloned repository is not the person's code. Until the person says otherwise a
workspace is untrusted: its `.baton/config.toml` may tune Baton but may not run
code, choose where requests and keys go, or relax permissions (see
`baton.config`, docs/security.md).

Only the person decides, through one of:

* the editor: `initializationOptions.workspaceTrusted` (VS Code sends
  `vscode.workspace.isTrusted`), and `baton/workspace/setTrust` when trust is
  granted later;
* the terminal: `baton trust [PATH]` / `baton trust --revoke`, or the y/N
  question of an interactive `baton run`. Those answers live in Baton's user
  data directory (never inside a workspace, where the workspace could write
  its own), keyed by the workspace's real path.

An editor's explicit answer wins over the record: Restricted Mode in VS Code
must mean restricted here too. A record that cannot be read counts as "not
trusted", with a warning, and is never overwritten by `baton trust` (the
person should see what is wrong with it first).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from platformdirs import user_data_path

from baton.protocol import TrustSource

RECORD_VERSION = 1


@dataclass(frozen=True)
class Trust:
    """One decision: trusted or not, who decided, and a warning about the record if any."""

    trusted: bool
    source: TrustSource
    warning: str | None = None


UNTRUSTED = Trust(False, "none")


class TrustRecordError(Exception):
    """The record exists but cannot be read or has the wrong shape."""


def record_file() -> Path:
    return user_data_path("baton", appauthor=False) / "trust.json"


def workspace_key(workspace: Path) -> str:
    """The record's key: the real path, so a symlink or `..` cannot alias another folder."""
    return os.path.realpath(workspace)


def read_record(path: Path | None = None) -> dict[str, bool]:
    """Workspace key -> trusted, as recorded; {} when there is no record yet."""
    path = path or record_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise TrustRecordError(f"cannot read {path}: {exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise TrustRecordError(f"{path} is not valid JSON: {exc}") from None
    workspaces = data.get("workspaces") if isinstance(data, dict) else None
    if not isinstance(workspaces, dict):
        raise TrustRecordError(f'{path} has no "workspaces" object')
    out: dict[str, bool] = {}
    for key, entry in workspaces.items():
        trusted = entry.get("trusted") if isinstance(entry, dict) else None
        if not isinstance(trusted, bool):
            raise TrustRecordError(f'{path}: the entry for {key} has no boolean "trusted"')
        out[key] = trusted
    return out


def recorded(workspace: Path) -> bool | None:
    """The recorded answer for `workspace`, None if there is none (raises TrustRecordError)."""
    return read_record().get(workspace_key(workspace))


def write_record(workspace: Path, trusted: bool) -> Path:
    """Record the person's answer for `workspace` (raises TrustRecordError, OSError)."""
    path = record_file()
    existing = _raw_workspaces(path)
    existing[workspace_key(workspace)] = {
        "trusted": trusted,
        "decidedAt": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = json.dumps({"version": RECORD_VERSION, "workspaces": existing}, indent=2) + "\n"
    # Atomically, and private to the user: the record lists the folders they work in.
    fd, tmp = tempfile.mkstemp(prefix=".trust-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _raw_workspaces(path: Path) -> dict[str, Any]:
    read_record(path)  # refuses a damaged record before anything is replaced
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    workspaces: dict[str, Any] = data["workspaces"]
    return workspaces


def decide(workspace: Path, editor: bool | None) -> Trust:
    """The trust in force at start: the editor's explicit answer, else the record, else none."""
    if editor is not None:
        return Trust(editor, "editor")
    try:
        answer = recorded(workspace)
    except TrustRecordError as exc:
        return Trust(False, "none", f"trust record ignored, workspace not trusted: {exc}")
    if answer is None:
        return UNTRUSTED
    return Trust(answer, "cli")
