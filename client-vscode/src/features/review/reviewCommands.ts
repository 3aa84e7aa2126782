// Baton: Undo Last Turn's Changes, Undo Turn (from the sidebar), Add Selection
// to Prompt, Accept / Reject Change (the diff editor's title bar), Show Change
// Waiting for Review, and a tool call's completed change (from the sidebar).
import * as vscode from "vscode";
import { selectionAttachment } from "./editorContext";
import { lastTurn, undoTurn } from "./revert";
import type { Services } from "../../services";
import { resolveSession } from "../sessions/activeSession";

export async function undoLastTurn(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return;
  const messageId = await lastTurn(services, sessionId);
  if (!messageId) {
    void vscode.window.showInformationMessage("Baton: this session has no turn to undo.");
    return;
  }
  await undoTurn(services, sessionId, messageId, "last");
}

export async function undoTurnFrom(services: Services, sessionId: unknown, messageId: unknown): Promise<void> {
  if (typeof sessionId !== "string" || typeof messageId !== "string") return;
  await undoTurn(services, sessionId, messageId, "from-here");
}

export async function addSelectionToPrompt(services: Services): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage("Baton: open a file (and select lines) to add it to the prompt.");
    return;
  }
  await services.sidebar.attach(selectionAttachment(editor));
}

export function acceptChange(services: Services, uri?: unknown): boolean {
  return services.review.accept(uri);
}

export function rejectChange(services: Services, uri?: unknown): boolean {
  return services.review.reject(uri);
}

export async function showPendingChange(services: Services, toolCallId?: unknown): Promise<void> {
  const shown = await services.review.showPending(typeof toolCallId === "string" ? toolCallId : undefined);
  if (!shown) void vscode.window.showInformationMessage("Baton: no change is waiting for review.");
}

export async function openChange(services: Services, sessionId: unknown, toolCallId: unknown): Promise<void> {
  if (typeof sessionId !== "string" || typeof toolCallId !== "string") return;
  await services.review.openChange(sessionId, toolCallId);
}
