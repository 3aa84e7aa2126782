"""Images attached to a prompt, through the real server process: stored with the prompt,
sent to the model as an image input part (Responses `input_image`, Chat `image_url`),
refused with a clear error (and nothing stored) when too large, malformed, or for the
local model, which takes no images."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text
from tests.harness import BatonClient

# A 1×1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)
PNG_B64 = base64.b64encode(PNG).decode()
LIMIT = 5 * 1024 * 1024


def image(data: str = PNG_B64, mime: str = "image/png", name: str = "shot.png") -> dict[str, Any]:
    return {"mimeType": mime, "data": data, "name": name}


@pytest.mark.asyncio
async def test_an_image_reaches_the_responses_request_as_an_input_image_and_is_stored(
    baton: BatonClient, llm: FakeLLM
) -> None:
    llm.add(text("A single pixel."))
    llm.add(text("Still one pixel."))
    sid = await baton.new_session()
    result = await baton.prompt(sid, "What is in this picture?", images=[image()])
    assert result["stopReason"] == "end_turn", result

    user = [m for m in llm.model_requests[0]["input"] if m.get("role") == "user"][-1]
    assert user["content"][-2] == {"type": "input_text", "text": "What is in this picture?"}
    assert user["content"][-1] == {
        "type": "input_image",
        "image_url": f"data:image/png;base64,{PNG_B64}",
    }

    loaded = await baton.load(sid)
    prompt = loaded["messages"][0]
    assert prompt["parts"][1] == {
        "type": "image",
        "mimeType": "image/png",
        "name": "shot.png",
        "bytes": len(PNG),
    }
    # Stored with the prompt: the next request still shows it, once.
    await baton.prompt(sid, "And now?")
    later = str(llm.model_requests[1]["input"])
    assert later.count(PNG_B64) == 1


@pytest.mark.asyncio
async def test_a_data_url_image_reaches_a_chat_request_as_an_image_url_part(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(
        settings={"provider": "openai-compatible", "baseUrl": llm.base_url, "model": "gpt-fake"}
    )
    llm.add(text("A pixel."))
    sid = await baton.new_session()
    url = f"data:image/png;base64,{PNG_B64}"
    result = await baton.prompt(sid, "Describe it", images=[image(url)])
    assert result["stopReason"] == "end_turn", result
    user = [m for m in llm.model_requests[0]["messages"] if m["role"] == "user"][-1]
    assert {"type": "text", "text": "Describe it"} in user["content"]
    assert user["content"][-1] == {"type": "image_url", "image_url": {"url": url}}


@pytest.mark.asyncio
async def test_refused_images_change_nothing(baton: BatonClient, llm: FakeLLM) -> None:
    sid = await baton.new_session()
    over = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * LIMIT).decode()
    refusals = [
        (image(over), "params.images.0: the image is 5.0 MiB; images are limited to 5 MiB"),
        (image("not base64!"), "params.images.0.data: not valid base64"),
        (image(mime="image/jpeg"), "params.images.0.data: the bytes are not a image/jpeg image"),
        (image("data:image/gif;base64," + PNG_B64), "params.images.0.data: a data URL must be"),
    ]
    for item, message in refusals:
        error = await baton.error(
            "baton/session/prompt", {"sessionId": sid, "text": "look", "images": [item]}
        )
        assert error.code == -32602, message
        assert message in error.message, (message, error.message)
    assert (await baton.load(sid))["messages"] == [], "a refused prompt stores nothing"
    assert llm.model_requests == []


@pytest.mark.asyncio
async def test_the_local_model_refuses_images_with_a_clear_message(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"provider": "local"})
    sid = await baton.new_session()
    error = await baton.error(
        "baton/session/prompt", {"sessionId": sid, "text": "look", "images": [image()]}
    )
    assert error.code == -32602
    assert "the local model does not take images" in error.message
    assert (await baton.load(sid))["messages"] == []
    assert llm.model_requests == []
