// The sessions feature's sidebar messages: the session picker and its menu, the
// transcript's Stop, Retry, links and code blocks, the composer's mode.
import * as vscode from "vscode";
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";
import type { SidebarHost } from "../../shell/sidebarHost";
import { codeAction, openLink } from "./transcriptActions";

export function register(registry: MessageRegistry, host: SidebarHost): Registration[] {
  const command = (name: string, ...args: unknown[]) => vscode.commands.executeCommand(name, ...args);
  return [
    registry.on("newSession", async (m) => {
      await host.newSession(m.mode);
    }),
    registry.on("selectSession", (m) => host.activate(m.sessionId)),
    registry.on("retry", (m) => host.retry(m.sessionId)),
    registry.on("cancel", (m) => host.client.notify("baton/session/cancel", { sessionId: m.sessionId })),
    registry.on("setMode", (m) => host.setMode(m.sessionId, m.mode)),
    registry.on("renameSession", async (m) => void (await command("baton.renameSession", m.sessionId))),
    registry.on("deleteSession", async (m) => void (await command("baton.deleteSession", m.sessionId))),
    registry.on("forkSession", async (m) => void (await command("baton.forkSession", m.sessionId, m.messageId))),
    registry.on("exportSession", async (m) => void (await command("baton.exportSession", m.sessionId))),
    registry.on("openLink", (m) => openLink(m.url)),
    registry.on("codeAction", (m) => codeAction(m.action, m.text)),
  ];
}
