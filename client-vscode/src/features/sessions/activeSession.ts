// The session a command acts on: the one given (from the sidebar), else the
// active one, else one the person picks, else a new one.
import * as vscode from "vscode";
import type { Services } from "../../services";

export async function resolveSession(
  services: Services,
  given: unknown,
  options: { createIfNone?: boolean } = {},
): Promise<string | undefined> {
  if (typeof given === "string" && given !== "") return given;
  const active = services.state.activeSessionId;
  if (active) return active;
  const { sessions } = await services.client.request("baton/session/list", {});
  if (sessions.length === 0) {
    if (!options.createIfNone) {
      void vscode.window.showInformationMessage("Baton: there is no session yet. Start one with “Baton: New Session”.");
      return undefined;
    }
    return services.sidebar.newSession("build");
  }
  if (sessions.length === 1) {
    const only = sessions[0];
    if (only) {
      services.state.setActive(only.sessionId);
      return only.sessionId;
    }
  }
  const picked = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: s.title || s.sessionId, description: s.mode, detail: s.updatedAt, sessionId: s.sessionId })),
    { title: "Baton: choose a session" },
  );
  if (picked) services.state.setActive(picked.sessionId);
  return picked?.sessionId;
}
