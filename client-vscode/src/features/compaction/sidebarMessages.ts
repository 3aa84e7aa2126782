// The compaction feature's sidebar messages: Compact, and the context meter's menu
// (compact, history, what the context holds).
import * as vscode from "vscode";
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";

export function register(registry: MessageRegistry): Registration[] {
  return [
    registry.on("compact", async (m) => void (await vscode.commands.executeCommand("baton.compactSession", m.sessionId))),
    registry.on("contextMenu", async (m) => void (await vscode.commands.executeCommand("baton.contextMenu", m.sessionId))),
  ];
}
