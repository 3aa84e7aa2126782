// Compaction history as a read-only document (a `baton-history:` URI: never dirty,
// nothing to save), in plain words, newest first, with "Undo this compaction" as a
// CodeLens above each record that is not undone yet.
import * as vscode from "vscode";
import type { BatonClient } from "../../client/batonClient";
import type { CompactionRecord } from "../../protocol";
import type { SessionState } from "../../state/sessionState";

export const HISTORY_SCHEME = "baton-history";

const n = (value: number) => value.toLocaleString("en-US");

const TRIGGERS: Record<string, string> = {
  manual: "You asked for it",
  auto: "Automatic: the context was nearly full",
  overflow: "Automatic: the model's window overflowed",
  model_switch: "Automatic: the new model's window is smaller",
};

const STRATEGIES: Record<string, string> = {
  native: "Baton summarised the older messages and kept an exact record of files, commands and errors",
  server: "The provider compacted the conversation itself (its summary is not readable)",
  fresh: "A fresh start: your messages, the exact record and the plan, without a summary",
};

/** One record in plain words (markdown). The first line is the record's heading. */
export function describeCompaction(record: CompactionRecord): string[] {
  const when = new Date(record.createdAt).toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" });
  const saved = record.tokensBefore > 0 ? Math.round((1 - record.tokensAfter / record.tokensBefore) * 100) : 0;
  const lines = [
    `## ${when}${record.undone ? " (undone)" : ""}`,
    "",
    `- **Why:** ${TRIGGERS[record.trigger] ?? record.trigger}.`,
    `- **How:** ${STRATEGIES[record.strategy] ?? record.strategy}.`,
    `- **Context in use:** ${n(record.tokensBefore)} → ${n(record.tokensAfter)} tokens (${saved}% smaller).`,
    ...(record.score
      ? [
          `- **Kept in view:** ${record.score.inView} of ${record.score.facts} tracked facts; ${record.score.oneRecall} folded, one \`recall\` away; the view is ${n(record.score.viewTokens)} of ${n(record.score.window)} tokens.`,
        ]
      : []),
    `- **Kept word for word:** ${record.firstKeptMessageId ? "the most recent messages" : "nothing; everything before was summarised"}.`,
  ];
  if (record.undone) lines.push("- **Undone:** the session uses the messages from before this compaction again.");
  for (const hook of record.preCompact ?? []) {
    lines.push(`- **Before compacting,** the ${hook.hook} hook ${hook.ran ? "ran" : "did not run"}${hook.error ? ` (${hook.error})` : ""}.`);
  }
  lines.push("");
  if (record.summary) lines.push("### Summary the agent sees", "", record.summary.trim(), "");
  const ledger = record.ledger;
  const facts: string[] = [];
  for (const f of ledger.filesModified ?? []) facts.push(`- ${f.action} \`${f.path}\``);
  if ((ledger.filesRead ?? []).length) facts.push(`- read ${(ledger.filesRead ?? []).map((f) => `\`${f}\``).join(", ")}`);
  for (const c of ledger.commands ?? []) facts.push(`- ran \`${c.command}\`${c.exitCode == null ? "" : c.exitCode === 0 ? " (succeeded)" : ` (failed, exit code ${c.exitCode})`}`);
  for (const e of ledger.errors ?? []) facts.push(`- open error from ${e.source}: ${e.message}`);
  if (facts.length) lines.push("### What Baton recorded exactly", "", ...facts, "");
  if ((record.notes ?? []).length) lines.push("### Notes", "", ...(record.notes ?? []).map((note) => `- ${note}`), "");
  return lines;
}

export class CompactionHistory implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  /** Per document: the records in the order shown, with the line of each heading. */
  private readonly shown = new Map<string, Array<{ line: number; record: CompactionRecord }>>();

  constructor(
    private readonly client: BatonClient,
    private readonly state: SessionState,
  ) {}

  static uri(sessionId: string): vscode.Uri {
    return vscode.Uri.from({ scheme: HISTORY_SCHEME, path: `/${sessionId}/Compaction history` });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const sessionId = uri.path.split("/")[1] ?? "";
    const { compactions } = await this.client.request("baton/session/compactions", { sessionId });
    const title = this.state.title(sessionId) ?? "this session";
    const lines = [
      `# Compaction history: ${title}`,
      "",
      "Each compaction replaced older messages with a summary so the session fits the model's window.",
      "“Undo this compaction” above a record puts back the messages from before it, when they still fit.",
      "",
    ];
    const records: Array<{ line: number; record: CompactionRecord }> = [];
    if (compactions.length === 0) lines.push("This session has not been compacted yet.");
    for (const record of [...compactions].reverse()) {
      records.push({ line: lines.length, record });
      lines.push(...describeCompaction(record));
    }
    this.shown.set(uri.toString(), records);
    this.lensesChanged.fire();
    return lines.join("\n");
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const records = this.shown.get(document.uri.toString()) ?? [];
    return records
      .filter(({ record }) => !record.undone)
      .map(({ line, record }) => {
        const range = new vscode.Range(line, 0, line, 0);
        return new vscode.CodeLens(range, {
          title: "Undo this compaction",
          tooltip: "Put back the messages from before this compaction (and any later one)",
          command: "baton.undoCompaction",
          arguments: [record.sessionId, record.compactionId],
        });
      });
  }

  /** Shows the session's history (refreshed if it is open already). */
  async show(sessionId: string): Promise<void> {
    const uri = CompactionHistory.uri(sessionId);
    this.changed.fire(uri);
    const doc = await vscode.languages.setTextDocumentLanguage(await vscode.workspace.openTextDocument(uri), "markdown");
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  refresh(sessionId: string): void {
    this.changed.fire(CompactionHistory.uri(sessionId));
  }

  dispose(): void {
    this.changed.dispose();
    this.lensesChanged.dispose();
  }
}
