// The setup feature's sidebar messages: the welcome state's and the error cards'
// buttons, and the model picked from the server's list or the model menu.
import * as vscode from "vscode";
import type { SidebarAction } from "../../shell/messages";
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";
import type { SidebarHost } from "../../shell/sidebarHost";

/** Each button runs one fixed command. */
const ACTION_COMMANDS: Record<SidebarAction, string> = {
  setKey: "baton.setOpenAIApiKey",
  useLocalModel: "baton.useLocalModel",
  useCompatibleServer: "baton.useCompatibleServer",
  restartServer: "baton.restartServer",
  showLog: "baton.showServerLog",
  setPythonPath: "baton.setPythonPath",
  newSession: "baton.newSession",
  sessions: "baton.switchSession",
  chooseModel: "baton.chooseWorkspaceModel",
  // VS Code's own Workspace Trust editor: the person decides there, Baton follows.
  manageTrust: "workbench.trust.manage",
};

export function register(registry: MessageRegistry, host: SidebarHost): Registration[] {
  return [
    registry.on("action", async (m) => void (await vscode.commands.executeCommand(ACTION_COMMANDS[m.action]))),
    registry.on("useModel", async (m) => void (await vscode.commands.executeCommand("baton.chooseWorkspaceModel", m.model))),
    registry.on("pickModel", async (m) => {
      // Before the first prompt the model is the new session's: start it, then pick.
      const sessionId = m.sessionId ?? (await host.newSession(m.mode ?? "build"));
      await vscode.commands.executeCommand("baton.selectModel", sessionId);
    }),
  ];
}
