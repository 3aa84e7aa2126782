// Tool calls in words: "Run `npm test`", "Edit src/app.py", "Tick a plan step".
// Shared by the tool cards and the permission prompts. Unknown tools (MCP, plugins)
// keep their own name.

export interface ToolTitle {
  /** The verb: "Run", "Read", "Edit". */
  action: string;
  /** What it acts on: a path, a command, a pattern (may be empty). */
  target: string;
  /** A short CSS-class name and a one-character glyph for the card's icon. */
  icon: string;
  glyph: string;
}

const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

function clip(text: string, max = 80): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

export function toolTitle(name: string, input: Record<string, unknown>): ToolTitle {
  const path = str(input.path) ?? str(input.file_path) ?? "";
  switch (name) {
    case "bash":
      return { action: "Run", target: clip(str(input.command) ?? ""), icon: "terminal", glyph: "$" };
    case "read":
      return { action: "Read", target: path, icon: "file", glyph: "◧" };
    case "write":
      return { action: "Write", target: path, icon: "write", glyph: "✎" };
    case "edit":
      return { action: "Edit", target: path, icon: "write", glyph: "✎" };
    case "grep":
      return { action: "Search for", target: clip(str(input.pattern) ?? "") + (path ? ` in ${path}` : ""), icon: "search", glyph: "⌕" };
    case "glob":
      return { action: "Find files", target: clip(str(input.pattern) ?? ""), icon: "search", glyph: "⌕" };
    case "recall":
      return { action: "Recall from before compacting", target: clip(str(input.query) ?? str(input.ref) ?? ""), icon: "history", glyph: "↺" };
    case "task":
      return { action: `Delegate to ${str(input.agent) ?? "an agent"}:`, target: clip(str(input.description) ?? ""), icon: "task", glyph: "⇢" };
    case "plan_write":
      return { action: "Write the plan", target: "", icon: "plan", glyph: "☰" };
    case "plan_edit":
      return { action: planEditAction(input), target: "", icon: "plan", glyph: "☰" };
    case "plan_show":
      return { action: "Show the plan", target: "", icon: "plan", glyph: "☰" };
    case "plan_exit":
      return { action: "Submit the plan for your approval", target: "", icon: "plan", glyph: "☰" };
    case "plan_done":
      return { action: "Mark the plan done", target: "", icon: "plan", glyph: "✓" };
    default:
      return { action: name, target: clip(str(input.command) ?? path ?? str(input.pattern) ?? ""), icon: "tool", glyph: "⚙" };
  }
}

/** A plan edit that only changes a step's box reads as what it does to the step. */
function planEditAction(input: Record<string, unknown>): string {
  const before = str(input.old_string) ?? "";
  const after = str(input.new_string) ?? "";
  const box = (text: string) => /\[([ xX~!])\]/.exec(text)?.[1];
  const [from, to] = [box(before), box(after)];
  if (from !== undefined && to !== undefined && from !== to && before.replace(/\[[ xX~!]\]/, "") === after.replace(/\[[ xX~!]\]/, "")) {
    if (to === "x" || to === "X") return "Tick a plan step";
    if (to === "~") return "Start a plan step";
    if (to === "!") return "Mark a plan step blocked";
    return "Reopen a plan step";
  }
  return "Edit the plan";
}

/** The permission prompt's question: "Run this command?", "Edit src/app.py?". */
export function permissionQuestion(name: string, input: Record<string, unknown>): string {
  const t = toolTitle(name, input);
  switch (name) {
    case "bash":
      return "Run this command?";
    case "write":
      return `Write ${t.target || "a file"}?`;
    case "edit":
      return `Edit ${t.target || "a file"}?`;
    default:
      return `Allow the agent to use “${name}”${t.target ? ` on ${t.target}` : ""}?`;
  }
}

/**
 * A tool's output as the person reads it. Plan tools answer the model with numbered
 * hunks (`+5| - [ ] step`, `-7| …`) and a "Changed lines:" header: the card shows the
 * changed lines as a plain diff (`+ - [ ] step`), without the numbering meant for the
 * model's later edits.
 */
export function displayOutput(name: string, output: string): string {
  if (name === "write" || name === "edit") return personsWrite(output);
  if (!name.startsWith("plan_")) return output;
  return output
    .replace(/\.?\s*Changed lines:\s*$/gm, ".")
    .split("\n")
    .map((line) => {
      const hunk = /^([ +-])\d+\| ?(.*)$/.exec(line);
      return hunk ? `${hunk[1]} ${hunk[2]}` : line;
    })
    .join("\n");
}

/** A write the person changed before accepting: the result tells the agent about "your
 * proposal"; the person reads who proposed what, without Baton's instruction to the agent. */
function personsWrite(output: string): string {
  const edited = /^(\w+) (.+?) \((\d+) lines\) with the person's version: they changed your proposal before accepting it, so the file does not hold exactly what you proposed\. The differences \(--- your proposal, \+\+\+ what .+? now holds\):\n/.exec(output);
  if (!edited) return output;
  const [head, verb, path, lines] = edited;
  const rest = output.slice(head.length).replace(/Take the file as it is now; do not re-apply what the person removed or changed\.\s*$/, "");
  return `${verb} ${path} (${lines} lines) with your edits. The differences (--- the agent's proposal, +++ what ${path} now holds):\n${rest}`.trimEnd();
}
