#!/usr/bin/env python3
"""pre_compact command hook: before a manual compaction, have the agent write CHECKPOINT.md."""

import json
import sys

event = json.load(sys.stdin)
if event["trigger"] == "manual":
    answer = {
        "shouldRun": True,
        "prompt": "Before this conversation is compacted, write CHECKPOINT.md with the write "
        "tool: what you are doing, the files involved and the next step. Then stop.",
    }
else:
    answer = {"shouldRun": False}
print(json.dumps(answer))
