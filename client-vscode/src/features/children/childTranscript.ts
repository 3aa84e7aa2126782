// A child session's transcript as a read-only document (a `baton-child:` URI: never
// dirty, nothing to save), from baton/session/load of the child's id: its task, what
// it said, each tool it used with the result's first lines. It follows the child live
// while it is open: the child's own updates refresh it.
import * as vscode from "vscode";
import type { BatonClient } from "../../client/batonClient";
import type { Message } from "../../protocol";
import { CHILD_STATUS_LABELS, parseChildProgress, type ChildProgress } from "./childMessages";

export const CHILD_SCHEME = "baton-child";

/** Lines of a tool's result the document shows (the whole result is in the child's session). */
const OUTPUT_LINES = 12;
/** Refreshes at most this often while the child streams. */
const REFRESH_MS = 400;

const fence = (text: string): string => {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(longest + 1);
};

const one = (value: unknown): string => (typeof value === "string" ? value.replace(/\s+/g, " ").trim() : "");

/** What a tool call acted on, in one line. */
function target(input: Record<string, unknown>): string {
  return one(input.command) || one(input.path) || one(input.file_path) || one(input.pattern) || one(input.description);
}

/** The child's transcript in markdown. `progress`: its last `child` update, when known. */
export function describeChild(sessionId: string, messages: Message[], progress?: ChildProgress, title?: string): string {
  const heading = progress ? `${progress.agent}: ${progress.description}` : title || sessionId;
  const lines = [`# Child session: ${heading}`, ""];
  if (progress) {
    const step = progress.step ? ` · step ${progress.step.index} of ${progress.step.total}` : "";
    lines.push(`Status: **${CHILD_STATUS_LABELS[progress.status]}**${step} · ${progress.tokens.toLocaleString("en-US")} tokens`, "");
  }
  lines.push(`Session \`${sessionId}\`. This view is read-only; the child reports back to the agent that started it.`, "");
  if (messages.length === 0) lines.push("_Nothing yet._");
  for (const message of messages) {
    if (message.role === "system") continue;
    if (message.role === "user") {
      const text = message.parts.map((p) => (p.type === "text" ? p.text : "")).join("").trim();
      if (text) lines.push("## Task", "", text, "");
      continue;
    }
    for (const part of message.parts) {
      if (part.type === "text" && part.text.trim()) lines.push(part.text.trim(), "");
      if (part.type === "tool_call") {
        const what = target(part.input);
        lines.push(`- **${part.name}**${what ? ` \`${what.replace(/`/g, "'")}\`` : ""}: ${part.status.replace("_", " ")}`);
        const output = (part.output ?? "").split("\n");
        const shown = output.slice(0, OUTPUT_LINES).join("\n").trimEnd();
        if (shown) {
          const f = fence(shown);
          lines.push("", `  ${f}`, ...shown.split("\n").map((l) => `  ${l}`), `  ${f}`);
          if (output.length > OUTPUT_LINES) lines.push(`  _… ${output.length - OUTPUT_LINES} more lines_`);
        }
        lines.push("");
      }
    }
  }
  return lines.join("\n");
}

export class ChildTranscripts implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Each child's last `child` update, from its parent's stream. */
  private readonly progress = new Map<string, ChildProgress>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly client: BatonClient) {
    this.subscriptions.push(
      client.onSessionUpdate(({ sessionId, update }) => {
        const child = parseChildProgress(update);
        if (child) {
          this.progress.set(child.childId, child);
          this.refreshSoon(child.childId);
        } else if (this.isOpen(sessionId)) {
          this.refreshSoon(sessionId);
        }
      }),
    );
  }

  /** "explore child “Find the TODOs”", when the child's parent told of it. */
  describe(childId: string): string | undefined {
    const child = this.progress.get(childId);
    return child ? `${child.agent} child “${child.description}”` : undefined;
  }

  static uri(sessionId: string, label = "transcript"): vscode.Uri {
    const safe = label.replace(/[\\/:*?"<>|\n\r]+/g, " ").trim().slice(0, 60) || "transcript";
    return vscode.Uri.from({ scheme: CHILD_SCHEME, path: `/${sessionId}/${safe}` });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const sessionId = uri.path.split("/")[1] ?? "";
    const loaded = await this.client.request("baton/session/load", { sessionId });
    return describeChild(sessionId, loaded.messages, this.progress.get(sessionId), loaded.title);
  }

  /** Opens the child's transcript beside the editor (refreshed if it is open already). */
  async show(sessionId: string): Promise<void> {
    const progress = this.progress.get(sessionId);
    const uri = ChildTranscripts.uri(sessionId, progress ? `${progress.agent} ${progress.description}` : undefined);
    this.changed.fire(uri);
    const doc = await vscode.languages.setTextDocumentLanguage(await vscode.workspace.openTextDocument(uri), "markdown");
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Active });
  }

  private openUris(sessionId: string): vscode.Uri[] {
    return vscode.workspace.textDocuments
      .map((d) => d.uri)
      .filter((u) => u.scheme === CHILD_SCHEME && u.path.split("/")[1] === sessionId);
  }

  private isOpen(sessionId: string): boolean {
    return this.openUris(sessionId).length > 0;
  }

  private refreshSoon(sessionId: string): void {
    if (this.timers.has(sessionId) || !this.isOpen(sessionId)) return;
    this.timers.set(
      sessionId,
      setTimeout(() => {
        this.timers.delete(sessionId);
        for (const uri of this.openUris(sessionId)) this.changed.fire(uri);
      }, REFRESH_MS),
    );
  }

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
  }
}
