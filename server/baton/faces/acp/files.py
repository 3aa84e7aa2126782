"""The file tools' editor seam over ACP's `fs/read_text_file` and `fs/write_text_file`.

With it, what the model reads and edits is the editor's buffer (unsaved changes
included) and a write lands in that buffer. The tools confine the path to the
workspace, apply protected-path rules and refuse binary files before this is
asked anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from acp import RequestError

from baton.tools.base import ToolFailure

if TYPE_CHECKING:
    from acp.interfaces import Client


class AcpEditorFiles:
    def __init__(self, client: Client, *, read: bool, write: bool) -> None:
        self.client = client
        self.read = read
        self.write = write

    async def read_text(self, session_id: str, path: Path) -> str | None:
        if not self.read:
            return None
        try:
            answer = await self.client.read_text_file(session_id=session_id, path=str(path))
        except RequestError as exc:
            raise ToolFailure(f"the editor could not read {path.name}: {exc}") from exc
        return answer.content

    async def write_text(self, session_id: str, path: Path, content: str) -> bool:
        if not self.write:
            return False
        try:
            await self.client.write_text_file(
                session_id=session_id, path=str(path), content=content
            )
        except RequestError as exc:
            raise ToolFailure(f"the editor could not write {path.name}: {exc}") from exc
        return True
