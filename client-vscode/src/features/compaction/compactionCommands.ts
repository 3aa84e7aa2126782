// Baton: Compact Session, Compact Session with Instructions…, Show Compaction History.
import * as vscode from "vscode";
import type { CompactionRecord } from "../../protocol";
import type { Services } from "../../services";
import { resolveSession } from "../sessions/activeSession";

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
  if (sessionId) await services.history.show(sessionId);
}

/** "Undo this compaction" in the history: asks first, then baton/session/uncompact. */
export async function undoCompaction(services: Services, sessionId: unknown, compactionId: unknown): Promise<void> {
  if (typeof sessionId !== "string" || typeof compactionId !== "string") return;
  const choice = await vscode.window.showWarningMessage(
    "Undo this compaction?",
    {
      modal: true,
      detail: "The agent sees the messages from before it again (and any later compaction is undone too). Nothing is deleted; you can compact again.",
    },
    "Undo Compaction",
  );
  if (choice !== "Undo Compaction") return;
  await services.client.request("baton/session/uncompact", { sessionId, compactionId });
  services.history.refresh(sessionId);
  await services.sidebar.reloadSession(sessionId);
  void vscode.window.setStatusBarMessage("Baton: compaction undone", 3000);
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
