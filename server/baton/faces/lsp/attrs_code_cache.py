"""Start-up: cache the code attrs generates while lsprotocol defines its classes.

Importing `lsprotocol.types` defines ~570 attrs classes, and attrs compiles a
generated `__init__`/`__repr__`/`__eq__`... for each: ~550 calls to `compile`,
about half of the server's time to answer `initialize`. The generated source
and its file name are deterministic, so the compiled code objects can be kept
on disk (like `__pycache__` does for modules) and reused on the next start.

The cache is keyed by the interpreter's bytecode magic and the attrs version;
each entry by a hash of (file name, source); the file starts with a digest of
its content, since damaged code objects could crash the interpreter. A miss
compiles as usual, and a missing, unreadable, foreign-owned or corrupt cache is
simply rebuilt, so the worst case is the uncached start-up. If attrs ever stops calling `compile` by
its module-global name, the cache just sees no calls.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import logging
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any

log = logging.getLogger(__name__)

_FORMAT = 2
_DIGEST_SIZE = 32


def cache_file(cache_dir: Path) -> Path:
    import attr

    magic = importlib.util.MAGIC_NUMBER.hex()
    return cache_dir / f"attrs-code-{_FORMAT}-{magic}-{attr.__version__}.marshal"


def import_lsprotocol(cache_dir: Path | None) -> dict[str, int]:
    """Import `lsprotocol.types` through the cache; return hit/miss counts (for benchmarks)."""
    stats = {"hits": 0, "misses": 0}
    if "lsprotocol.types" in sys.modules or cache_dir is None:
        import lsprotocol.types

        return stats
    import attr._make as attrs_make

    path = cache_file(cache_dir)
    cached = _load(path)
    used: dict[bytes, CodeType] = {}
    compile_ = builtins.compile

    def compile_cached(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or mode != "exec" or not isinstance(source, str):
            return compile_(source, filename, mode, *args, **kwargs)
        key = hashlib.blake2b(f"{filename}\0{source}".encode(), digest_size=16).digest()
        code = cached.get(key)
        if code is None:
            code = compile_(source, filename, mode)
            stats["misses"] += 1
        else:
            stats["hits"] += 1
        used[key] = code
        return code

    attrs_make.compile = compile_cached  # type: ignore[attr-defined]
    try:
        import lsprotocol.types  # noqa: F401
    finally:
        del attrs_make.compile  # type: ignore[attr-defined]
    if stats["misses"]:
        _save(path, used)
    return stats


def _load(path: Path) -> dict[bytes, CodeType]:
    try:
        with path.open("rb") as f:
            info = os.fstat(f.fileno())
            # Code loaded from here runs in the server: only trust a file the user
            # owns and nobody else can write. (Windows reports no such modes; the
            # per-user cache directory's ACL is what protects it there.)
            if os.name == "posix" and (info.st_uid != os.getuid() or info.st_mode & 0o022):
                return {}
            blob = f.read()
        digest, payload = blob[:_DIGEST_SIZE], blob[_DIGEST_SIZE:]
        if hashlib.blake2b(payload, digest_size=_DIGEST_SIZE).digest() != digest:
            return {}
        data = marshal.loads(payload)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, bytes) and isinstance(v, CodeType)}


def _save(path: Path, codes: dict[bytes, CodeType]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".attrs-code-")
        try:
            payload = marshal.dumps(codes)
            with os.fdopen(fd, "wb") as f:
                f.write(hashlib.blake2b(payload, digest_size=_DIGEST_SIZE).digest() + payload)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:  # a read-only or full disk only costs the next start-up time
        log.debug("attrs code cache not written: %s", exc)
