"""``FakeLLM``: a real HTTP server on 127.0.0.1 that answers from a script.

The Baton server under test is a separate process, so the fake must be a real socket,
not a mock transport. uvicorn runs in a daemon thread with its own event loop; the
test thread scripts replies and reads recordings through a lock. Startup takes a few
tens of milliseconds and shutdown cuts any stalled stream, so a failing test never
waits on the fake.
"""

import asyncio
import dataclasses
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Self

import uvicorn

from . import chat_api, messages_api, responses_api
from .errors import (
    Api,
    missing_api_key,
    not_found,
    overflow_error,
    scripted_error,
    unparsable_body,
    wrong_api_key,
)
from .prefix import best_shared
from .records import CompactionArtifact, Kind, RecordedRequest, Route, Source, estimate_tokens
from .registry import Registry
from .script import Compaction, Part, Reply, ReplyLike, error, reply, text, to_replies, to_reply
from .transport import (
    Receive,
    Scope,
    Send,
    Signals,
    plan_body,
    plan_stream,
    play,
    quiet_uvicorn_cuts,
    send_json,
    wait_any,
)
from .validate import check_chat_messages, check_responses_input

Handler = Callable[[RecordedRequest], ReplyLike | None]
TokenEstimator = Callable[[Any], int]

DEFAULT_REPLY = reply(text("ok"))
# How many earlier requests' prefixes the fake's prompt cache holds (the newest of the same
# `prompt_cache_key`); a provider's cache also keeps only recent entries.
CACHED_PREFIXES = 64
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}


class _QuickServer(uvicorn.Server):
    """uvicorn polls for exit every 100 ms and sleeps 100 ms more while shutting down.
    A fake starts and stops around every test, so wake on an event and poll finely."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.exit_event = asyncio.Event()

    async def main_loop(self) -> None:
        await self.exit_event.wait()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.config.timeout_graceful_shutdown or 2)
        while (self.server_state.connections or self.server_state.tasks) and loop.time() < deadline:
            await asyncio.sleep(0.005)
        for task in self.server_state.tasks:
            task.cancel()
        for server in self.servers:
            await server.wait_closed()


class FakeLLM:
    """A scripted OpenAI-compatible server. See the package docstring for the API."""

    def __init__(
        self,
        *,
        models: Iterable[str] = ("gpt-fake", "gpt-fake-mini"),
        api_key: str | None = None,
        strict: bool = True,
        auto_compact: bool = True,
        token_estimator: TokenEstimator = estimate_tokens,
    ) -> None:
        self.models = list(models)
        self.api_key = api_key  # when set, requests without this Bearer key get a 401
        self.strict = strict  # reject what OpenAI rejects: unpaired tool calls, unknown artifacts
        self.auto_compact = auto_compact  # honour context_management.compact_threshold
        self.token_estimator = token_estimator
        self.registry = Registry()
        self.anthropic = messages_api.MessagesState(self.registry)
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._queues: dict[str, deque[Reply]] = {"model": deque(), "compact": deque()}
        self._handler: Handler | None = None
        self._requests: list[RecordedRequest] = []
        self.handler_errors: list[Exception] = []
        self._server: _QuickServer | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._signals: Signals | None = None
        self._port = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        """Bind an ephemeral port and serve from a daemon thread; returns once listening."""
        if self._thread is not None:
            return self
        quiet_uvicorn_cuts()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._asgi,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            interface="asgi3",
            proxy_headers=False,
            http="h11",
            ws="none",
            loop="asyncio",
            timeout_graceful_shutdown=2,
        )
        server = _QuickServer(config)
        loop = asyncio.new_event_loop()
        self._server, self._loop, self._signals = server, loop, Signals()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(server.serve(sockets=[sock]))
            finally:
                loop.close()
                sock.close()

        self._thread = threading.Thread(target=run, name=f"fake-llm:{self._port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("fake LLM server failed to start")
            time.sleep(0.002)
        return self

    def stop(self) -> None:
        """Cut open streams, stop uvicorn and join its thread."""
        thread, server, loop, signals = self._thread, self._server, self._loop, self._signals
        if thread is None or server is None or loop is None or signals is None:
            return
        server.should_exit = True
        if not loop.is_closed():
            loop.call_soon_threadsafe(signals.closing.set)
            loop.call_soon_threadsafe(server.exit_event.set)
        thread.join(timeout=10)
        self._thread = self._server = self._loop = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.stop()
        self._raise_handler_error(exc_type)

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        await asyncio.to_thread(self.stop)
        self._raise_handler_error(exc_type)

    def _raise_handler_error(self, exc_type: type[BaseException] | None) -> None:
        """An ``on_request`` handler that crashed is a test bug: fail the test with it."""
        if exc_type is None and self.handler_errors:
            raise RuntimeError("an on_request handler raised") from self.handler_errors[0]

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        """What to put in ``OPENAI_BASE_URL``."""
        return f"{self.url}/v1"

    def env(self, api_key: str | None = None) -> dict[str, str]:
        """Environment for a Baton subprocess pointed at this fake."""
        return {
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": api_key or self.api_key or "sk-fake-test-key",
        }

    # ------------------------------------------------------------------ scripting
    def add(self, *parts: Part | Reply) -> Reply:
        """Queue one reply for the next model request (``/responses`` or ``/chat/completions``)."""
        return self._enqueue("model", parts)

    def add_compact(self, *parts: Part | Reply) -> Reply:
        """Queue one reply for the next compaction request (``/responses/compact`` or a
        ``compaction_trigger``). Without one, compaction requests succeed by default."""
        return self._enqueue("compact", parts)

    def script(self, replies: Iterable[ReplyLike]) -> list[Reply]:
        """Queue several model replies; each entry is a Reply, a part, or a list of parts."""
        built = to_replies(replies)
        with self._lock:
            self._queues["model"].extend(built)
        return built

    def on_request(self, handler: Handler | None) -> None:
        """Answer model requests dynamically once the queue is empty. ``handler`` gets the
        ``RecordedRequest`` (which reads like the JSON body) and returns a reply, or None
        for the default. It runs on the server thread: keep it quick."""
        with self._lock:
            self._handler = handler

    def release(self) -> None:
        """End every current ``stall()`` now (the stream then carries on)."""
        if self._loop is not None and self._signals is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._signals.fire_release)

    def reset(self) -> None:
        """Drop queued replies, the handler, recordings and the artifact log."""
        with self._lock:
            for queue in self._queues.values():
                queue.clear()
            self._handler = None
            self._requests.clear()
            self.handler_errors.clear()
        self.registry.clear_artifacts()

    @property
    def pending(self) -> int:
        """Scripted model replies not consumed yet."""
        with self._lock:
            return len(self._queues["model"])

    # ------------------------------------------------------------------ recordings
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "model"]

    @property
    def compact_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "compact"]

    @property
    def last(self) -> RecordedRequest:
        """The most recent model or compaction request (``GET /models`` ignored)."""
        relevant = [r for r in self.requests if r.kind != "other"]
        if not relevant:
            raise AssertionError("the fake LLM has received no model request")
        return relevant[-1]

    @property
    def unscripted(self) -> list[RecordedRequest]:
        """Model requests answered with the default "ok" because nothing was scripted."""
        return [r for r in self.requests if r.kind == "model" and r.source == "default"]

    def wait_for_requests(
        self, count: int, *, timeout: float = 10.0, kind: Kind | None = "model"
    ) -> list[RecordedRequest]:
        """Block until ``count`` requests (of ``kind``; None = any) have arrived."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                seen = [r for r in self._requests if kind is None or r.kind == kind]
                if len(seen) >= count:
                    return seen
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"fake LLM saw {len(seen)} of {count} {kind or ''} requests")
                self._arrived.wait(left)

    async def wait_for_requests_async(
        self, count: int, *, timeout: float = 10.0, kind: Kind | None = "model"
    ) -> list[RecordedRequest]:
        return await asyncio.to_thread(self.wait_for_requests, count, timeout=timeout, kind=kind)

    # ------------------------------------------------------------------ compaction artifacts
    @property
    def compactions(self) -> list[CompactionArtifact]:
        """Every compaction item handed out, oldest first."""
        return self.registry.snapshot()

    def artifact(self, encrypted_content: str) -> CompactionArtifact | None:
        return self.registry.artifact(encrypted_content)

    def replayed(self, request: RecordedRequest | None = None) -> list[CompactionArtifact]:
        """Artifacts whose items ``request`` (default: the last one) sent back unchanged."""
        request = request or self.last
        found = []
        for item in request.compaction_items():
            artifact = self.registry.artifact(str(item.get("encrypted_content")))
            if artifact is not None and item.get("id", artifact.id) == artifact.id:
                found.append(artifact)
        return found

    def assert_replayed(
        self, artifact: CompactionArtifact | None = None, request: RecordedRequest | None = None
    ) -> None:
        """Assert the request (default: last) replays the artifact (default: newest) byte-for-byte."""
        request = request or self.last
        artifacts = self.compactions
        if artifact is None:
            if not artifacts:
                raise AssertionError("the fake LLM never produced a compaction item")
            artifact = artifacts[-1]
        if artifact not in self.replayed(request):
            sent = [i.get("encrypted_content") for i in request.compaction_items()]
            raise AssertionError(
                f"{request!r} does not replay {artifact.id} ({artifact.encrypted_content}); compaction items sent: {sent}"
            )
        if json.dumps(artifact.encrypted_content).encode() not in request.raw:
            raise AssertionError(
                f"{artifact.id} is not byte-identical in the raw body of {request!r}"
            )

    # ------------------------------------------------------------------ internals
    def _enqueue(self, queue: str, parts: tuple[Part | Reply, ...]) -> Reply:
        built = (
            parts[0]
            if len(parts) == 1 and isinstance(parts[0], Reply)
            else reply(*(p for p in parts if not isinstance(p, Reply)))
        )
        if any(isinstance(p, Reply) for p in parts) and len(parts) > 1:
            raise TypeError("pass either one Reply or parts, not both")
        with self._lock:
            self._queues[queue].append(built)
        return built

    def _next_reply(self, record: RecordedRequest) -> tuple[Reply, Source]:
        with self._lock:
            queue = self._queues["compact" if record.kind == "compact" else "model"]
            if queue:
                return queue.popleft(), "script"
            handler = self._handler
        if record.kind == "model" and handler is not None:
            try:
                answer = handler(record)
            except Exception as exc:  # surfaced again by __exit__, so the test fails loudly
                self.handler_errors.append(exc)
                return reply(error(500, f"fake LLM handler raised {exc!r}")), "handler"
            if answer is not None:
                return to_reply(answer), "handler"
        return (DEFAULT_REPLY if record.kind == "model" else Reply()), "default"

    def _record(self, scope: Scope, raw: bytes) -> RecordedRequest:
        method, path = scope["method"], scope["path"].rstrip("/")
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            headers[key] = (
                f"{headers[key]}, {value.decode('latin-1')}"
                if key in headers
                else value.decode("latin-1")
            )
        route: Route = "unknown"
        kind: Kind = "other"
        if method == "POST" and path == "/v1/responses":
            route, kind = "responses", "model"
        elif method == "POST" and path == "/v1/responses/compact":
            route, kind = "responses.compact", "compact"
        elif method == "POST" and path == "/v1/chat/completions":
            route, kind = "chat.completions", "model"
        elif method == "POST" and path == "/v1/messages":
            route, kind = "messages", "model"
        elif method == "GET" and (path == "/v1/models" or path.startswith("/v1/models/")):
            route = "models"
        with self._arrived:
            record = RecordedRequest(
                len(self._requests), method, path, headers, raw, body, route, kind
            )
            if route == "responses" and record.compaction_trigger:
                record.kind = "compact"
            self._requests.append(record)
            self._arrived.notify_all()
        return record

    async def _asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        record = self._record(scope, b"".join(chunks))

        async def send_recorded(message: dict[str, Any]) -> None:
            # The status is known before the first byte: a client that has read the answer
            # must see it recorded (it would race the end of the body otherwise).
            if message.get("type") == "http.response.start":
                record.status = int(message["status"])
            await send(message)

        status = await self._dispatch(record, receive, send_recorded)
        record.status = status

    async def _dispatch(self, record: RecordedRequest, receive: Receive, send: Send) -> int:
        """Answer one request; returns the HTTP status sent (for the recording)."""
        if record.route == "unknown":
            await send_json(send, 404, not_found(record.method, record.path))
            return 404
        if self.api_key is not None and record.api_key != self.api_key:
            await send_json(
                send, 401, wrong_api_key(record.api_key) if record.api_key else missing_api_key()
            )
            return 401
        if record.route == "models":
            return await self._models(record, send)
        if not isinstance(record.body, dict):
            await send_json(send, 400, unparsable_body())
            return 400
        problem = self._validate(record)
        if problem is not None:
            record.rejected = problem["error"]["message"]
            await send_json(send, 400, problem)
            return 400

        answer, source = self._next_reply(record)
        record.source, record.reply = source, answer
        record.cached_tokens = self._cached_tokens(record)
        signals = self._signals
        assert signals is not None
        if answer.delay:
            await wait_any([signals.closing], answer.delay)
        api: Api = "chat" if record.route == "chat.completions" else "responses"
        if answer.error is not None:
            status, body, headers = scripted_error(answer.error)
            if record.route == "messages" and answer.error.body is None:
                body = messages_api.error_body(status)
            await send_json(send, status, body, headers)
            return status
        if record.route == "messages":
            return await self._messages(record, receive, send, answer)
        if answer.overflow is not None and (
            not answer.overflow.in_stream or api == "chat" or not record.stream
        ):
            status, body = overflow_error(answer.overflow, api, record.tokens)
            await send_json(send, status, body)
            return status

        if record.route == "chat.completions":
            chat = chat_api.render(
                record.body,
                answer,
                self.registry,
                self.token_estimator(record.body),
                record.cached_tokens,
            )
            if record.stream:
                frames = plan_stream(chat.chunks, answer, chat_api.MALFORMED)
                return await self._play(send, receive, SSE_HEADERS, frames, answer)
            return await self._play_json(send, receive, chat.completion, answer)

        context = self._context(record)
        if record.route == "responses.compact":
            return await self._play_json(
                send, receive, responses_api.render_compact(context, answer), answer
            )
        if record.compaction_trigger and not answer.output:
            answer = dataclasses.replace(answer, output=(Compaction(),))
        rendered = responses_api.render(context, answer)
        record.compactions = [
            a for a in self.registry.snapshot() if a.request_index == record.index
        ]
        if record.stream:
            frames = plan_stream(
                [responses_api.sse(e) for e in rendered.events], answer, responses_api.MALFORMED
            )
            return await self._play(send, receive, SSE_HEADERS, frames, answer)
        if rendered.failure is not None:
            failure = rendered.failure
            problem = {
                "error": {
                    "message": failure.message,
                    "type": "server_error",
                    "param": None,
                    "code": failure.code,
                }
            }
            await send_json(send, 500, problem)
            return 500
        return await self._play_json(send, receive, rendered.response, answer)

    async def _messages(
        self, record: RecordedRequest, receive: Receive, send: Send, answer: Reply
    ) -> int:
        body = record.body
        if answer.overflow is not None:
            message = (
                f"prompt is too long: {record.tokens} tokens > {answer.overflow.window} maximum"
            )
            await send_json(send, 400, messages_api.error_body(400, message))
            return 400
        cache, tokens = self.anthropic.cached(body)
        record.cached_tokens = cache.read
        threshold = None
        for edit in (body.get("context_management") or {}).get("edits") or []:
            if isinstance(edit, dict) and edit.get("type") == "compact_20260112":
                trigger = edit.get("trigger") or {}
                threshold = trigger.get("value", 150_000)
        context = messages_api.Context(
            body=body,
            state=self.anthropic,
            cache=cache,
            input_tokens=tokens,
            auto_compact=self.auto_compact and threshold is not None and tokens > threshold,
            on_demand=isinstance(body.get("compaction"), dict),
        )
        if context.on_demand:
            record.kind = "compact"
        rendered = messages_api.render(context, answer)
        record.anthropic_compactions = rendered.compactions
        record.anthropic_usage = dict(rendered.message["usage"])
        if record.stream:
            frames = plan_stream(
                [messages_api.sse(e) for e in rendered.events], answer, messages_api.MALFORMED
            )
            return await self._play(send, receive, SSE_HEADERS, frames, answer)
        if rendered.failure is not None:
            await send_json(send, 529, messages_api.error_body(529, rendered.failure.message))
            return 529
        return await self._play_json(send, receive, rendered.message, answer)

    def _context(self, record: RecordedRequest) -> responses_api.Context:
        tokens = self.token_estimator(record.body)
        threshold = record.compact_threshold
        is_trigger = record.compaction_trigger
        return responses_api.Context(
            body=record.body,
            request_index=record.index,
            registry=self.registry,
            input_tokens=tokens,
            items=[i for i in record.items if i.get("type") != "compaction_trigger"],
            cached_tokens=record.cached_tokens,
            compaction_trigger="standalone"
            if record.route == "responses.compact"
            else "trigger"
            if is_trigger
            else "scripted",
            auto_compact=self.auto_compact
            and not is_trigger
            and threshold is not None
            and tokens > threshold,
        )

    def _cached_tokens(self, record: RecordedRequest) -> int:
        """What a prompt cache would serve: the longest prefix shared with an earlier model
        or compaction request (of the same ``prompt_cache_key`` when both carry one; the
        newest ``CACHED_PREFIXES`` of them), in the fake's token estimate (characters / 4, tool specs not counted)."""
        key = record.get("prompt_cache_key")
        earlier: list[RecordedRequest] = []
        with self._lock:
            # The newest first, and only as many as a cache keeps: comparing against every
            # earlier request made each answer slower as a day went on (the working day's
            # step overhead grew with the number of requests, all of it in the fake).
            for index in range(min(record.index, len(self._requests)) - 1, -1, -1):
                r = self._requests[index]
                if r.kind != "other" and (key is None or r.get("prompt_cache_key") in (None, key)):
                    earlier.append(r)
                    if len(earlier) == CACHED_PREFIXES:
                        break
        best = best_shared([r.segments for r in earlier], record.segments)
        return min(best.without_tools // 4, self.token_estimator(record.body))

    def _validate(self, record: RecordedRequest) -> dict[str, Any] | None:
        if not self.strict:
            return None
        if record.route == "messages":
            return self.anthropic.check(record.body)
        if record.route == "chat.completions":
            return check_chat_messages(record.items)
        if record.route == "responses.compact":
            return check_responses_input(
                record.items, chained=True, is_known=self.registry.is_known
            )
        chained = record.get("previous_response_id") is not None
        return check_responses_input(record.items, chained=chained, is_known=self.registry.is_known)

    async def _models(self, record: RecordedRequest, send: Send) -> int:
        listed = [
            {"id": m, "object": "model", "created": 1700000000, "owned_by": "fake-llm"}
            for m in self.models
        ]
        if record.path == "/v1/models":
            await send_json(send, 200, {"object": "list", "data": listed})
            return 200
        wanted = record.path.removeprefix("/v1/models/")
        match = next((m for m in listed if m["id"] == wanted), None)
        if match is None:
            await send_json(
                send,
                404,
                {
                    "error": {
                        "message": f"The model '{wanted}' does not exist",
                        "type": "invalid_request_error",
                        "param": "model",
                        "code": "model_not_found",
                    }
                },
            )
            return 404
        await send_json(send, 200, match)
        return 200

    async def _play(
        self,
        send: Send,
        receive: Receive,
        headers: dict[str, str],
        frames: list[Any],
        answer: Reply,
    ) -> int:
        signals = self._signals
        assert signals is not None
        all_headers = {**headers, "x-request-id": self.registry.new_id("req")}
        await play(
            send,
            receive,
            status=200,
            headers=all_headers,
            frames=frames,
            signals=signals,
            pace=answer.pace,
        )
        return 200

    async def _play_json(
        self, send: Send, receive: Receive, payload: dict[str, Any], answer: Reply
    ) -> int:
        """A JSON body, with faults: a cut keeps the full Content-Length but sends half."""
        body = json.dumps(payload).encode()
        frames = plan_body(body, answer)
        sent = sum(len(f) for f in frames if isinstance(f, bytes))
        length = len(body) if answer.cut_after is not None else sent
        headers = {"content-type": "application/json", "content-length": str(length)}
        return await self._play(send, receive, headers, frames, answer)
