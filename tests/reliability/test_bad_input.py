"""Bad input never takes Baton down: a fuzzer over the JSON-RPC surface of the real server.

Hypothesis generates messages that must all fail (malformed framing, bad
`Content-Length`, invalid UTF-8, malformed JSON, non-objects, bad envelopes,
wrong types, missing and extra fields, huge strings, unknown methods, unknown
sessions, notifications with ids, responses to nothing) and sends them as raw
bytes to one server process. For each, the suite checks what a client may rely
on: the server is still up, a request gets a well-formed JSON-RPC error for its
id (or `id: null` when its id could not be read) whose message says what was
wrong, a notification or a response gets no answer, and a request that
follows a framing error is still answered (the server finds the next frame).
The store is snapshotted through `baton/session/list`/`load` and friends
before and during the run: none of this may change it.

CI sends about 1,000 messages; `BATON_RELIABILITY_FULL=1` sends 10,000.
"""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from bench.rpc import isolated_env
from hypothesis import HealthCheck, assume, given, seed, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic.fields import FieldInfo

from baton import protocol as p
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import TEST_KEY
from tests.reliability.conftest import FULL, SEED, RecordFigures, size
from tests.reliability.store_check import db_path
from tests.reliability.wire import ServerGone, WireServer

MESSAGES = size(1000, 10000)
SNAPSHOT_EVERY = size(250, 1000)
SUMMARY = "\n\n".join(
    f"## {name}\nnone" for name in ("Goals", "Decisions", "Progress", "Next steps")
)

# --------------------------------------------------------------------------- expectations


@dataclass
class Case:
    """Bytes to send and what the server must do with them."""

    family: str
    data: bytes
    # The id of a request that must get an error (None: nothing may answer).
    expect_id: str | int | None = None
    # A probe request sent right after `data` that must be answered (framing recovery).
    probe_id: str | None = None
    # A field or phrase the error message must mention to be useful.
    mention: str | None = None
    codes: tuple[int, ...] = ()
    # Errors with `id: null` are the right answer (unparseable input).
    null_errors_ok: bool = False
    # A request inside broken framing: it may be answered (the frame was readable) or not.
    maybe_id: str | None = None


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def dumps(message: Any) -> bytes:
    return json.dumps(message).encode()


_ids = itertools.count(1)


def fresh_id() -> str:
    return f"fz-{next(_ids):09d}"


# --------------------------------------------------------------------------- strategies

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
# Never valid for a scalar field, whatever pydantic's lax mode coerces.
wrong_for_scalar = st.lists(scalars, max_size=3) | st.dictionaries(
    st.text(max_size=6), scalars, max_size=3
)
bad_ids = st.one_of(
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    st.lists(scalars, max_size=2),
    st.dictionaries(st.text(max_size=5), scalars, max_size=2),
)
unknown_session_ids = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=40
).map(lambda s: f"ses_fuzz_{s}")


@dataclass
class World:
    """What exists in the store, so a fuzz case can aim at a real session."""

    sessions: list[str] = field(default_factory=list)
    compactions: list[str] = field(default_factory=list)


def valid_value(name: str, info: FieldInfo, world: World, rnd: random.Random) -> Any:
    """A plausible value for a params field (the case's mutation makes the whole invalid)."""
    alias = info.alias or name
    if alias == "sessionId":
        return rnd.choice(world.sessions)
    if alias == "compactionId":
        return rnd.choice(world.compactions or ["cmp_none"])
    if alias in ("mode",):
        return "build"
    if alias == "provider":
        return "openai"
    if alias in ("baseVersion", "version"):
        return 1
    if alias == "start":
        return False
    if alias == "strategy":
        return "native"
    return "fuzz text"


def param_fields(method: str) -> dict[str, FieldInfo]:
    return dict(p.METHODS[method].params.model_fields)


def alias_of(name: str, info: FieldInfo) -> str:
    return info.alias or name


# Every Baton method, read from the protocol so methods added later are fuzzed too.
BATON_METHODS = sorted(p.METHODS)


@st.composite
def method_call(draw: st.DrawFn, world: World) -> Case:
    """A Baton method with one mutation that makes it invalid (so nothing may change)."""
    method = draw(st.sampled_from(BATON_METHODS))
    fields = param_fields(method)
    rnd = random.Random(draw(st.integers(0, 2**32)))
    params: dict[str, Any] = {
        alias_of(n, f): valid_value(n, f, world, rnd) for n, f in fields.items() if f.is_required()
    }
    required = [alias_of(n, f) for n, f in fields.items() if f.is_required()]
    scalar_fields = [alias_of(n, f) for n, f in fields.items()]
    choices = ["extra", "not_object"]
    if required:
        choices.append("missing")
    if scalar_fields:
        choices += ["wrong_type", "huge"]
    if "sessionId" in required:
        choices.append("unknown_session")
    mutation = draw(st.sampled_from(choices))
    msg_id: str | int = fresh_id() if draw(st.booleans()) else 10**9 + next(_ids)
    mention: str | None = None
    codes: tuple[int, ...] = (-32602,)
    raw_params: Any = params
    if mutation == "extra":
        name = "xFuzz" + draw(
            st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8)
        )
        params[name] = draw(json_values)
        mention = name
    elif mutation == "missing":
        name = draw(st.sampled_from(required))
        del params[name]
        mention = name
    elif mutation == "wrong_type":
        name = draw(st.sampled_from(scalar_fields))
        params[name] = draw(wrong_for_scalar)
        mention = name
    elif mutation == "huge":
        # Longer than any field accepts (the largest limit is plan content, 2,000,000).
        name = draw(st.sampled_from(scalar_fields))
        params[name] = "x" * 2_000_001
        mention = name
    elif mutation == "unknown_session":
        params["sessionId"] = draw(unknown_session_ids)
        codes = (-32001,)
        mention = "session not found"
    else:
        raw_params = draw(
            st.lists(scalars, max_size=3) | st.integers() | st.text(max_size=10) | st.booleans()
        )
        mention = "params"
    if mutation != "unknown_session":
        # The protocol grows (other fields may take lists or objects): a mutation that
        # happens to be valid would run for real and change the store. Only invalid
        # params are sent.
        assume(not _valid(p.METHODS[method].params, raw_params))
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": raw_params}
    return Case(f"method:{mutation}", frame(dumps(message)), msg_id, mention=mention, codes=codes)


def _valid(model: type[p.WireModel], raw: Any) -> bool:
    if not isinstance(raw, dict):
        return False
    try:
        model.model_validate(raw)
    except ValidationError:
        return False
    return True


# Methods something answers (Baton's, and what pygls serves for every language server).
SERVED = frozenset(p.METHODS) | frozenset(p.CLIENT_NOTIFICATIONS)


def served(method: str) -> bool:
    return method in SERVED or method.startswith(
        (
            "initialize",
            "shutdown",
            "exit",
            "$/",
            "textDocument/did",
            "notebookDocument/",
            "workspace/",
            "window/",
        )
    )


@st.composite
def unknown_method(draw: st.DrawFn) -> Case:
    """A request for a method nobody serves: -32601, whatever its params."""
    method = draw(
        st.sampled_from(
            ["baton/session/remove", "textDocument/hover", "textDocument/completion", "custom"]
        )
    )
    if method == "custom":
        method = draw(
            st.text(min_size=1, max_size=30)
            | st.text(alphabet="abcdefghijklmnopqrstuvwxyz/", min_size=1, max_size=20).map(
                lambda s: "baton/" + s
            )
        )
        if served(method):
            method = "baton/unknown"
    msg_id = fresh_id()
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if draw(st.booleans()):
        message["params"] = draw(json_values)
    return Case("unknown_method", frame(dumps(message)), msg_id, codes=(-32601,))


@st.composite
def bad_envelope(draw: st.DrawFn) -> Case:
    kind = draw(st.sampled_from(["id", "jsonrpc", "method", "no_jsonrpc"]))
    if kind == "id":
        message = {
            "jsonrpc": "2.0",
            "id": draw(bad_ids),
            "method": "baton/session/list",
            "params": {},
        }
        return Case("envelope:id", frame(dumps(message)), null_errors_ok=True, codes=(-32600,))
    msg_id = fresh_id()
    if kind == "jsonrpc":
        version = draw(st.sampled_from(["1.0", "2", 2.0, None, "", []]))
        message = {"jsonrpc": version, "id": msg_id, "method": "baton/session/list"}
        return Case(
            "envelope:jsonrpc", frame(dumps(message)), msg_id, codes=(-32600,), mention="jsonrpc"
        )
    if kind == "no_jsonrpc":
        message = {"id": msg_id, "method": "baton/session/list", "params": {}}
        return Case(
            "envelope:no_jsonrpc", frame(dumps(message)), msg_id, codes=(-32600,), mention="jsonrpc"
        )
    method = draw(st.sampled_from([None, 5, "", [], {"a": 1}, True]))
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}}
    return Case("envelope:method", frame(dumps(message)), msg_id, codes=(-32600,), mention="method")


@st.composite
def not_json(draw: st.DrawFn) -> Case:
    kind = draw(st.sampled_from(["bytes", "truncated", "utf8", "deep", "empty_object_junk"]))
    valid = dumps(
        {"jsonrpc": "2.0", "id": fresh_id(), "method": "baton/session/list", "params": {}}
    )
    if kind == "bytes":
        body = draw(st.binary(min_size=1, max_size=200)).replace(b"Content-Length", b"C")
        try:
            json.loads(body)
            body = b"{" + body
        except (ValueError, RecursionError):
            pass
    elif kind == "truncated":
        body = valid[: draw(st.integers(1, len(valid) - 1))]
    elif kind == "utf8":
        at = draw(st.integers(1, len(valid) - 2))
        body = (
            valid[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"]))
            + valid[at:]
        )
    elif kind == "deep":
        depth = draw(st.sampled_from([10_000, 100_000]))
        body = (
            b'{"jsonrpc":"2.0","id":"deep","method":"baton/session/list","params":'
            + b"[" * depth
            + b"]" * depth
            + b"}"
        )
        # Too deep to parse: the id cannot be trusted, so the error has id null.
    else:
        body = b"{}" + draw(st.binary(min_size=1, max_size=20)).replace(b"Content-Length", b"C")
    return Case(f"not_json:{kind}", frame(body), null_errors_ok=True, codes=(-32700, -32600))


@st.composite
def non_object(draw: st.DrawFn) -> Case:
    value = draw(
        st.lists(json_values, max_size=3)
        | st.integers()
        | st.text(max_size=20)
        | st.booleans()
        | st.none()
        | st.just([{"jsonrpc": "2.0", "id": "batch", "method": "baton/session/list"}])
    )
    return Case("non_object", frame(dumps(value)), null_errors_ok=True, codes=(-32600,))


@st.composite
def notification_with_id(draw: st.DrawFn) -> Case:
    method = draw(
        st.sampled_from(["baton/session/cancel", "$/cancelRequest", "initialized", "$/setTrace"])
    )
    params = {
        "baton/session/cancel": {"sessionId": draw(unknown_session_ids)},
        "$/cancelRequest": {"id": "nothing-in-flight"},
        "initialized": {},
        "$/setTrace": {"value": "off"},
    }[method]
    msg_id = fresh_id()
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    return Case(
        "notification_with_id",
        frame(dumps(message)),
        msg_id,
        codes=(-32600,),
        mention="notification",
    )


@st.composite
def notification(draw: st.DrawFn) -> Case:
    """Notifications are never answered, even when wrong."""
    kind = draw(st.sampled_from(["cancel_session", "cancel_request", "unknown", "null_params"]))
    if kind == "cancel_session":
        params: Any = draw(st.fixed_dictionaries({"sessionId": unknown_session_ids}) | json_values)
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "method": "baton/session/cancel",
            "params": params,
        }
    elif kind == "cancel_request":
        params = draw(
            st.fixed_dictionaries({"id": st.text(max_size=10) | st.integers() | bad_ids})
            | json_values
        )
        message = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": params}
    elif kind == "unknown":
        method = draw(st.text(min_size=1, max_size=20))
        message = {
            "jsonrpc": "2.0",
            "method": "baton/unknown" if served(method) else method,
            "params": draw(json_values),
        }
    else:
        message = {
            "jsonrpc": "2.0",
            "method": draw(
                st.sampled_from(
                    [
                        "baton/session/cancel",
                        "$/cancelRequest",
                        "$/setTrace",
                        "textDocument/didOpen",
                    ]
                )
            ),
            "params": None,
        }
    return Case(f"notification:{kind}", frame(dumps(message)))


@st.composite
def response_to_nothing(draw: st.DrawFn) -> Case:
    msg_id = draw(st.text(max_size=10) | st.integers())
    body = draw(
        st.sampled_from(
            [
                {"jsonrpc": "2.0", "id": msg_id, "result": draw(json_values)},
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": 1, "message": "no"}},
                {"jsonrpc": "2.0", "id": msg_id, "error": draw(json_values)},
                {"jsonrpc": "2.0", "id": msg_id},
            ]
        )
    )
    return Case("response_to_nothing", frame(dumps(body)))


@st.composite
def framing(draw: st.DrawFn) -> Case:
    """Broken framing, then a request that must still be answered."""
    kind = draw(
        st.sampled_from(
            [
                "no_length",
                "lowercase",
                "negative",
                "not_a_number",
                "understated",
                "overstated",
                "huge",
                "zero",
                "junk_lines",
                "extra_headers",
                "bare_newlines",
            ]
        )
    )
    body = dumps({"jsonrpc": "2.0", "id": fresh_id(), "method": "baton/session/list", "params": {}})
    if kind == "no_length":
        data = b"Content-Type: application/json\r\n\r\n" + body
    elif kind == "lowercase":
        data = b"content-length: %d\r\n\r\n" % len(body) + body
    elif kind == "negative":
        data = b"Content-Length: -%d\r\n\r\n" % len(body) + body
    elif kind == "not_a_number":
        data = (
            b"Content-Length: "
            + draw(st.sampled_from([b"abc", b"1e3", b"", b"0x10", b"12 34"]))
            + b"\r\n\r\n"
            + body
        )
    elif kind == "understated":
        data = b"Content-Length: %d\r\n\r\n" % draw(st.integers(1, len(body) - 1)) + body
    elif kind == "overstated":
        data = b"Content-Length: %d\r\n\r\n" % (len(body) + draw(st.integers(1, 60))) + body
    elif kind == "huge":
        length = draw(
            st.sampled_from([b"1000000000", b"1000000000000", b"9223372036854775808", b"9" * 5000])
        )
        data = b"Content-Length: " + length + b"\r\n\r\n" + body
    elif kind == "zero":
        data = b"Content-Length: 0\r\n\r\n"
    elif kind == "junk_lines":
        data = draw(st.binary(max_size=300)).replace(b"ontent-", b"") + b"\r\n"
    elif kind == "extra_headers":
        data = (
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nX-Fuzz: 1\r\nContent-Length: %d\r\n\r\n"
            % len(body)
            + body
        )
        # A well-formed frame: its request must be answered like any other.
        msg_id = json.loads(body)["id"]
        return Case("framing:extra_headers", data, msg_id, codes=())
    else:
        data = b"Content-Length: %d\n\n" % len(body) + body
        msg_id = json.loads(body)["id"]
        return Case("framing:bare_newlines", data, msg_id, codes=())
    probe = fresh_id()
    body_id = json.loads(body)["id"]
    return Case(f"framing:{kind}", data, probe_id=probe, null_errors_ok=True, maybe_id=body_id)


def cases(world: World) -> st.SearchStrategy[Case]:
    return st.one_of(
        method_call(world),
        method_call(world),
        method_call(world),
        unknown_method(),
        bad_envelope(),
        not_json(),
        non_object(),
        notification_with_id(),
        notification(),
        response_to_nothing(),
        framing(),
    )


# --------------------------------------------------------------------------- the target


@dataclass
class Tally:
    messages: int = 0
    probes: int = 0
    crashes: int = 0
    malformed: int = 0
    unanswered: int = 0
    useless: int = 0
    answered_notifications: int = 0
    state_changes: int = 0
    families: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def fail(self, kind: str, case: Case, detail: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.failures) < 20:
            self.failures.append(f"{kind} [{case.family}] {case.data[:160]!r}: {detail}")


class Target:
    """The server under fuzz: restarted (and the crash counted) if it dies."""

    def __init__(self, workspace: Path, env: dict[str, str], log: Path) -> None:
        self.workspace = workspace
        self.env = env
        self.log = log
        self.server = self._start()

    def _start(self) -> WireServer:
        with self.log.open("ab") as stderr:
            server = WireServer(self.workspace, self.env, stderr=stderr)
        server.initialize()
        return server

    def restart(self) -> None:
        self.server.kill()
        self.server = self._start()

    def call(self, method: str, params: Any = None) -> Any:
        reply = self.server.request(method, params)
        if "error" in reply:
            raise AssertionError(f"{method} failed: {reply['error']}")
        return reply["result"]


def well_formed_error(message: dict[str, Any]) -> str | None:
    """Why `message` is not a well-formed JSON-RPC error response (None when it is)."""
    if message.get("jsonrpc") != "2.0":
        return "jsonrpc is not 2.0"
    if "result" in message:
        return "has a result"
    error = message.get("error")
    if not isinstance(error, dict):
        return "no error object"
    if not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
        return "error.code is not an integer"
    if not isinstance(error.get("message"), str) or not error["message"].strip():
        return "error.message is empty"
    msg_id = message.get("id", "absent")
    if msg_id == "absent" or not (msg_id is None or isinstance(msg_id, str | int)):
        return "bad id"
    return None


def check_case(target: Target, case: Case, tally: Tally) -> None:
    server = target.server
    tally.messages += 1
    tally.families[case.family.split(":")[0]] = tally.families.get(case.family.split(":")[0], 0) + 1
    sync = fresh_id()
    try:
        server.send_raw(case.data)
        if case.probe_id is not None:
            tally.probes += 1
            server.send({"jsonrpc": "2.0", "id": case.probe_id, "method": "baton/session/list"})
        server.send({"jsonrpc": "2.0", "id": sync, "method": "baton/session/list"})
        replies: list[dict[str, Any]] = []
        while True:
            reply = server.read(timeout=5)
            if "method" in reply:
                continue  # a server notification (none are expected here)
            if reply.get("id") == sync:
                break
            replies.append(reply)
    except ServerGone as exc:
        tally.fail("crashes" if not server.alive else "unanswered", case, str(exc))
        target.restart()
        return

    expected = {case.expect_id, case.probe_id} - {None}
    for reply in replies:
        msg_id = reply.get("id")
        if (msg_id is not None and msg_id == case.probe_id) or (
            msg_id == case.expect_id and not case.codes
        ):
            # A well-formed request (after broken framing, or in an odd frame): any answer.
            expected.discard(msg_id)
            continue
        if msg_id is not None and msg_id == case.maybe_id:
            continue
        problem = well_formed_error(reply)
        if problem:
            tally.fail("malformed", case, f"{problem}: {reply}")
            continue
        if msg_id is None:
            if not case.null_errors_ok:
                tally.fail("malformed", case, f"unexpected error with id null: {reply}")
            continue
        if msg_id != case.expect_id:
            kind = "answered_notifications" if case.expect_id is None else "malformed"
            tally.fail(kind, case, f"reply for an id nobody sent: {reply}")
            continue
        expected.discard(msg_id)
        if not case.codes:
            continue  # a well-formed frame: any answer is fine
        error = reply["error"]
        if error["code"] not in case.codes:
            tally.fail("useless", case, f"code {error['code']} (expected {case.codes}): {error}")
        elif case.mention and case.mention.lower() not in error["message"].lower():
            tally.fail("useless", case, f"message does not mention {case.mention!r}: {error}")
    if case.expect_id is None and case.probe_id is None and not case.null_errors_ok:
        stray = [r for r in replies if r.get("id") is None]
        if stray:
            tally.fail("answered_notifications", case, f"{stray}")
    for missing in expected:
        tally.fail("unanswered", case, f"no reply for id {missing!r}")
    if server.bad_frames:
        tally.fail("malformed", case, f"server framing: {server.bad_frames}")
        server.bad_frames.clear()


# --------------------------------------------------------------------------- state


def seed_state(target: Target, llm: FakeLLM, world: World) -> None:
    """A store worth protecting: sessions with history, a plan and a compaction."""
    plan_sid = target.call("baton/session/new", {"title": "with a plan"})["sessionId"]
    llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] one\n- [ ] two\n"}))
    llm.add(text("Plan written."))
    assert (
        target.call("baton/session/prompt", {"sessionId": plan_sid, "text": "plan it"})[
            "stopReason"
        ]
        == "end_turn"
    )
    llm.add(text(SUMMARY))
    record = target.call("baton/session/compact", {"sessionId": plan_sid})
    world.compactions.append(record["compactionId"])
    other = target.call("baton/session/new", {"mode": "plan"})["sessionId"]
    llm.add(text("Hello there."))
    target.call("baton/session/prompt", {"sessionId": other, "text": "hi"})
    empty = target.call("baton/session/new", {})["sessionId"]
    world.sessions += [plan_sid, other, empty]


def snapshot(target: Target, world: World) -> dict[str, Any]:
    state: dict[str, Any] = {"list": target.call("baton/session/list", {})}
    for sid in world.sessions:
        for method in (
            "baton/session/load",
            "baton/session/compactions",
            "baton/plan/get",
            "baton/plan/history",
            "baton/session/context",
        ):
            state[f"{method} {sid}"] = target.call(method, {"sessionId": sid})
    return state


# --------------------------------------------------------------------------- tests


def test_fuzzed_messages_never_take_the_server_down(
    llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path, record_figures: RecordFigures
) -> None:
    env = isolated_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY})
    target = Target(workspace, env, tmp_path / "server.log")
    world = World()
    tally = Tally()
    try:
        seed_state(target, llm, world)
        before = snapshot(target, world)

        @seed(SEED)
        @settings(
            max_examples=MESSAGES,
            deadline=None,
            database=None,
            derandomize=not FULL,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=cases(world))
        def run(case: Case) -> None:
            check_case(target, case, tally)
            if tally.messages % SNAPSHOT_EVERY == 0 and snapshot(target, world) != before:
                tally.state_changes += 1

        run()
        after = snapshot(target, world)
        if after != before:
            tally.state_changes += 1
        # Still fully usable: a real turn after all of it.
        llm.add(text("still here"))
        result = target.call(
            "baton/session/prompt", {"sessionId": world.sessions[2], "text": "ok?"}
        )
        assert result["stopReason"] == "end_turn"
    finally:
        target.server.close()
        record_figures(
            "bad-input",
            messages=tally.messages,
            probes_after_framing_errors=tally.probes,
            crashes=tally.crashes,
            malformed_errors=tally.malformed,
            unanswered=tally.unanswered,
            useless_messages=tally.useless,
            answered_notifications=tally.answered_notifications,
            state_changes=tally.state_changes,
        )
    assert not tally.failures, "\n".join(tally.failures)
    assert tally.state_changes == 0


def test_lifecycle_out_of_order(home: Path, workspace: Path, record_figures: RecordFigures) -> None:
    """Requests before `initialize` and after `shutdown` are refused with clear errors."""
    server = WireServer(workspace, isolated_env(home))
    try:
        early = server.request("baton/session/list", {})
        assert early["error"]["code"] == -32002
        assert "initialize" in early["error"]["message"]
        cancel_early = server.request("baton/session/cancel", {"sessionId": "x"})
        assert well_formed_error(cancel_early) is None
        # A notification before initialize is dropped without an answer.
        server.send(
            {"jsonrpc": "2.0", "method": "baton/session/cancel", "params": {"sessionId": "x"}}
        )
        server.initialize()
        again = server.request(
            "initialize", {"processId": None, "rootUri": None, "capabilities": {}}
        )
        assert again["error"]["code"] == -32600
        assert server.request("baton/session/list", {})["result"] == {"sessions": []}
        assert server.request("shutdown")["result"] is None
        late = server.request("baton/session/list", {})
        assert late["error"]["code"] == -32600 and "shutting down" in late["error"]["message"]
        late_shutdown = server.request("shutdown")
        assert well_formed_error(late_shutdown) is None
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert server.proc.wait(timeout=10) == 0
        assert not server.bad_frames
    finally:
        server.kill()


@pytest.mark.parametrize(
    "damage", ["newer schema", "not a database"], ids=["newer-schema", "garbage-file"]
)
def test_a_store_that_cannot_open_is_reported_on_every_request(
    damage: str, home: Path, workspace: Path
) -> None:
    """A bad store is bad input too: each request says why, the server stays up."""
    path = db_path(workspace)
    path.parent.mkdir(parents=True)
    if damage == "newer schema":
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 999")
        conn.commit()
        conn.close()
        reason = "newer Baton"
    else:
        path.write_bytes(b"this is not an SQLite database\n" * 100)
        reason = "not a database"
    server = WireServer(workspace, isolated_env(home))
    try:
        server.initialize()
        for _ in range(3):
            reply = server.request("baton/session/list", {})
            assert well_formed_error(reply) is None
            assert reason in reply["error"]["message"], reply
        assert server.alive
    finally:
        server.kill()
