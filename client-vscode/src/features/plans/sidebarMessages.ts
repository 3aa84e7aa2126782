// The plans feature's sidebar message: the plan line opens the session's plan panel.
import * as vscode from "vscode";
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";

export function register(registry: MessageRegistry): Registration[] {
  return [registry.on("showPlan", async (m) => void (await vscode.commands.executeCommand("baton.showPlan", m.sessionId)))];
}
