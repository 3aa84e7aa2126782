"""Secret-shaped environment variables never reach a command, through the real server.

The server starts with credentials under many kinds of names (AWS, GitHub,
database passwords, private keys, credential files, ...), one name the person
hides through their own settings (`BATON_ENV__SCRUB`) and one secret-shaped
name the person passes on (`env.keep` in their user file). A trusted
workspace's `.baton/config.toml` asks to keep everything. A bash tool call and
a command hook print their environments: every secret is absent, the kept name
and ordinary names are present, and the workspace's attempt is reported as
ignored.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call
from tests.reliability.conftest import RecordFigures

# Name -> value; every value is unique so a leak is found whatever prints it.
SECRETS = {
    name: f"v-{name.lower()}-3f9a"
    for name in (
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "GITHUB_TOKEN",
        "HF_TOKEN",
        "NPM_TOKENS",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MYSQL_PWD",
        "SMTP_PASSWD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AZURE_CREDENTIALS_JSON",
        "SSH_PRIVATE_KEY",
        "DEPLOY_PRIVATE_KEY_PATH",
        "STRIPE_KEY",
        "SIGNING_KEY_B64",
        "CLIENT_SECRET",
        "JWT_SECRETS",
        "SECRET_KEY_BASE",
        "ANTHROPIC_API_KEY",
        "lower_case_token",
        # Hidden by the person's own list (BATON_ENV__SCRUB), not by the built-in one.
        "CORP_VAULT_ADDR",
    )
}
KEPT = {"GH_TOKEN": "v-gh-token-kept-81c2"}
ORDINARY = {"HARMLESS_SETTING": "visible-7d1e", "KEYBOARD_LAYOUT": "dvorak-5e0b"}

ENV_DUMP = "import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w'))"


@pytest.mark.asyncio
async def test_secret_names_never_reach_bash_or_hooks(
    start_baton: StartBaton,
    llm: FakeLLM,
    workspace: Path,
    home: Path,
    tmp_path: Path,
    record_figures: RecordFigures,
) -> None:
    user_file = home / "config" / "baton" / "config.toml"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text('[env]\nkeep = ["GH_TOKEN"]\n')
    (workspace / ".baton").mkdir()
    (workspace / ".baton" / "config.toml").write_text(
        '[env]\nkeep = ["*", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"]\nscrub = []\n'
    )
    hook_env = tmp_path / "hook-env.json"
    hook = {"command": [sys.executable, "-c", ENV_DUMP + "; print('{}')", str(hook_env)]}
    baton = await start_baton(
        settings={"permissions": {"bash": "allow"}, "hooks": {"toolAfter": [hook]}},
        env={**SECRETS, **KEPT, **ORDINARY, "BATON_ENV__SCRUB": '["corp_*"]'},
        trusted=True,
    )
    trust = await baton.request("baton/workspace/trust", {})
    assert any(item.startswith(".baton/config.toml: env (") for item in trust["ignored"]), trust

    sid = await baton.new_session()
    llm.add(tool_call("bash", {"command": "env"}))
    llm.add(text("Listed."))
    result = await baton.prompt(sid, "print the environment")
    assert result["stopReason"] == "end_turn"
    [bash_out] = llm.model_requests[-1].tool_outputs().values()
    hook_vars: dict[str, str] = json.loads(hook_env.read_text())
    hook_out = "\n".join(f"{k}={v}" for k, v in hook_vars.items())

    leaks = [
        f"{name} in {where}"
        for where, shown in (("bash", bash_out), ("hook", hook_out))
        for name, value in SECRETS.items()
        if value in shown or f"{name}=" in shown
    ]
    assert leaks == []
    for where, shown in (("bash", bash_out), ("hook", hook_out)):
        for name, value in {**KEPT, **ORDINARY}.items():
            assert f"{name}={value}" in shown, f"{name} missing in {where}"
    assert hook_vars["BATON_HOOK"] == "tool_after"
    record_figures(
        "env scrub",
        secret_names=len(SECRETS),
        commands=2,
        leaks=len(leaks),
        kept_by_person=len(KEPT),
        workspace_unscrub_ignored=True,
    )
