"""Drive `baton acp` as an editor would: the official SDK's client side over stdio.

The agent runs as a subprocess (`python -m baton acp`) against the scripted model,
with XDG dirs in a throwaway home (tests/harness.py). `AcpTestClient` records every
`session/update` (raw JSON, so draft updates the SDK cannot parse are seen too) and
answers permission requests with a policy the test picks.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio
from acp import PROTOCOL_VERSION
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    EnvVariable,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    TextContentBlock,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.stdio import spawn_agent_process

from tests.acp import schema_check
from tests.fake_llm import FakeLLM
from tests.harness import TEST_KEY, server_env

Policy = Callable[[dict[str, Any]], Awaitable[str | None]]


async def allow_once(_: dict[str, Any]) -> str | None:
    return "allow_once"


async def reject(_: dict[str, Any]) -> str | None:
    return "reject_once"


class AcpTestClient:
    """The client half: what an editor receives, recorded."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []  # raw `params` of each session/update
        self.permission_requests: list[dict[str, Any]] = []
        self.policy: Policy = reject
        self.conn: ClientSideConnection | None = None
        self._changed = asyncio.Event()
        # The editor's unsaved buffers, by absolute path (fs/* go here, not to the disk).
        self.buffers: dict[str, str] = {}
        self.fs_calls: list[tuple[str, str]] = []
        # Form elicitations asked (`question`), and the content the editor answers with
        # (None: the person declines).
        self.elicitations: list[tuple[str, Any]] = []
        self.elicitation_content: dict[str, Any] | None = None
        # Terminals the editor ran for the agent: id -> (request, process, output).
        self.terminals: dict[str, dict[str, Any]] = {}
        # What the agent sent that the protocol's schema refuses (tests/acp/schema_check.py),
        # and how many of its messages were checked.
        self.schema_errors: list[str] = []
        self.checked: dict[str, int] = {}
        self._sent: dict[Any, str] = {}  # our request ids -> method, to check the answers

    # The SDK calls these (acp.interfaces.Client).
    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse:
        request = {
            "sessionId": session_id,
            "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True),
            "options": [o.model_dump(by_alias=True) for o in options],
        }
        self.permission_requests.append(request)
        chosen = await self.policy(request)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def read_text_file(self, session_id: str, path: str, **kw: Any) -> ReadTextFileResponse:
        self.fs_calls.append(("read", path))
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kw: Any
    ) -> WriteTextFileResponse:
        self.fs_calls.append(("write", path))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kw: Any,
    ) -> CreateTerminalResponse:
        import os

        environ = dict(os.environ)
        environ.update({e.name: e.value for e in env or []})
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env=environ,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = {
            "command": [command, *(args or [])],
            "env": {e.name: e.value for e in env or []},
            "process": process,
            "released": False,
            "killed": False,
        }
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> WaitForTerminalExitResponse:
        process = self.terminals[terminal_id]["process"]
        await process.wait()
        return WaitForTerminalExitResponse(exit_code=process.returncode)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> TerminalOutputResponse:
        term = self.terminals[terminal_id]
        if "output" not in term:
            term["output"] = (await term["process"].stdout.read()).decode()
        return TerminalOutputResponse(output=term["output"], truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        import os
        import signal

        term = self.terminals[terminal_id]
        term["killed"] = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(term["process"].pid, signal.SIGKILL)
        await term["process"].wait()

    async def release_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.terminals[terminal_id]["released"] = True

    async def create_elicitation(self, message: str, mode: Any, **kw: Any) -> Any:
        self.elicitations.append((message, mode))
        if self.elicitation_content is None:
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content=self.elicitation_content)

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        pass  # recorded raw by `observe`, drafts included

    def on_connect(self, conn: Any) -> None:
        pass

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self._sent[message["id"]] = message["method"]
            return
        self._check(message)
        if message.get("method") == "session/update":
            self.updates.append(message["params"])
            self._changed.set()

    def _check(self, message: dict[str, Any]) -> None:
        """Every message from the agent against the vendored schema."""
        if "method" in message:
            what = message["method"]
            if what == "session/update":
                what = f"session/update {message['params'].get('update', {}).get('sessionUpdate')}"
            errors = schema_check.request_errors(message["method"], message.get("params"))
        elif "result" in message and message.get("id") in self._sent:
            method = self._sent.pop(message["id"])
            what = f"answer to {method}"
            errors = schema_check.response_errors(method, message["result"])
        else:
            return  # an error answer: JSON-RPC's own shape
        self.checked[what] = self.checked.get(what, 0) + 1
        self.schema_errors.extend(f"{what}: {e}" for e in errors)

    # Helpers for tests.
    def of(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            u["update"]
            for u in self.updates
            if u["sessionId"] == session_id
            and (kind is None or u["update"]["sessionUpdate"] == kind)
        ]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"]["text"] for u in self.of(session_id, kind))

    async def wait(
        self, predicate: Callable[[], bool], timeout: float = 15.0, what: str = "an update"
    ) -> None:
        async def loop() -> None:
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

        try:
            await asyncio.wait_for(loop(), timeout)
        except TimeoutError as exc:
            raise AssertionError(f"timed out waiting for {what}") from exc

    async def raw(self, method: str, params: Any) -> Any:
        """A request the SDK's typed methods would refuse to build (bad input tests)."""
        assert self.conn is not None
        return await self.conn._conn.send_request(method, params)


class Acp:
    """A running `baton acp` with its client connection."""

    def __init__(
        self, conn: ClientSideConnection, client: AcpTestClient, process: Any, cwd: Path
    ) -> None:
        self.conn, self.client, self.process, self.cwd = conn, client, process, cwd

    async def new(self, **kw: Any) -> str:
        return (await self.conn.new_session(cwd=str(self.cwd), mcp_servers=[], **kw)).session_id

    async def say(self, session_id: str, text: str) -> Any:
        return await self.conn.prompt(
            session_id=session_id, prompt=[TextContentBlock(type="text", text=text)]
        )


StartAcp = Callable[..., Awaitable[Acp]]


@pytest_asyncio.fixture
async def start_acp(llm: FakeLLM, workspace: Path, home: Path) -> AsyncIterator[StartAcp]:
    stack = contextlib.AsyncExitStack()
    clients: list[AcpTestClient] = []

    async def start(
        *,
        env: dict[str, str] | None = None,
        capabilities: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        api_key: str | None = TEST_KEY,
        fs: bool = False,
        terminal: bool = False,
        elicitation: bool = False,
    ) -> Acp:
        llm_env = {"OPENAI_BASE_URL": llm.base_url}
        if api_key:
            llm_env["OPENAI_API_KEY"] = api_key
        client = AcpTestClient()
        clients.append(client)
        conn, process = await stack.enter_async_context(
            spawn_agent_process(
                client,
                sys.executable,
                "-m",
                "baton",
                "acp",
                env=server_env(home, llm_env, env),
                cwd=str(workspace),
                observers=[client.observe],
                # `elicitation/create` is in ACP's unstable part: the editor opts in.
                **({"use_unstable_protocol": True} if elicitation else {}),
            )
        )
        client.conn = conn
        if capabilities is not None:
            # Draft capabilities (`session.compaction`) are not in the SDK's models yet:
            # sent as raw JSON, as an editor that supports them would.
            await client.raw(
                "initialize",
                {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities},
            )
        else:
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                    terminal=terminal,
                    elicitation=(
                        ElicitationCapabilities(form=ElicitationFormCapabilities())
                        if elicitation
                        else None
                    ),
                ),
                **(meta or {}),
            )
        return Acp(conn, client, process, workspace)

    yield start
    await stack.aclose()
    # Whatever the test checked, everything the agent sent must be the protocol's shape.
    errors = [e for client in clients for e in client.schema_errors]
    assert not errors, "baton acp sent messages the ACP schema refuses:\n" + "\n".join(errors)
