"""Image inputs in provider requests: after the message's text, as each API takes them;
none for llama.cpp; counted in the context estimate."""

from __future__ import annotations

from baton.agent.context import item_tokens
from baton.agent.tokens import IMAGE_TOKENS
from baton.providers.base import ContextBlock, ImageInput, UserText
from baton.providers.openai_chat import to_chat_messages
from baton.providers.openai_responses import to_responses_input

from ._support import identity

IMG = ImageInput(mime_type="image/png", data="AAAA")
URL = "data:image/png;base64,AAAA"


def test_chat_joins_a_context_block_the_text_and_the_image_in_one_user_message() -> None:
    items = [ContextBlock(name="plan", text="the plan"), UserText(text="look", images=(IMG,))]
    [message] = to_chat_messages("", items)
    assert message == {
        "role": "user",
        "content": [
            {"type": "text", "text": "the plan"},
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": URL}},
        ],
    }
    # Text after an image message joins it as a part; without images content stays a string.
    [after] = to_chat_messages("", [*items, UserText(text="more")])
    assert after["content"][-1] == {"type": "text", "text": "more"}
    assert to_chat_messages("", [UserText(text="a"), UserText(text="b")])[0]["content"] == "a\n\nb"


def test_chat_for_a_model_without_images_sends_the_text_only() -> None:
    [message] = to_chat_messages("", [UserText(text="look", images=(IMG,))], images=False)
    assert message == {"role": "user", "content": "look"}


def test_responses_puts_the_image_after_the_text_and_an_image_alone_has_no_empty_text() -> None:
    [with_text] = to_responses_input([UserText(text="look", images=(IMG,))], identity())
    assert with_text["content"] == [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "image_url": URL},
    ]
    [alone] = to_responses_input([UserText(text="", images=(IMG,))], identity())
    assert alone["content"] == [{"type": "input_image", "image_url": URL}]


def test_an_image_counts_in_the_estimate() -> None:
    plain = item_tokens(UserText(text="look"))
    assert item_tokens(UserText(text="look", images=(IMG, IMG))) == plain + 2 * IMAGE_TOKENS
