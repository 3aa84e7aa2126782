"""What an ACP prompt's content blocks become for the core: its text, the editor context
it attaches, its images; and Baton's note for a link outside the workspace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from acp import RequestError
from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from pydantic import ValidationError

from baton import protocol as p
from baton.tools.base import ToolFailure
from baton.tools.sandbox import resolve_in_workspace


@dataclass
class PromptParts:
    text: str
    context: list[p.ContextAttachment]
    images: list[p.ImageAttachment]


def prompt_parts(blocks: list[Any], workspace: Path, roots: tuple[Path, ...] = ()) -> PromptParts:
    """The prompt's text, its resources as the editor context the core attaches, and its
    images. A link to a file outside the workspace is not read: the model is told of it
    as a link it cannot open."""
    texts: list[str] = []
    context: list[p.ContextAttachment] = []
    images: list[p.ImageAttachment] = []
    for index, block in enumerate(blocks):
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            if _outside(workspace, block.uri):
                texts.append(outside_link(block.uri, block.name, _readable_in(roots, block.uri)))
            else:
                context.append(p.ContextAttachment(uri=block.uri))
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            context.append(p.ContextAttachment(uri=block.resource.uri, text=block.resource.text))
        elif isinstance(block, ImageContentBlock):
            try:
                images.append(
                    p.ImageAttachment.model_validate(
                        {"mimeType": block.mime_type, "data": block.data}
                    )
                )
            except ValidationError as exc:
                raise RequestError.invalid_params(
                    {f"prompt.{index}": f"an image Baton cannot take: {exc.errors()[0]['msg']}"}
                ) from None
        else:
            raise RequestError.invalid_params(
                {f"prompt.{index}": f"{getattr(block, 'type', 'this')} content is not supported"}
            )
    text = "\n".join(texts)
    if not text.strip():
        raise RequestError.invalid_params({"prompt": "a prompt needs some text"})
    return PromptParts(text, context, images)


def _outside(workspace: Path, uri: str) -> bool:
    """A `file:` link (or a plain path) that resolves outside the workspace."""
    parsed = urlsplit(uri)
    if parsed.scheme not in ("", "file") or (len(uri) > 2 and uri[1] == ":"):
        return False
    raw = unquote(parsed.path) if parsed.scheme == "file" else uri
    try:
        resolve_in_workspace(workspace, raw)
    except ToolFailure as exc:
        # Only an escape is a link to keep: a missing file inside is still an error.
        return "escapes the workspace" in str(exc)
    return False


def _readable_in(roots: tuple[Path, ...], uri: str) -> Path | None:
    """The file a link names, when it lies in one of the session's additional directories."""
    parsed = urlsplit(uri)
    raw = unquote(parsed.path) if parsed.scheme == "file" else uri
    for root in roots:
        try:
            return resolve_in_workspace(root, raw)
        except ToolFailure:
            continue
    return None


def outside_link(uri: str, name: str | None, readable: Path | None) -> str:
    """Baton's note, in the prompt, of a link outside the workspace: not attached; the
    model may `read` it only when it lies in an additional directory."""
    shown = " ".join(uri.split())[:1000]
    named = f" ({' '.join(name.split())[:200]})" if name and name.strip() else ""
    if readable is not None:
        return (
            f"[Baton: the person linked {shown}{named}; it is in an additional directory "
            f"outside the workspace: read it with read and the path {readable} if you need "
            "it.]"
        )
    return (
        f"[Baton: the person linked {shown}{named}; it is outside the workspace, so you "
        "cannot read it. Ask for what you need.]"
    )
