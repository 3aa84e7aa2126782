"""An MCP tool result as the text the model reads.

Text blocks are passed through as they are; embedded text resources too,
under their URI. Images and audio are not forwarded to the model: tool
outputs are text for every provider Baton speaks (the Chat Completions API
has no images in tool messages), so each becomes a one-line note with its
MIME type and size, and the model can tell the person what it received.
Resource links are listed by URI. When a result has no content blocks but
structured content, that is given as JSON.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.types import CallToolResult

EMPTY = "(the tool returned no output)"


def render_result(result: CallToolResult) -> tuple[str, bool]:
    """(output text, is_error)."""
    from mcp import types

    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent):
            parts.append(f"[image: {block.mime_type}, {_size(block.data)}; not shown to the model]")
        elif isinstance(block, types.AudioContent):
            parts.append(
                f"[audio: {block.mime_type}, {_size(block.data)}; not played to the model]"
            )
        elif isinstance(block, types.ResourceLink):
            label = f" ({block.name})" if block.name and block.name != str(block.uri) else ""
            parts.append(f"[resource link: {block.uri}{label}]")
        elif isinstance(block, types.EmbeddedResource):
            parts.append(_embedded(block.resource))
        else:  # a content type newer than this code
            kind = getattr(block, "type", "unknown")  # type: ignore[unreachable]
            parts.append(f"[{kind} content not shown to the model]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    return "\n".join(parts) or EMPTY, bool(result.is_error)


def _embedded(resource: Any) -> str:
    from mcp import types

    uri = str(getattr(resource, "uri", "?"))
    if isinstance(resource, types.TextResourceContents):
        return f"[resource {uri}]\n{resource.text}"
    mime = getattr(resource, "mime_type", None) or "application/octet-stream"
    blob = getattr(resource, "blob", "")
    return f"[resource {uri}: {mime}, {_size(blob)}; not shown to the model]"


def _size(data: str) -> str:
    try:
        count = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        count = len(data)
    return f"{count:,} bytes"
