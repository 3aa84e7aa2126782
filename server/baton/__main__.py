import os
import sys

# `python -m baton` puts the current directory (usually the workspace, which may be a
# cloned repository) first on sys.path, so its `httpx.py` or `pydantic/` would shadow a
# library on every later import. Baton never imports from there: drop it now (the
# extension also starts Python with PYTHONSAFEPATH=1, which covers `baton` itself).
_here = os.getcwd()
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".", _here)]

from baton.faces.cli.main import main  # noqa: E402

raise SystemExit(main())
