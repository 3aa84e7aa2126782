"""Plan file names: `<yyyy-mm-dd>-<slug>.md`, the slug taken from the session's title.

Readable names let a person find a plan in the file tree by what it is about
and when it was made; the date first keeps a directory listing in order.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date

MAX_SLUG_CHARS = 48
FALLBACK_SLUG = "plan"


def slugify(text: str) -> str:
    """Lower-case ASCII words joined by hyphens, cut at a word boundary."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", folded.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > MAX_SLUG_CHARS:
            if not slug:
                slug = word[:MAX_SLUG_CHARS]
            break
        slug = candidate
    return slug or FALLBACK_SLUG


def file_name(hint: str, day: date, attempt: int = 1) -> str:
    """The `attempt`-th candidate name (2 and on add `-2`, `-3`… for clashes)."""
    suffix = f"-{attempt}" if attempt > 1 else ""
    return f"{day.isoformat()}-{slugify(hint)}{suffix}.md"
