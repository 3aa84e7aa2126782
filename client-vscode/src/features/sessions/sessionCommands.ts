// Baton: New Session, Baton: Toggle Plan Mode.
import * as vscode from "vscode";
import type { Mode } from "../../protocol";
import type { Services } from "../../services";
import { resolveSession } from "./activeSession";

export async function newSession(services: Services, mode?: unknown): Promise<string> {
  const chosen: Mode = mode === "plan" ? "plan" : "build";
  const sessionId = await services.sidebar.newSession(chosen);
  await services.sidebar.showSession(sessionId);
  return sessionId;
}

export async function togglePlanMode(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return;
  let current = services.state.mode(sessionId);
  if (!current) {
    const loaded = await services.client.request("baton/session/load", { sessionId });
    current = loaded.mode;
  }
  const next: Mode = current === "plan" ? "build" : "plan";
  const result = await services.client.request("baton/session/setMode", { sessionId, mode: next });
  services.state.setMode(sessionId, result.mode);
  void vscode.window.setStatusBarMessage(`Baton: ${result.mode} mode`, 3000);
}
