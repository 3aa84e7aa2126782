"""A first run with only OPENAI_BASE_URL set (issue 50, point 2), through the real server.

No key, no model: the server at the URL lists its models (`baton/models/list`), the
first prompt fails naming the missing model (`cause: model_missing`, not a
configuration riddle), and once a model is chosen for the workspace (the `model`
setting the editor sends) every new session uses it. `baton/models/servers` finds the
servers running on loopback, as `baton model find` does.
"""

from __future__ import annotations

import socket

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_only_a_base_url_lists_its_models_and_a_workspace_model_serves_every_session(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    first = await start_baton(api_key=None)
    listed = await first.request("baton/models/list", {})
    assert listed["provider"] == "openai-compatible"
    assert listed["source"] == "provider"
    assert [m["id"] for m in listed["models"]] == ["gpt-fake", "gpt-fake-mini"]
    assert "current" not in listed  # nothing chosen yet
    sid = await first.new_session()
    failed = await first.prompt(sid, "hello")
    assert (failed["stopReason"], failed["cause"]) == ("error", "model_missing")
    assert llm.model_requests == []

    # The editor writes the chosen model to the workspace's settings and restarts.
    chosen = await start_baton(api_key=None, settings={"model": "gpt-fake-mini"})
    for n in range(2):
        session = await chosen.new_session()
        llm.add(text(f"Hello {n}."))
        result = await chosen.prompt(session, f"hello {n}")
        assert result["stopReason"] == "end_turn", result
        assert llm.model_requests[-1].body["model"] == "gpt-fake-mini"
    assert (await chosen.request("baton/models/list", {}))["current"] == "gpt-fake-mini"


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_running_servers_are_found_on_loopback(start_baton: StartBaton, llm: FakeLLM) -> None:
    baton = await start_baton()
    silent = _free_port()
    found = await baton.request("baton/models/servers", {"ports": [llm.port, silent]})
    assert found["servers"] == [
        {
            "port": llm.port,
            "name": f"port {llm.port}",
            "baseUrl": f"http://127.0.0.1:{llm.port}/v1",
            "models": ["gpt-fake", "gpt-fake-mini"],
        }
    ]
    from pygls.exceptions import JsonRpcException

    with pytest.raises(JsonRpcException) as bad:
        await baton.request("baton/models/servers", {"ports": [0]})
    assert bad.value.code == -32602
