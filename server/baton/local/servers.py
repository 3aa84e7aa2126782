"""OpenAI-compatible model servers already running on this machine (`baton model`).

A person with Ollama, LM Studio, a llama.cpp server or vLLM running has a model
better than the embedded 1.5B one at hand. Each listens on a usual port of
127.0.0.1 and answers `GET /v1/models` with the models it serves; Baton asks
each port once, briefly and at the same time, and offers what answers as the
settings that use it. Only loopback is asked, never through a proxy.
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass

import httpx

# (port, what usually listens there).
KNOWN_PORTS: tuple[tuple[int, str], ...] = (
    (11434, "Ollama"),
    (1234, "LM Studio"),
    (8080, "llama.cpp server"),
    (8000, "vLLM"),
)
# Seconds per port: a server on loopback answers in milliseconds.
PROBE_TIMEOUT = 0.5
HOST = "127.0.0.1"


@dataclass(frozen=True)
class FoundServer:
    port: int
    name: str  # what usually listens on the port ("port N" when nothing is known)
    base_url: str
    models: list[str]


def port_name(port: int) -> str:
    return dict(KNOWN_PORTS).get(port, f"port {port}")


async def probe(client: httpx.AsyncClient, port: int) -> FoundServer | None:
    """The server on `port` when it answers `/v1/models` like an OpenAI-compatible one."""
    base_url = f"http://{HOST}:{port}/v1"
    try:
        response = await client.get(f"{base_url}/models")
        data = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    models = [
        str(entry["id"])
        for entry in data["data"]
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]
    ]
    return FoundServer(port, port_name(port), base_url, models)


async def find_servers(
    ports: list[int] | None = None, timeout: float = PROBE_TIMEOUT
) -> list[FoundServer]:
    """Every OpenAI-compatible server answering on `ports` (default: the usual ones)."""
    wanted = ports if ports is not None else [port for port, _ in KNOWN_PORTS]
    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        found = await asyncio.gather(*(probe(client, port) for port in wanted))
    return [server for server in found if server is not None]


def offer_lines(found: list[FoundServer], ports: list[int]) -> list[str]:
    """What `baton model` says about the servers it found on `ports`: each one with the
    settings that use it (for one run, and for good), or what was asked when none."""
    from baton.config import user_config_file
    from baton.terminal_escape import visible

    if not found:
        asked = ", ".join(f"{port} ({port_name(port)})" for port in ports)
        return [
            f"no OpenAI-compatible server answers GET /v1/models on {HOST} ports {asked};",
            "  start one (e.g. `ollama serve`, LM Studio's local server) to use a bigger model",
        ]
    lines = [f"OpenAI-compatible servers running here (GET /v1/models on {HOST}):"]
    for server in found:
        if not server.models:
            lines.append(f"  {server.name} at {server.base_url}: it lists no model (load one)")
            continue
        shown = ", ".join(visible(m) for m in server.models[:5])
        more = f" and {len(server.models) - 5} more" if len(server.models) > 5 else ""
        lines.append(f"  {server.name} at {server.base_url}: {shown}{more}")
        # A model id is the server's to choose: one that a terminal would not show as it
        # is (a control character) is not offered in a line to paste.
        model = next((m for m in server.models if visible(m) == m), None)
        if model is None:
            lines.append("    its model ids hold control characters: none is offered to paste")
            continue
        # Every value quoted (an assignment's value, so it stays an assignment): pasted, the
        # line runs `baton` and nothing else.
        run = " ".join(
            [
                "BATON_PROVIDER=openai-compatible",
                f"BATON_BASE_URL={shlex.quote(server.base_url)}",
                f"BATON_MODEL={shlex.quote(model)}",
                'baton run "..."',
            ]
        )
        lines += [
            "    use it for one run:",
            f"      {run}",
            f"    or for good, in {visible(str(user_config_file()))}:",
            f"      provider = {toml_string('openai-compatible')}",
            f"      baseUrl = {toml_string(server.base_url)}",
            f"      model = {toml_string(model)}",
        ]
    return lines


def toml_string(value: str) -> str:
    """`value` as a TOML basic string: quotes, backslashes and control characters escaped."""
    out = ['"']
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
