// Undoing turns: "Baton: Undo Last Turn's Changes" and the sidebar's per-turn
// Undo. A dry run says what would be restored (shown in a modal to confirm);
// the revert itself is refused by the server (-32011) when a file changed
// outside Baton since, and then the person sees which files and decides
// whether to overwrite them (force).
import * as vscode from "vscode";
import type { RevertConflictInfo, RevertResult } from "../../protocol";
import type { Services } from "../../services";

export const REVERT_CONFLICT = -32011;

const REASONS: Record<RevertConflictInfo["reason"], string> = {
  modified: "changed since Baton's last change",
  deleted: "deleted since Baton's last change",
  created: "created since Baton removed it",
  changed_between: "edited outside Baton between the turns that changed it",
  unconfirmed: "Baton's last change to it was interrupted",
};

/** The conflicts of a refused revert (`-32011` with `data.conflicts`), else undefined. */
export function conflictsOf(error: unknown): RevertConflictInfo[] | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, data } = error as { code?: unknown; data?: unknown };
  if (code !== REVERT_CONFLICT) return undefined;
  const conflicts = (data as { conflicts?: unknown } | undefined)?.conflicts;
  return Array.isArray(conflicts) ? (conflicts as RevertConflictInfo[]) : [];
}

export function describeConflicts(conflicts: RevertConflictInfo[]): string {
  return conflicts.map((c) => `${c.path}: ${REASONS[c.reason] ?? c.reason}`).join("\n");
}

/** What a revert will do (or did), as lines for a dialog. */
export function describeRevert(result: RevertResult): string {
  const restored = result.files.filter((f) => f.action === "restored").map((f) => f.path);
  const removed = result.files.filter((f) => f.action === "removed").map((f) => f.path);
  const lines: string[] = [];
  if (restored.length) lines.push(`Restores: ${restored.join(", ")}`);
  if (removed.length) lines.push(`Removes (created by the turn): ${removed.join(", ")}`);
  if (!restored.length && !removed.length) lines.push("No files to restore: the turn only leaves the agent's view.");
  if (result.shellCommands?.length) {
    lines.push(`Not undone (shell commands are not checkpointed): ${result.shellCommands.map((c) => `\`${c}\``).join(", ")}`);
  }
  if (result.conflicts?.length) lines.push(`Changed outside Baton since:\n${describeConflicts(result.conflicts)}`);
  lines.push("The turn's messages stay in the history, marked reverted, and leave the agent's view.");
  return lines.join("\n");
}

/** Undo the turn that starts at `messageId` and every later one. */
export async function undoTurn(
  services: Services,
  sessionId: string,
  messageId: string,
  which: "last" | "from-here" = "from-here",
): Promise<RevertResult | undefined> {
  const { client } = services;
  const preview = await client.request("baton/session/revert", { sessionId, messageId, dryRun: true });
  const question =
    which === "last" ? "Baton: undo the last turn's changes?" : "Baton: undo this turn and every later one?";
  const confirmed = await vscode.window.showWarningMessage(question, { modal: true, detail: describeRevert(preview) }, "Undo");
  if (confirmed !== "Undo") return undefined;
  let result: RevertResult;
  try {
    result = await client.request("baton/session/revert", { sessionId, messageId });
  } catch (error) {
    const conflicts = conflictsOf(error);
    if (!conflicts) throw error;
    const overwrite = await vscode.window.showWarningMessage(
      "Baton: these files changed outside Baton since its last change. Undo anyway, overwriting them?",
      { modal: true, detail: describeConflicts(conflicts) },
      "Overwrite and Undo",
    );
    if (overwrite !== "Overwrite and Undo") return undefined;
    result = await client.request("baton/session/revert", { sessionId, messageId, force: true });
  }
  const done = result.files.filter((f) => f.action !== "unchanged").length;
  void vscode.window.showInformationMessage(
    done > 0 ? `Baton: undone; ${done} file${done === 1 ? "" : "s"} restored.` : "Baton: undone; no files needed restoring.",
  );
  await services.sidebar.reloadSession(sessionId);
  // The plan file may have been restored too: its ticks follow the file.
  await services.plans.refreshIfOpen(sessionId);
  return result;
}

/** The last turn that is not reverted yet (its prompt's id), or undefined. */
export async function lastTurn(services: Services, sessionId: string): Promise<string | undefined> {
  const loaded = await services.client.request("baton/session/load", { sessionId });
  return [...loaded.messages].reverse().find((m) => m.role === "user" && !m.reverted)?.id;
}
