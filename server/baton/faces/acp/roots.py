"""An ACP editor's `additionalDirectories` as the directories a session may read."""

from __future__ import annotations

from pathlib import Path

from acp import RequestError

# At most this many additional directories a session (each is a root `read` may use).
MAX_READ_ROOTS = 32


def read_roots(workspace: Path, directories: list[str] | None) -> tuple[Path, ...]:
    """An editor's `additionalDirectories` as resolved directories outside the workspace
    (one inside it adds nothing and is left out); -32602 naming a bad one."""
    if not directories:
        return ()
    if len(directories) > MAX_READ_ROOTS:
        raise RequestError.invalid_params(
            {"additionalDirectories": f"at most {MAX_READ_ROOTS} directories"}
        )
    roots: list[Path] = []
    for index, raw in enumerate(directories):
        path = Path(raw)
        if not path.is_absolute() or not path.is_dir():
            raise RequestError.invalid_params(
                {f"additionalDirectories.{index}": f"not an absolute directory: {raw!r}"}
            )
        real = path.resolve()
        if real == workspace or workspace in real.parents or real in roots:
            continue
        roots.append(real)
    return tuple(roots)
