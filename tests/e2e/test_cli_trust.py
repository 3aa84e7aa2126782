"""`baton trust`, the y/N question of `baton run`, and `baton sessions` in an untrusted repo."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.e2e.test_cli import baton
from tests.e2e.test_trust import marker_plugin, repo_file
from tests.fake_llm import FakeLLM, text
from tests.harness import TEST_KEY, server_env


def record(home: Path) -> dict[str, object]:
    data = json.loads((home / "data" / "baton" / "trust.json").read_text())
    return {key: entry["trusted"] for key, entry in data["workspaces"].items()}


def test_trust_and_revoke_record_the_real_path_outside_the_workspace(
    llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "plugin-imported"
    marker_plugin(workspace, marker)
    listed = baton(["sessions"], workspace, home, llm)
    assert listed.returncode == 0, listed.stderr
    assert not marker.exists(), "baton sessions imported an untrusted workspace's plugin"

    link = tmp_path / "link"
    link.symlink_to(workspace, target_is_directory=True)
    done = baton(["trust", str(link)], tmp_path, home, llm)
    assert done.returncode == 0, done.stderr
    assert record(home) == {str(workspace): True}
    assert not list(workspace.rglob("trust.json")), "the record is never inside the workspace"
    assert baton(["sessions"], workspace, home, llm).returncode == 0
    assert marker.exists(), "trusted from the terminal: its plugin loads"

    marker.unlink()
    revoked = baton(["trust", "--revoke"], workspace, home, llm)
    assert revoked.returncode == 0 and "no longer trusted" in revoked.stdout
    assert record(home) == {str(workspace): False}
    baton(["sessions"], workspace, home, llm)
    assert not marker.exists()


def test_trust_refuses_bad_input_and_changes_nothing(
    llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    missing = baton(["trust", str(tmp_path / "nope")], workspace, home, llm)
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    assert not (home / "data" / "baton" / "trust.json").exists()

    damaged = home / "data" / "baton" / "trust.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text('{"workspaces": {"/x": {"trusted": "yes"}}}')
    refused = baton(["trust"], workspace, home, llm)
    assert refused.returncode == 1 and "nothing was changed" in refused.stderr
    assert damaged.read_text() == '{"workspaces": {"/x": {"trusted": "yes"}}}'


def test_run_without_a_terminal_is_untrusted_and_says_so_in_one_line(
    llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "plugin-imported"
    marker_plugin(workspace, marker)
    repo_file(workspace, ".baton/config.toml", 'apiKeyEnv = "GITHUB_TOKEN"\n')
    llm.add(text("Hello."))
    done = baton(["run", "hi"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello."
    notices = [line for line in done.stderr.splitlines() if "not trusted" in line]
    assert len(notices) == 1 and "baton trust" in notices[0] and "apiKeyEnv" in notices[0]
    assert "[y/N]" not in done.stderr
    assert not marker.exists()
    assert llm.model_requests[-1].api_key == TEST_KEY


def _run_at_a_terminal(workspace: Path, home: Path, llm: FakeLLM, answer: bytes) -> tuple[int, str]:
    """`baton run` with a pseudo-terminal as stdin (so it may ask), answering `answer`."""
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "baton", "run", "hi"],
            cwd=workspace,
            env=env,
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.write(controller, answer)
        _, err = proc.communicate(timeout=60)
    finally:
        os.close(controller)
        os.close(terminal)
    return proc.returncode, err.decode()


def test_run_at_a_terminal_asks_once_listing_what_trust_enables(
    llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "plugin-imported"
    marker_plugin(workspace, marker)
    repo_file(workspace, ".baton/config.toml", '[[hooks.toolAfter]]\ncommand = ["true"]\n')
    llm.add(text("Hello."))
    code, err = _run_at_a_terminal(workspace, home, llm, b"y\n")
    assert code == 0, err
    assert "[y/N]" in err and ".baton/plugins/x.py" in err and "hooks.toolAfter" in err
    assert marker.exists(), "answered y: the plugin loads"
    assert record(home) == {str(workspace): True}

    marker.unlink()
    llm.add(text("Again."))
    code, err = _run_at_a_terminal(workspace, home, llm, b"")
    assert code == 0, err
    assert "[y/N]" not in err, "asked once: the answer is remembered"
    assert marker.exists()


def test_run_at_a_terminal_answer_no_is_remembered(
    llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "plugin-imported"
    marker_plugin(workspace, marker)
    llm.add(text("Hello."))
    code, err = _run_at_a_terminal(workspace, home, llm, b"\n")
    assert code == 0, err
    assert "[y/N]" in err and not marker.exists()
    assert record(home) == {str(workspace): False}
    llm.add(text("Again."))
    code, err = _run_at_a_terminal(workspace, home, llm, b"")
    assert "[y/N]" not in err and not marker.exists()


def _distribution(site: Path, name: str, marker: Path, installed_from: Path | None) -> None:
    """An installed distribution with a `baton.plugins` entry point whose module leaves
    `marker` behind when imported; `installed_from` is its direct_url.json source (as pip
    writes for `pip install -e <folder>`)."""
    (site / f"{name}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
    )
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[baton.plugins]\n{name} = {name}\n")
    if installed_from is not None:
        url = installed_from.resolve().as_uri()
        (info / "direct_url.json").write_text(
            json.dumps({"url": url, "dir_info": {"editable": True}})
        )


def test_entry_point_installed_from_the_workspace_loads_only_once_trusted(
    llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    repo_marker = tmp_path / "repo-entry-point-imported"
    person_marker = tmp_path / "person-entry-point-imported"
    _distribution(site, "repo_plugin", repo_marker, installed_from=workspace)
    _distribution(site, "person_plugin", person_marker, installed_from=None)
    pythonpath = {
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2] / "server"), str(site)])
    }

    listed = baton(["sessions"], workspace, home, llm, extra=pythonpath)
    assert listed.returncode == 0, listed.stderr
    assert not repo_marker.exists(), "an editable install of the untrusted repo was imported"
    assert person_marker.exists(), "the person's own installed plugin still loads"

    assert baton(["trust"], workspace, home, llm).returncode == 0
    assert baton(["sessions"], workspace, home, llm, extra=pythonpath).returncode == 0
    assert repo_marker.exists(), "trusted: the workspace's entry point loads"
