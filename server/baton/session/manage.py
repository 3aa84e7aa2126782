"""Session management: rename, delete, fork at a message, export to markdown, usage totals.

Decisions (docs/sessions.md):

* **Delete** removes the session's rows, all of them, in one transaction
  (`store.lifecycle.delete_session`): the person asked for it, and a session
  may hold a pasted secret. Plan files stay on disk. A session with a running
  turn or compaction is not deleted (-32002); the client cancels first.
* **Fork** copies the history up to and including a message into a new
  session (copies, not references, so either can be deleted later). The
  compactions made within that history come along with their views, and the
  plan is copied as it was at that point into a new file. The fork's next
  request therefore holds exactly what the source would have sent after that
  message; the one difference is the plan file's path, which the plan block
  names.
* **Export** writes what a person would paste into an issue: prompts,
  answers, tool calls in one line each, compactions marked. Reasoning and
  provider artifacts (encrypted reasoning, compaction windows) are never
  included, and the text passes through the credential redactor.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton import protocol as p
from baton.agent.state import SessionState
from baton.errors import InvalidParams, NotFound, SessionBusy, SessionNotFound
from baton.ids import utc_now
from baton.scrub import Scrubber
from baton.session.usage import usage_totals
from baton.store.lifecycle import ForkSource, copy_history, delete_session
from baton.store.model import StoredMessage, StoredToolCall

if TYPE_CHECKING:
    from baton.plan.service import PlanService
    from baton.session.service import SessionService

FORK_SUFFIX = " (fork)"
# Plan tools whose successful run changes the plan's status.
_STATUS_TOOLS = {"plan_exit", "plan_done", "plan_write", "plan_edit"}
_STATUS_KINDS = {"approval", "feedback"}
BRIEF_CHARS = 160


class SessionManager:
    """The operations behind `baton/session/rename|delete|fork|export`."""

    def __init__(self, sessions: SessionService, plans: PlanService | None = None) -> None:
        self.sessions = sessions
        self.plans = plans

    # ------------------------------------------------------------------ rename / delete

    def rename(self, params: p.SessionRenameParams) -> p.SessionInfo:
        state = self.sessions.state(params.session_id)
        title = " ".join(params.title.split())
        if not title:
            raise InvalidParams("params.title: must not be blank")
        self.sessions.store.update_session(state.id, title=title)
        row = self.sessions.store.get_session(state.id)
        if row is None:  # deleted meanwhile
            raise SessionNotFound(state.id)
        state.row.title = row.title
        state.row.updated_at = row.updated_at
        return row.to_wire()

    def delete(self, session_id: str) -> None:
        state = self.sessions.state(session_id)
        if state.busy or state.compacting:
            raise SessionBusy(state.id)
        # Its `task` children go with it (a child is never left without its parent).
        for child in self.sessions.store.children_of(state.id):
            self.delete(child.id)
        # Never under another process's running turn (the lease row goes with the session).
        with self.sessions.leases.hold(state.id, "delete"):
            delete_session(self.sessions.db, state.id)
        self.sessions.forget(state.id)

    # ------------------------------------------------------------------ fork

    def fork(self, params: p.SessionForkParams) -> p.SessionForkResult:
        source = self.sessions.state(params.session_id)
        index = next((i for i, m in enumerate(source.messages) if m.id == params.message_id), None)
        if index is None:
            raise NotFound(f"message {params.message_id!r} is not in session {params.session_id!r}")
        copied = source.messages[: index + 1]
        later = source.messages[index + 1 :]
        if source.busy and any(_unanswered(m) for m in copied):
            # The message is the step still running; its tool calls have no results yet.
            raise SessionBusy(source.id)
        boundary = later[0].created_at if later else utc_now()
        title = (params.title or "").strip() or (source.row.title + FORK_SUFFIX)

        store = self.sessions.store
        db = self.sessions.db
        plan_path: str | None = None
        with db.transaction() as conn:
            row = store.create_session(title, source.row.mode)
            if source.row.provider or source.row.model:
                store.update_session(row.id, provider=source.row.provider, model=source.row.model)
            copy_history(
                conn,
                ForkSource(source.id, [m.id for m in copied], boundary),
                row.id,
            )
            if self.plans is not None:
                plan_path = self._fork_plan(source, row.id, title, copied, later, boundary)
        state = self.sessions.state(row.id)
        return p.SessionForkResult(
            session_id=state.id,
            title=state.row.title,
            messages=len(state.messages),
            plan_path=plan_path,
        )

    def _fork_plan(
        self,
        source: SessionState,
        target_id: str,
        title: str,
        copied: list[StoredMessage],
        later: list[StoredMessage],
        boundary: str,
    ) -> str | None:
        assert self.plans is not None
        plans = self.plans
        current = plans.store.get(source.id)
        if current is None:
            return None
        # Edits made in the editor since the last operation count as of now.
        plans.sync(source.id)
        current = plans.store.get(source.id) or current
        versions = plans.store.versions(source.id)
        copied_versions = [v for v in versions if v.created_at <= boundary]
        if not copied_versions:
            return None
        unchanged_since = len(copied_versions) == len(versions) and not any(
            _changes_plan_status(m) for m in later
        )
        status = current.status if unchanged_since else _status_at(copied)
        plan = plans.store.fork(
            source.id,
            target_id,
            upto=boundary,
            status=status,
            plans_dir=plans.config.settings().plans.dir,
            hint=title,
        )
        return plan.path if plan else None

    # ------------------------------------------------------------------ export

    def export(self, session_id: str) -> p.SessionExportResult:
        state = self.sessions.state(session_id)
        markdown = render_markdown(self, state)
        markdown = Scrubber(self.sessions.credentials.secrets()).text(markdown)
        return p.SessionExportResult(session_id=state.id, title=state.row.title, markdown=markdown)


# --------------------------------------------------------------------------- fork helpers


def _unanswered(message: StoredMessage) -> bool:
    return not message.answered()


def _succeeded_calls(message: StoredMessage) -> list[str]:
    return [
        str(part.name)
        for part in message.tool_calls()
        if (result := message.results.get(part.tool_call_id)) is not None
        and result.status == "completed"
    ]


def _changes_plan_status(message: StoredMessage) -> bool:
    if message.role == "user":
        return message.kind in _STATUS_KINDS
    return any(name in _STATUS_TOOLS for name in _succeeded_calls(message))


def _status_at(messages: list[StoredMessage]) -> p.PlanStatus:
    """The plan's status after `messages`, replayed from the events that change it
    (the rules of PlanService: a write keeps an approved plan approved, an edit turns a
    plan awaiting approval back into a draft, plan_exit submits it, approval and feedback
    come from the person, plan_done finishes it)."""
    status: p.PlanStatus = "draft"
    for message in messages:
        if message.role == "user":
            if message.kind == "approval":
                status = "approved"
            elif message.kind == "feedback":
                status = "draft"
            continue
        for name in _succeeded_calls(message):
            if name == "plan_exit":
                status = "awaiting_approval"
            elif name == "plan_done":
                status = "done"
            elif name == "plan_write":
                status = "approved" if status == "approved" else "draft"
            elif name == "plan_edit" and status == "awaiting_approval":
                status = "draft"
    return status


# --------------------------------------------------------------------------- export


def render_markdown(manager: SessionManager, state: SessionState) -> str:
    """The session as markdown: a header, then the conversation turn by turn."""
    service = manager.sessions
    lines = [f"# {state.row.title}", ""]
    identity = service.identity_for(state, service.settings())
    model = f"{identity.provider} / {identity.model}" if identity else (state.row.model or "?")
    lines.append(f"- Session `{state.id}`, {state.row.mode} mode, model {model}")
    lines.append(f"- Started {state.row.created_at}, last activity {state.row.updated_at}")
    if manager.plans is not None:
        plan = manager.plans.store.get(state.id)
        latest = manager.plans.store.latest(state.id)
        if plan is not None and latest is not None:
            lines.append(f"- Plan `{plan.path}` ({plan.status}, version {latest.version})")
    usage = usage_totals(state)
    if usage.requests:
        lines.append(
            f"- Tokens: {usage.input_tokens:,} input ({usage.cached_tokens:,} cached), "
            f"{usage.output_tokens:,} output over {usage.requests} requests"
        )
    lines.append("")

    records = _compaction_records(service, state.id)
    speaker: str | None = None
    for message in state.messages:
        block, who = _message_block(message, records)
        if not block:
            continue
        if who != speaker and who in ("You", "Agent"):
            lines += [f"## {who}", ""]
        speaker = who
        lines += [*block, ""]
    return "\n".join(lines).rstrip() + "\n"


def _compaction_records(service: SessionService, session_id: str) -> dict[str, p.CompactionRecord]:
    from baton.store.compactions import CompactionStore

    store = CompactionStore(service.db, service.store)
    return {entry.record.compaction_id: entry.record for entry in store.all(session_id)}


def _message_block(
    message: StoredMessage, records: dict[str, p.CompactionRecord]
) -> tuple[list[str], str]:
    if message.kind == "compaction":
        out: list[str] = []
        for part in message.parts:
            if part.type != "compaction":
                continue
            record = records.get(part.compaction_id)
            out += _compaction_block(record)
        return out, "marker"
    if message.role == "user":
        text = message.text().strip()
        if message.kind == "continue":
            return ["> *Baton asked the agent to continue after compacting the context.*"], "Baton"
        if message.kind == "approval":
            return ["> **Plan approved**, build started."], "You"
        if message.kind == "feedback":
            return ["**Plan feedback:**", "", _quote(text)], "You"
        if message.kind == "pre_compact":
            return [f"> *Pre-compact round:* {_one_line(text)}"], "Baton"
        return ([text] if text else []), "You"
    out = []
    for part in message.parts:
        if part.type == "text" and part.text.strip():
            out += [part.text.strip(), ""]
        elif part.type == "tool_call":
            out.append(_tool_line(message, part))
        elif part.type == "pre_compact":
            out.append(f"> *Pre-compact round by hook `{part.record.hook}`: {part.record.status}*")
        # "reasoning" and "opaque" parts are never exported: reasoning is the model's
        # scratch work, opaque parts are provider artifacts.
    if message.incomplete:
        out.append("*(the response was interrupted)*")
    while out and out[-1] == "":
        out.pop()
    return out, "Agent"


def _compaction_block(record: p.CompactionRecord | None) -> list[str]:
    if record is None:
        return ["---", "", "> **Context compacted.**", "", "---"]
    undone = " (undone later)" if record.undone else ""
    head = (
        f"> **Context compacted**{undone}: {record.trigger}, {record.strategy}, "
        f"{record.tokens_before:,} → {record.tokens_after:,} tokens. The messages above "
        "were summarised for the model; the full history is kept."
    )
    out = ["---", "", head]
    if record.summary:
        out += [
            "",
            "<details><summary>Summary</summary>",
            "",
            record.summary.strip(),
            "",
            "</details>",
        ]
    out += ["", "---"]
    return out


def _tool_line(message: StoredMessage, call: StoredToolCall) -> str:
    name = call.name
    args = call.input
    result = message.results.get(call.tool_call_id)
    subject = _subject(name, args)
    line = f"- `{name}`" + (f" {subject}" if subject else "")
    if result is None:
        return line + " (no result)"
    if name == "bash":
        codes = [f.exit_code for f in result.facts if f.kind == "command"]
        if codes:
            code = codes[-1]
            return line + (f": exit {code}" if code is not None else ": killed or timed out")
    if result.status == "failed":
        return line + f": failed: {_one_line(result.output)}"
    if name.startswith("plan_") or name in ("write", "edit", "read", "glob", "grep"):
        return line
    return line + f": {_one_line(result.output)}"


def _subject(name: str, args: dict[str, Any]) -> str:
    if name == "bash" and isinstance(args.get("command"), str):
        return _code(args["command"])
    for key in ("path", "pattern", "file", "url", "query"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return _code(value)
    if not args or name.startswith("plan_"):
        return ""
    return _code(json.dumps(args, ensure_ascii=False))


def _code(text: str) -> str:
    text = _one_line(text)
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= BRIEF_CHARS else line[: BRIEF_CHARS - 1] + "…"


def _quote(text: str) -> str:
    return "\n".join("> " + line for line in text.splitlines()) or ">"
