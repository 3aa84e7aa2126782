// A `task` call's result in people's words. The server returns the child's result to
// the model as a framed block (`<baton:task-result agent=… child=… status=…>` with
// `status:`, `files changed:`, `commands run …:` and `final message:` lines); the
// sidebar shows what it says, never the framing: the status ("stopped" for a child
// the person stopped), the files, the commands and the child's answer.
import { CHILD_STATUSES, CHILD_STATUS_LABELS, type ChildStatus } from "../childMessages";

export interface TaskResult {
  childId: string;
  agent: string;
  status: ChildStatus;
  tokens: number;
  error?: string;
  /** "created src/a.py", "modified b.py". */
  files: string[];
  /** "pytest -q → 0". */
  commands: string[];
  /** The child's final message (cut by the server when long). */
  answer: string;
  /** The answer was cut for the model (the whole is in the child's transcript). */
  cut: boolean;
}

const unquote = (text: string) => text.replace(/^`(.*)`$/, "$1");

/** The result a `task` call's output holds, or undefined for any other text. */
export function parseTaskResult(output: string): TaskResult | undefined {
  const block = /<baton:task-result\b([^>]*)>\n?([\s\S]*?)\n?<\/baton:task-result>/.exec(output) ?? /<baton:task-result\b([^>]*)>\n?([\s\S]*)$/.exec(output);
  if (!block) return undefined;
  const attrs = block[1] ?? "";
  const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(attrs)?.[1];
  const childId = attr("child");
  const status = attr("status");
  if (!childId || !(CHILD_STATUSES as readonly string[]).includes(status ?? "")) return undefined;
  const lines = (block[2] ?? "").split("\n");
  const result: TaskResult = { childId, agent: attr("agent") ?? "", status: status as ChildStatus, tokens: 0, files: [], commands: [], answer: "", cut: false };
  let section: "files" | "commands" | "answer" | undefined;
  const answer: string[] = [];
  for (const line of lines) {
    if (section === "answer") {
      if (line === "  [… cut here]") result.cut = true;
      else answer.push(line.startsWith("  ") ? line.slice(2) : line);
      continue;
    }
    const tokens = /^tokens: ([\d,]+)$/.exec(line);
    if (tokens) result.tokens = Number((tokens[1] ?? "0").replace(/,/g, ""));
    else if (line.startsWith("error: ")) result.error = unquote(line.slice("error: ".length));
    else if (line === "files changed:") section = "files";
    else if (line.startsWith("commands run")) section = "commands";
    else if (line.startsWith("final message")) {
      section = line.startsWith("final message: none") ? undefined : "answer";
      if (line.includes("(cut to")) result.cut = true;
    } else if (line.startsWith("- ") && section === "files") result.files.push(line.slice(2).replace(/`/g, ""));
    else if (line.startsWith("- ") && section === "commands") result.commands.push(line.slice(2).replace(/`/g, ""));
    else if (!line.startsWith("- ")) section = undefined;
  }
  result.answer = answer.join("\n").trim();
  return result;
}

/** The result as plain lines for a tool card's body (what the raw block said, in words). */
export function taskResultText(result: TaskResult): string {
  const lines = [`The ${result.agent || "child"} child ${statusWords(result.status)}.`];
  if (result.error) lines.push(`Why: ${result.error}`);
  if (result.files.length) lines.push("Files changed:", ...result.files.map((f) => `  ${f}`));
  if (result.commands.length) lines.push("Commands run:", ...result.commands.map((c) => `  ${c}`));
  if (result.answer) lines.push("", result.answer);
  if (result.cut) lines.push("", "(The answer was cut for the agent; the child's transcript has all of it.)");
  return lines.join("\n");
}

export function statusWords(status: ChildStatus): string {
  switch (status) {
    case "done":
      return "finished";
    case "cancelled":
      return "was stopped";
    case "max_steps":
      return "stopped at its step limit";
    default:
      return CHILD_STATUS_LABELS[status];
  }
}

/** The anchor a step note leaves in the transcript, where its child's card goes. */
export function stepCallId(messageId: string): string {
  return `step-note-${messageId}`;
}
