// Baton: Compact Session, Compact Session with Instructions…, Show Compaction History.
import * as vscode from "vscode";
import type { CompactionRecord } from "../protocol";
import type { Services } from "../services";
import { resolveSession } from "./activeSession";

export function describeRecord(record: CompactionRecord): string {
  return `${record.tokensBefore.toLocaleString("en-US")} → ${record.tokensAfter.toLocaleString("en-US")} tokens`;
}

export async function compactSession(services: Services, given?: unknown, instructions?: string): Promise<CompactionRecord | undefined> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return undefined;
  services.state.setCompacting(sessionId, true);
  try {
    // The server reports work-done progress ($/progress) that vscode-languageclient
    // shows as a notification; the status bar shows that it is running.
    const record = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: "Baton: compacting" },
      () =>
        services.client.request("baton/session/compact", {
          sessionId,
          ...(instructions ? { instructions } : {}),
        }),
    );
    void vscode.window.showInformationMessage(
      `Baton: compacted (${record.strategy}): ${describeRecord(record)}.`,
    );
    return record;
  } finally {
    services.state.setCompacting(sessionId, false);
  }
}

export async function compactWithInstructions(services: Services, given?: unknown): Promise<CompactionRecord | undefined> {
  const instructions = await vscode.window.showInputBox({
    title: "Baton: Compact Session with Instructions",
    prompt: "What the summary should focus on or keep",
    placeHolder: "e.g. keep the exact failing test names and the API decisions",
    ignoreFocusOut: true,
  });
  if (instructions === undefined) return undefined;
  return compactSession(services, given, instructions.trim() || undefined);
}

export async function showCompactionHistory(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return;
  const { compactions } = await services.client.request("baton/session/compactions", { sessionId });
  if (compactions.length === 0) {
    void vscode.window.showInformationMessage("Baton: this session has not been compacted yet.");
    return;
  }
  const items = [...compactions].reverse().map((record) => ({
    label: `$(archive) ${record.trigger} · ${record.strategy}${record.undone ? " (undone)" : ""}`,
    description: describeRecord(record),
    detail: new Date(record.createdAt).toLocaleString(),
    record,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: "Baton: compaction history",
    placeHolder: "Pick a compaction to see its summary",
    matchOnDescription: true,
  });
  if (!picked) return;
  const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: recordAsMarkdown(picked.record) });
  await vscode.window.showTextDocument(doc, { preview: true });
}

export function recordAsMarkdown(record: CompactionRecord): string {
  const lines = [
    `# Compaction ${record.compactionId}`,
    "",
    `- Trigger: ${record.trigger}`,
    `- Strategy: ${record.strategy}`,
    `- Tokens: ${describeRecord(record)}`,
    `- Time: ${record.createdAt}`,
    "",
  ];
  if (record.strategy === "native") {
    lines.push("## Summary", "", record.summary ?? "_(no summary)_", "");
  } else {
    lines.push("_Server-side compaction: the provider's artifact is opaque and never sent to the client._", "");
  }
  const ledger = record.ledger;
  const modified = ledger.filesModified ?? [];
  const commands = ledger.commands ?? [];
  if (modified.length || commands.length || (ledger.filesRead ?? []).length) {
    lines.push("## Ledger", "");
    for (const f of modified) lines.push(`- ${f.action}: \`${f.path}\``);
    for (const f of ledger.filesRead ?? []) lines.push(`- read: \`${f}\``);
    for (const c of commands) lines.push(`- ran \`${c.command}\` (exit ${c.exitCode ?? "?"})`);
    lines.push("");
  }
  for (const note of record.notes ?? []) lines.push(`> ${note}`);
  return lines.join("\n");
}

const CONTEXT_ITEMS: Record<string, string> = {
  system: "Baton's instructions",
  instructions: "Workspace instructions (AGENTS.md…)",
  tools: "Tool descriptions",
  checkpoint: "Summary of compacted history",
  ledger: "Ledger (files, commands, errors)",
  plan: "The plan",
  messages: "Conversation",
  tool_outputs: "Tool outputs",
  continue: "Continue message",
};

/** The context meter's and the status-bar item's menu: compact, history, what is in the context. */
export async function contextMenu(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return;
  const usage = services.state.usageOf(sessionId);
  const percent = usage && usage.contextWindow > 0 ? Math.round((usage.tokens / usage.contextWindow) * 100) : undefined;
  const picked = await vscode.window.showQuickPick(
    [
      { label: "$(fold) Compact now", detail: "Summarise older messages so the session has room again", id: "compact" },
      { label: "$(edit) Compact with instructions…", detail: "Say what the summary must keep", id: "instructions" },
      { label: "$(history) Compaction history", detail: "Earlier compactions, with Undo", id: "history" },
      { label: "$(list-tree) What is in the context", detail: "What the next request sends, part by part", id: "context" },
    ],
    {
      title: usage
        ? `Baton context: ${usage.tokens.toLocaleString("en-US")} of ${usage.contextWindow.toLocaleString("en-US")} tokens in use (${percent}%)`
        : "Baton context",
    },
  );
  if (!picked) return;
  if (picked.id === "compact") await compactSession(services, sessionId);
  else if (picked.id === "instructions") await compactWithInstructions(services, sessionId);
  else if (picked.id === "history") await vscode.commands.executeCommand("baton.showCompactionHistory", sessionId);
  else await showContext(services, sessionId);
}

async function showContext(services: Services, sessionId: string): Promise<void> {
  const context = await services.client.request("baton/session/context", { sessionId });
  const items = context.items.map((item) => ({
    label: CONTEXT_ITEMS[item.kind] ?? item.kind,
    description: `${item.tokens.toLocaleString("en-US")} tokens`,
  }));
  await vscode.window.showQuickPick(items, {
    title: `In the context now: ${context.tokens.toLocaleString("en-US")} of ${context.contextWindow.toLocaleString("en-US")} tokens; compaction at ${context.threshold.toLocaleString("en-US")}`,
    placeHolder: "What the next request sends (read-only)",
  });
}
