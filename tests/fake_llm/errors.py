"""Error bodies in the shapes real servers send, so Baton's error handling meets the real thing.

OpenAI wraps every error as ``{"error": {"message", "type", "param", "code"}}``; llama.cpp
and vLLM differ, and Baton must recognise context overflow from all of them.
"""

from typing import Any, Literal

from .script import Error, Overflow

Api = Literal["responses", "chat"]

RESPONSES_OVERFLOW_MESSAGE = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)

_DEFAULTS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: (
        "invalid_request_error",
        "unsupported_country_region_territory",
        "Country, region, or territory not supported.",
    ),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model does not exist or you do not have access to it.",
    ),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again in 1s.",
    ),
    500: (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


def openai_error(
    message: str,
    type_: str = "invalid_request_error",
    *,
    code: str | None = None,
    param: str | None = None,
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def default_error_body(status: int) -> dict[str, Any]:
    type_, code, message = _DEFAULTS.get(
        status,
        ("server_error" if status >= 500 else "invalid_request_error", None, f"HTTP {status}"),
    )
    return openai_error(message, type_, code=code)


def scripted_error(err: Error) -> tuple[int, Any, dict[str, str]]:
    """Status, body (dict or str) and headers for an ``error()`` part."""
    body = default_error_body(err.status) if err.body is None else err.body
    return err.status, body, dict(err.headers)


def overflow_error(ov: Overflow, api: Api, tokens: int) -> tuple[int, dict[str, Any]]:
    """The HTTP 400 a server answers when the prompt does not fit its context."""
    shown = max(tokens, ov.window + 1)
    if ov.flavor == "llamacpp":
        return 400, {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": shown,
                "n_ctx": ov.window,
            }
        }
    if ov.flavor == "vllm":
        message = (
            f"This model's maximum context length is {ov.window} tokens. However, you requested "
            f"{shown} tokens in the messages, Please reduce the length of the messages."
        )
        return 400, {
            "error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}
        }
    if api == "responses":
        return 400, openai_error(
            RESPONSES_OVERFLOW_MESSAGE, code="context_length_exceeded", param="input"
        )
    message = (
        f"This model's maximum context length is {ov.window} tokens. However, your messages "
        f"resulted in {shown} tokens. Please reduce the length of the messages."
    )
    return 400, openai_error(message, code="context_length_exceeded", param="messages")


def missing_api_key() -> dict[str, Any]:
    return openai_error(
        "You didn't provide an API key. You need to provide your API key in an Authorization "
        "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
    )


def wrong_api_key(given: str) -> dict[str, Any]:
    masked = given[:3] + "*" * max(0, len(given) - 7) + given[-4:] if len(given) > 8 else "***"
    return openai_error(f"Incorrect API key provided: {masked}.", code="invalid_api_key")


def unparsable_body() -> dict[str, Any]:
    return openai_error("We could not parse the JSON body of your request.")


def not_found(method: str, path: str) -> dict[str, Any]:
    return openai_error(f"Invalid URL ({method} {path})")
