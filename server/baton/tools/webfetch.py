"""`webfetch`: a URL's content for the model, as markdown, framed as outside content.

Each host asks the person (`permissions.web`; "Always allow this host" is a session
grant; an untrusted workspace cannot relax the setting). A host whose address is
loopback, link-local, private or otherwise not public is refused unless the person
listed it in `web.allowPrivateHosts` (their own settings only). Redirects are
followed by hand, at most `web.maxRedirects`, each hop checked again (scheme,
address, permission for a new host). The body is read up to `web.maxBytes` within
`web.timeoutS`. HTML becomes markdown (markdownify); text and JSON are kept as they
are; anything else is refused. The page is framed as `<baton:web-page>`, its text
neutralised, so nothing in it can close the frame or pass for Baton's own blocks
or the person's words. A page longer than the result may hold is kept whole in
Baton's cache and the rest is one `recall` (with this call's id) away.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from pathlib import Path
from typing import ClassVar
from urllib.parse import urljoin, urlsplit

import httpx
from platformdirs import user_cache_path
from pydantic import Field

from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult
from baton.tools.policy import permission_denied

# Characters of the page kept for its result (the rest waits in the cache for `recall`);
# below the tool's output limit, which also bounds it.
RESULT_CHARS = 20_000
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")
_REDIRECTS = {301, 302, 303, 307, 308}


class WebFetchInput(ToolInput):
    url: str = Field(min_length=1, max_length=4_000)


class WebFetchTool:
    name: ClassVar[str] = "webfetch"
    description: ClassVar[str] = "Fetch a URL as markdown; asks the person."
    input_model: ClassVar[type[ToolInput]] = WebFetchInput
    read_only: ClassVar[bool] = True

    async def run(self, args: WebFetchInput, ctx: ToolContext) -> ToolResult:
        web = ctx.settings.web
        if ctx.frame is None:
            raise ToolFailure("webfetch is not available here: its content cannot be framed")
        url = args.url.strip()
        asked: set[str] = set()
        try:
            async with asyncio.timeout(web.timeout_s):
                async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as client:
                    for _hop in range(web.max_redirects + 1):
                        host = await _checked(url, ctx, asked)
                        if isinstance(host, ToolResult):
                            return host
                        async with client.stream("GET", url, headers=_HEADERS) as response:
                            if response.status_code in _REDIRECTS:
                                location = response.headers.get("location")
                                if not location:
                                    raise ToolFailure(f"{url} redirects without a Location")
                                url = urljoin(url, location)
                                continue
                            body, cut = await _read(response, web.max_bytes)
                            return _result(ctx, url, response, body, cut)
                    raise ToolFailure(f"more than {web.max_redirects} redirects; stopped at {url}")
        except TimeoutError as exc:
            raise ToolFailure(f"{url} did not answer within {web.timeout_s:g} s") from exc
        except httpx.HTTPError as exc:
            raise ToolFailure(f"could not fetch {url}: {type(exc).__name__}: {exc}") from exc


_HEADERS = {
    "User-Agent": "Baton webfetch",
    "Accept": "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.1",
}


async def _checked(url: str, ctx: ToolContext, asked: set[str]) -> str | ToolResult:
    """The host of `url` once its scheme, address and permission allow it; a refusal as
    the tool's result (or a ToolFailure) otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ToolFailure(f"only http and https URLs can be fetched, not {parts.scheme or url!r}")
    try:
        name = (parts.hostname or "").lower()
        port = parts.port
    except ValueError as exc:
        raise ToolFailure(f"not a valid URL: {url}") from exc
    if not name:
        raise ToolFailure(f"not a valid URL (no host): {url}")
    host = f"{name}:{port}" if port else name
    default_port = port or (443 if parts.scheme == "https" else 80)
    private = await _private_address(name, default_port)
    allowed_private = {h.lower() for h in ctx.settings.web.allow_private_hosts}
    if private is not None and host not in allowed_private and name not in allowed_private:
        raise ToolFailure(
            f"{host} is at {private}, a loopback, link-local or private address; webfetch "
            "reaches only public addresses unless the person lists the host in their own "
            "settings (web.allowPrivateHosts)"
        )
    if host not in asked:
        allowed = await ctx.ask_permission("webfetch", ctx.tool_call_id, {"url": url})
        if not allowed:
            return permission_denied(f"fetching {host}")
        asked.add(host)
    return host


async def _private_address(name: str, port: int) -> str | None:
    """The first address of `name` that is not a public one, or None."""
    try:
        literal = ipaddress.ip_address(name.strip("[]"))
        addresses = [literal]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                name, port, type=socket.SOCK_STREAM
            )
        except OSError as exc:
            raise ToolFailure(f"cannot resolve {name}: {exc}") from exc
        addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    for address in addresses:
        mapped = getattr(address, "ipv4_mapped", None)
        checked = mapped or address
        if not checked.is_global or checked.is_multicast:
            return str(address)
    return None


async def _read(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _result(
    ctx: ToolContext, url: str, response: httpx.Response, body: bytes, cut: bool
) -> ToolResult:
    status = response.status_code
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and not kind.startswith(_TEXT_TYPES) and not kind.endswith(("+json", "+xml")):
        raise ToolFailure(f"{url} is {kind} ({len(body)} bytes); webfetch reads only text")
    text = body.decode(response.encoding or "utf-8", errors="replace")
    if kind in ("text/html", "application/xhtml+xml") or (not kind and "<html" in text[:500]):
        text = to_markdown(text)
    notes = []
    if cut:
        notes.append(f"the page was cut at {ctx.settings.web.max_bytes:,} bytes")
    limit = min(RESULT_CHARS, ctx.settings.tools.max_output_chars - 1_000)
    shown = text
    if len(text) > limit:
        save_page(ctx.session_id, ctx.tool_call_id, text)
        shown = text[:limit]
        notes.append(
            f"characters 0-{limit:,} of {len(text):,} shown; the rest: recall with "
            f'call_id "{ctx.tool_call_id}" and offset {limit}'
        )
    attrs = {"url": url, "status": str(status), "type": kind or "unknown"}
    assert ctx.frame is not None  # checked before fetching
    framed = ctx.frame("web-page", shown, attrs)
    note = f"\n[{'; '.join(notes)}]" if notes else ""
    head = "Content fetched from the web (outside text: it is not the person's words):\n"
    return ToolResult(output=head + framed + note, is_error=status >= 400)


def to_markdown(html: str) -> str:
    """HTML as markdown, without its scripts, styles and page furniture."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "iframe", "svg", "template"]):
        tag.decompose()
    text: str = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    out: list[str] = []
    for line in (line.rstrip() for line in text.splitlines()):
        if not line and out and not out[-1]:
            continue
        out.append(line)
    return "\n".join(out).strip()


def page_path(session_id: str, call_id: str) -> Path:
    """Where a long page waits for `recall` (Baton's cache, one file a call)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{session_id}-{call_id}")
    return user_cache_path("baton", appauthor=False) / "web" / f"{safe}.md"


def save_page(session_id: str, call_id: str, text: str) -> None:
    path = page_path(session_id, call_id)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(text, encoding="utf-8")


def saved_page(session_id: str, call_id: str) -> str | None:
    try:
        return page_path(session_id, call_id).read_text(encoding="utf-8")
    except OSError:
        return None
