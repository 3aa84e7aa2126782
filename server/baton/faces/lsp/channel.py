"""The core's ClientChannel over JSON-RPC: notifications, permission requests, progress."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol, TypeVar

from lsprotocol import types as lsp
from pydantic import BaseModel, ValidationError

from baton import protocol as p
from baton.agent.events import ProgressReporter, ProgressScope, no_progress

if TYPE_CHECKING:
    from pygls.progress import Progress
    from pygls.protocol import JsonRPCProtocol

log = logging.getLogger(__name__)

AnswerT = TypeVar("AnswerT", bound=BaseModel)


class LspPeer(Protocol):
    """The connection a channel talks to (baton.faces.lsp.server.BatonServer, a pygls server)."""

    @property
    def protocol(self) -> JsonRPCProtocol: ...

    @property
    def client_capabilities(self) -> lsp.ClientCapabilities: ...

    @property
    def work_done_progress(self) -> Progress: ...


class LspChannel:
    def __init__(self, server: LspPeer) -> None:
        self.server = server

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        params = p.SessionUpdateNotification(
            session_id=session_id, update=update, parent_id=parent_id
        )
        self.notify("baton/session/update", params)

    def notify(self, method: str, params: p.WireModel) -> None:
        try:
            self.server.protocol.notify(method, params.wire())
        except Exception:
            # A vanished client must not break the turn that is running.
            log.warning("could not send %s to the client", method, exc_info=True)

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        protocol = self.server.protocol
        msg_id = f"baton-permission-{uuid.uuid4()}"
        try:
            raw = await protocol.send_request_async(
                "baton/permission/request", params.wire(), msg_id=msg_id
            )
        except asyncio.CancelledError:
            # The turn was cancelled or the wait timed out: tell the client, so the
            # editor closes its prompt, and forget the request (a late answer is ignored).
            self._withdraw(msg_id)
            raise
        except Exception as exc:
            log.warning("permission request failed, treated as rejected: %s", exc)
            return None
        try:
            return p.PermissionResponse.model_validate(raw)
        except ValidationError as exc:
            # Nothing runs on an answer Baton cannot read (an `editedContent` that is not
            # a string included); the log names the field.
            fields = "; ".join(
                f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
                for error in exc.errors()
            )
            log.warning("malformed permission answer, treated as rejected (%s)", fields)
            return None

    async def request_question(self, params: p.QuestionRequestParams) -> p.QuestionResponse | None:
        """`baton/question/request`; None when the client failed or answered nonsense. A
        cancelled turn withdraws the question (`$/cancelRequest`)."""
        return await self._answer("baton/question/request", params, "question", p.QuestionResponse)

    async def request_diagnostics(
        self, params: p.EditorDiagnosticsParams
    ) -> p.EditorDiagnosticsResult | None:
        return await self._answer(
            "baton/editor/diagnostics", params, "diagnostics", p.EditorDiagnosticsResult
        )

    async def _answer(
        self, method: str, params: p.WireModel, kind: str, model: type[AnswerT]
    ) -> AnswerT | None:
        """The client's answer to `method` as `model`; None when it failed or answered
        something else (logged: the tool goes on without it)."""
        raw = await self._request(method, params, kind)
        if raw is None:
            return None
        try:
            return model.model_validate(raw)
        except ValidationError:
            log.warning("malformed %s answer, ignored", kind)
            return None

    async def _request(self, method: str, params: p.WireModel, kind: str) -> object | None:
        msg_id = f"baton-{kind}-{uuid.uuid4()}"
        try:
            answer: object = await self.server.protocol.send_request_async(
                method, params.wire(), msg_id=msg_id
            )
            return answer
        except asyncio.CancelledError:
            self._withdraw(msg_id)
            raise
        except Exception as exc:
            log.warning("%s failed: %s", method, exc)
            return None

    def _withdraw(self, msg_id: str) -> None:
        futures = getattr(self.server.protocol, "_request_futures", None)
        if isinstance(futures, dict) and msg_id in futures:
            # The client still answers (usually "cancelled"): let that answer land in a
            # future nobody waits for instead of being logged as an unknown id.
            futures[msg_id] = concurrent.futures.Future()
        try:
            self.server.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
        except Exception:
            log.debug("could not withdraw permission request %s", msg_id, exc_info=True)

    def _supports_progress(self) -> bool:
        try:
            caps = self.server.client_capabilities
        except Exception:
            return False
        window = getattr(caps, "window", None)
        return bool(window and window.work_done_progress)

    def progress(self, title: str) -> ProgressScope:
        if not self._supports_progress():
            return no_progress()
        return self._progress(title)

    @asynccontextmanager
    async def _progress(self, title: str) -> AsyncIterator[ProgressReporter]:
        token = f"baton-{uuid.uuid4()}"
        wdp = self.server.work_done_progress
        try:
            await wdp.create_async(token)
            wdp.begin(token, lsp.WorkDoneProgressBegin(title=title, percentage=0))
            started = True
        except Exception:
            log.debug("client refused work-done progress", exc_info=True)
            started = False

        def report(message: str, percentage: int | None = None) -> None:
            if started:
                wdp.report(
                    token, lsp.WorkDoneProgressReport(message=message, percentage=percentage)
                )

        try:
            yield report
        finally:
            if started:
                wdp.end(token, lsp.WorkDoneProgressEnd())
            # pygls keeps every token it registered (for a client's cancel) and never lets
            # one go: a compaction's progress each, so a long day's server grew by them.
            wdp.tokens.pop(token, None)


class LspQuestions:
    """The `question` tool's PersonQuestions over a client that shows the question."""

    def __init__(self, channel: LspChannel) -> None:
        self.channel = channel

    async def ask(self, request: p.QuestionRequestParams) -> p.QuestionResponse | None:
        return await self.channel.request_question(request)


class LspDiagnostics:
    """The editor's problems over a client that answers `baton/editor/diagnostics`."""

    def __init__(self, channel: LspChannel) -> None:
        self.channel = channel

    async def diagnostics(self, uris: list[str] | None) -> list[p.EditorFileDiagnostics] | None:
        result = await self.channel.request_diagnostics(p.EditorDiagnosticsParams(uris=uris))
        return None if result is None else result.items
