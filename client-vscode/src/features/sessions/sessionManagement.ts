// Baton: Rename Session, Delete Session, Fork Session, Export Session, Select Model.
// Each acts on the session given (from the sidebar), else the active one.
import * as vscode from "vscode";
import type { ModelInfo } from "../../protocol";
import type { Services } from "../../services";
import { resolveSession } from "./activeSession";

const SESSION_BUSY = -32002;

export async function renameSession(services: Services, given?: unknown): Promise<string | undefined> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return undefined;
  const current = services.state.title(sessionId) ?? "";
  const title = await vscode.window.showInputBox({
    title: "Baton: rename session",
    value: current,
    valueSelection: [0, current.length],
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() === "" ? "Enter a title" : undefined),
  });
  if (title === undefined || title.trim() === "" || title.trim() === current) return undefined;
  const info = await services.client.request("baton/session/rename", { sessionId, title: title.trim() });
  services.state.remember(sessionId, { title: info.title });
  await services.sidebar.refreshSessions();
  return info.title;
}

/** Asks first; a running turn is cancelled before the session is deleted. */
export async function deleteSession(services: Services, given?: unknown): Promise<boolean> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return false;
  const title = services.state.title(sessionId) ?? sessionId;
  const choice = await vscode.window.showWarningMessage(
    `Delete the Baton session “${title}”?`,
    { modal: true, detail: "Its messages and history are removed for good. Its plan file stays on disk." },
    "Delete",
  );
  if (choice !== "Delete") return false;
  if (services.state.isRunning(sessionId)) {
    await services.client.notify("baton/session/cancel", { sessionId });
  }
  // The cancelled turn takes a moment to end; the server answers "busy" until then.
  for (let attempt = 0; ; attempt++) {
    try {
      await services.client.request("baton/session/delete", { sessionId });
      break;
    } catch (error) {
      if ((error as { code?: number }).code !== SESSION_BUSY || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
  const wasActive = services.state.activeSessionId === sessionId;
  services.state.forget(sessionId);
  const sessions = await services.sidebar.refreshSessions();
  if (wasActive) {
    const next = sessions[0];
    if (next) await services.sidebar.showSession(next.sessionId);
    else services.sidebar.clearSession();
  }
  void vscode.window.setStatusBarMessage(`Baton: deleted “${title}”`, 3000);
  return true;
}

/** Forks at `messageId`, or after the session's last message. */
export async function forkSession(services: Services, given?: unknown, messageId?: unknown): Promise<string | undefined> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return undefined;
  let at = typeof messageId === "string" && messageId !== "" ? messageId : undefined;
  if (!at) {
    const loaded = await services.client.request("baton/session/load", { sessionId });
    at = loaded.messages[loaded.messages.length - 1]?.id;
    if (!at) {
      void vscode.window.showInformationMessage("Baton: this session has no messages to fork from yet.");
      return undefined;
    }
  }
  const forked = await services.client.request("baton/session/fork", { sessionId, messageId: at });
  services.state.remember(forked.sessionId, { title: forked.title });
  await services.sidebar.showSession(forked.sessionId);
  const plan = forked.planPath ? ` with its plan copied to ${forked.planPath}` : "";
  void vscode.window.showInformationMessage(`Baton: forked into “${forked.title}” (${forked.messages} messages${plan}).`);
  return forked.sessionId;
}

/** Opens the session as markdown in an editor, ready to paste into an issue. */
export async function exportSession(services: Services, given?: unknown): Promise<string | undefined> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return undefined;
  const { markdown } = await services.client.request("baton/session/export", { sessionId });
  const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: markdown });
  await vscode.window.showTextDocument(doc, { preview: false });
  void vscode.window.showInformationMessage("Baton: session exported as markdown.", "Copy to Clipboard").then(async (choice) => {
    if (choice) await vscode.env.clipboard.writeText(markdown);
  });
  return markdown;
}

interface ModelItem extends vscode.QuickPickItem {
  model?: string;
  custom?: boolean;
}

export function modelItems(models: ModelInfo[], current: string | undefined): ModelItem[] {
  const items: ModelItem[] = models.map((m) => ({
    label: m.id,
    description: `${formatWindow(m.contextWindow)} context${m.id === current ? " · current" : ""}`,
    ...(m.id === current ? { picked: true } : {}),
    model: m.id,
  }));
  items.push({ label: "$(edit) Enter a model id…", custom: true, alwaysShow: true });
  return items;
}

export function formatWindow(tokens: number): string {
  if (tokens >= 1_000_000) return `${(tokens / 1_000_000).toFixed(tokens % 1_000_000 === 0 ? 0 : 1)}M`;
  if (tokens >= 1000) return `${Math.round(tokens / 1000)}k`;
  return String(tokens);
}

/** The model picker: the provider's models (or the configured ones) → baton/session/setModel. */
export async function selectModel(services: Services, given?: unknown): Promise<string | undefined> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return undefined;
  const listed = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "Baton: listing models" },
    () => services.client.request("baton/models/list", { sessionId }),
  );
  const note = listed.error ? ` (the provider's list is unavailable: ${listed.error})` : "";
  const picked = await vscode.window.showQuickPick(modelItems(listed.models, listed.current ?? undefined), {
    title: `Baton: model for this session (${listed.provider})`,
    placeHolder: `Current: ${listed.current ?? "the configured model"}${note}`,
    matchOnDescription: true,
    // A streaming answer or a plan update elsewhere must not close the picker.
    ignoreFocusOut: true,
  });
  if (!picked) return undefined;
  let model = picked.model;
  if (picked.custom) {
    model = (
      await vscode.window.showInputBox({
        title: "Baton: model id",
        prompt: `A model id the ${listed.provider} provider serves`,
        ignoreFocusOut: true,
        validateInput: (value) => (value.trim() === "" ? "Enter a model id" : undefined),
      })
    )?.trim();
  }
  if (!model) return undefined;
  const result = await services.client.request("baton/session/setModel", { sessionId, model });
  services.state.setModel(sessionId, { provider: result.provider, model: result.model });
  void vscode.window.setStatusBarMessage(`Baton: ${result.model} for the next request`, 3000);
  return result.model;
}
