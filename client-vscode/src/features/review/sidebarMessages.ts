// The review feature's sidebar messages: Undo of a turn, a change opened in the diff
// editor, and the workspace files offered for `@` mentions.
import * as vscode from "vscode";
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";
import type { SidebarHost } from "../../shell/sidebarHost";
import { FileIndex } from "./editorContext";

export function register(registry: MessageRegistry, host: SidebarHost): Registration[] {
  /** Workspace files for `@` completion in the prompt box. */
  const files = new FileIndex();
  const command = (name: string, ...args: unknown[]) => vscode.commands.executeCommand(name, ...args);
  return [
    registry.on("revert", async (m) => void (await command("baton.undoTurn", m.sessionId, m.messageId))),
    registry.on("openChange", async (m) => void (await command("baton.openChange", m.sessionId, m.toolCallId))),
    registry.on("showPendingChange", async (m) => void (await command("baton.showPendingChange", m.toolCallId))),
    registry.on("mentionQuery", async (m) => host.post({ type: "mentionResults", query: m.query, paths: await files.search(m.query) })),
  ];
}
