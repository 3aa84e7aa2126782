"""`baton demo`: a short headless session that shows what Baton is for.

In a temporary copy of a small project (`baton/demo_project`: `stats.py` with
three TODOs) it runs, through the same core the editor uses:

1. plan: in plan mode the agent reads the code and writes a plan of several
   steps to a file (`plan_write`);
2. approval: the person edits the plan (`baton/plan/update`; the model is told
   the change as a diff) and approves it (`baton/plan/approve`): build mode;
3. compaction: the person asks for one (`baton/session/compact`): the planning
   conversation leaves the model's view, tokens before -> after, the ledger;
4. plan back: the next request carries the plan, re-read from its file;
5. edit: the agent builds the first step (`read`, then `edit`); the demo checks
   the edit as a person reviewing it would (reads mean(), runs it on a few
   lists) and, when it falls short, the person takes the turn back
   (`baton/session/revert`) and shows the model what was found: one more try;
6. tick: and ticks it off in the plan (`plan_edit`).

Where a person would act, the demo sends the JSON-RPC request an editor sends,
to the server's own method handlers (params validated, the result serialised as
on the wire), and prints both. Each of the agent's model steps is told the one
tool it needs (`tool_choice` naming it; for llama.cpp a JSON schema of that
tool's calls only): what makes a 1.5B model on a CPU do the step. The build's calls
are narrowed further (`RequiredCall`): the path is stats.py, the edit's
old_string mean()'s TODO comment and its new_string the shape of a guard (`if …:`
then `return …`, indented as in the file). What each step does is still the
model's (the plan, the test and the value of the guard). A phase that does
not succeed is said plainly, the demo stands in where the rest needs it (a plan
written as a person would), and it exits 1.

No API key: the embedded local model (`baton model install`). With
`OPENAI_API_KEY` set: OpenAI; with `ANTHROPIC_API_KEY` (and no OpenAI key): Claude.
The session's store lives in the temporary
directory (XDG_DATA_HOME points there), so the demo leaves nothing in the
person's own Baton data except the model it uses. The directory is kept so
that the plan file and the session can be looked at; `--clean` removes it.
"""

from __future__ import annotations

from baton.faces.demo.main import main
from baton.faces.demo.scenario import PERSON_NOTE, PHASES

__all__ = ["PERSON_NOTE", "PHASES", "main"]
