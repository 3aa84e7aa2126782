"""One HTTP attempt against an OpenAI-style endpoint: a POST that streams SSE, or returns JSON.

Error statuses become `ProviderError`s here (see `http_errors`), so the retry
layer above only ever sees `ProviderError` or `httpx.TransportError`. The API
key travels only in the `Authorization` header built by `auth_headers`; it is
never part of a URL, a message or a repr.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, aconnect_sse

from baton.errors import ProviderError
from baton.logs import redact
from baton.providers.base import SURROGATE_ESCAPE, replace_lone_surrogates
from baton.providers.http_errors import error_details, error_from_response


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


async def post_sse(
    client: httpx.AsyncClient,
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    timeout: httpx.Timeout,
    label: str,
) -> AsyncGenerator[ServerSentEvent, None]:
    """POST `body` and yield the server-sent events of a 2xx answer."""
    async with aconnect_sse(
        client, "POST", url, json=body, headers=dict(headers), timeout=timeout
    ) as source:
        response = source.response
        if response.status_code >= 400:
            raw = await response.aread()
            raise error_from_response(response.status_code, raw, response.headers, label=label)
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" not in content_type:
            # A server that ignores `stream: true`, or a proxy's page: say what came instead.
            raw = await response.aread()
            message, _ = error_details(raw)
            raise ProviderError(
                redact(
                    f"{label} did not stream (HTTP {response.status_code}, "
                    f"content-type {content_type or 'missing'}): {message or 'empty body'}"
                ),
                status=response.status_code,
            )
        async for event in source.aiter_sse():
            yield event


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    timeout: httpx.Timeout,
    label: str,
) -> Any:
    """POST `body` and return the decoded JSON of a 2xx answer."""
    response = await client.post(url, json=body, headers=dict(headers), timeout=timeout)
    if response.status_code >= 400:
        raise error_from_response(
            response.status_code, response.content, response.headers, label=label
        )
    try:
        return _loads(response.content.decode("utf-8", "replace"))
    except ValueError:
        message, _ = error_details(response.content)
        raise ProviderError(
            redact(f"{label} answered HTTP {response.status_code} with non-JSON: {message}"),
            status=response.status_code,
        ) from None


def decode_event_data(data: str, *, label: str) -> Any:
    """The JSON payload of one SSE event; a malformed one is the provider's error."""
    try:
        return _loads(data)
    except ValueError:
        snippet = data if len(data) <= 200 else data[:200] + "…"
        raise ProviderError(redact(f"{label} sent an event that is not JSON: {snippet}")) from None


def _loads(data: str) -> Any:
    """`json.loads`, with lone surrogates replaced by U+FFFD.

    JSON allows the escape of half a surrogate pair; Python decodes it to a
    string that cannot be encoded as UTF-8, so one such character in a model's
    answer would make the step impossible to store, count or send again.
    """
    value = json.loads(data)
    if SURROGATE_ESCAPE.search(data):
        value = replace_lone_surrogates(value)
    return value
