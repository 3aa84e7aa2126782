"""Images attached to a prompt: checked, then stored as parts of its user message.

An image is refused (-32602 naming the field) before anything is stored when it is
over the size limit, is not valid base64, or its bytes are not the type it names; and
all of them when the session's model takes no images (the local model). A stored image
is sent after the prompt's text as an image input part to the providers that take one.
"""

from __future__ import annotations

import base64
import binascii

from baton import protocol as p
from baton.errors import InvalidParams
from baton.store.model import StoredImage

# Decoded bytes per image: what the OpenAI APIs take with room to spare, and what keeps a
# stored session (every request resends it) a reasonable size.
MAX_IMAGE_BYTES = 5 * 1024 * 1024

# Providers whose models take no image input.
NO_IMAGES = frozenset({"local"})

_SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
}


def resolve_images(items: list[p.ImageAttachment], provider: str | None) -> list[StoredImage]:
    """The prompt's images as stored parts; InvalidParams naming the field otherwise."""
    if items and provider in NO_IMAGES:
        raise InvalidParams(
            "params.images: the local model does not take images; choose a model that does "
            "(an OpenAI model, or a vision model on an OpenAI-compatible server) or send "
            "the prompt without them"
        )
    return [_resolve(item, f"params.images.{index}") for index, item in enumerate(items)]


def _resolve(item: p.ImageAttachment, field: str) -> StoredImage:
    data = item.data
    if data.startswith("data:"):
        header, _, data = data.partition(",")
        if header != f"data:{item.mime_type};base64":
            raise InvalidParams(
                f"{field}.data: a data URL must be data:{item.mime_type};base64,… "
                "(the type named in mimeType)"
            )
    # The decoded size is known before decoding: refuse a huge image without holding it twice.
    estimate = len(data) * 3 // 4
    if estimate > MAX_IMAGE_BYTES + 3:
        raise InvalidParams(_too_large(field, estimate))
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParams(f"{field}.data: not valid base64") from None
    if len(raw) > MAX_IMAGE_BYTES:
        raise InvalidParams(_too_large(field, len(raw)))
    if not _looks_like(item.mime_type, raw):
        raise InvalidParams(f"{field}.data: the bytes are not a {item.mime_type} image")
    return StoredImage(
        mime_type=item.mime_type,
        data=base64.b64encode(raw).decode("ascii"),
        size=len(raw),
        name=item.name,
    )


def _too_large(field: str, size: int) -> str:
    return (
        f"{field}: the image is {size / 1024 / 1024:.1f} MiB; images are limited to "
        f"{MAX_IMAGE_BYTES // 1024 // 1024} MiB each"
    )


def _looks_like(mime_type: str, raw: bytes) -> bool:
    if mime_type == "image/webp":
        return raw[:4] == b"RIFF" and raw[8:12] == b"WEBP"
    return raw.startswith(_SIGNATURES.get(mime_type, ()))
