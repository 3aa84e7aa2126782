// Registers every "Baton: …" command; failures become error notifications.
import * as vscode from "vscode";
import { StartupError } from "../client/startupError";
import type { Services } from "../services";
import { errorMessage } from "../util/errors";
import { compactSession, compactWithInstructions, contextMenu, showCompactionHistory, undoCompaction } from "../features/compaction/compactionCommands";
import { approvePlan, approvePlanStepByStep, openPlanFile, showPlan } from "../features/plans/planCommands";
import { attachPlan, newSessionOnPlan, openListedPlan } from "../features/plans/planListCommands";
import {
  acceptChange,
  addSelectionToPrompt,
  openChange,
  rejectChange,
  showPendingChange,
  undoLastTurn,
  undoTurnFrom,
} from "../features/review/reviewCommands";
import { restartServer, setOpenAIApiKey, showServerLog } from "../features/setup/serverCommands";
import { newSession, togglePlanMode } from "../features/sessions/sessionCommands";
import { checkStore, isStoreDamage, repairStore } from "../features/sessions/storeCommands";
import {
  cancelTurn,
  chooseWorkspaceModel,
  focusPrompt,
  setPythonPath,
  switchSession,
  useCompatibleServer,
  useLocalModel,
  useWorkspaceModel,
} from "../features/setup/setupCommands";
import { deleteSession, exportSession, forkSession, renameSession, selectModel } from "../features/sessions/sessionManagement";

type Handler = (services: Services, ...args: unknown[]) => unknown;

export const COMMANDS: Readonly<Record<string, Handler>> = {
  "baton.newSession": (s, mode) => newSession(s, mode),
  "baton.compactSession": (s, id) => compactSession(s, id),
  "baton.compactSessionWithInstructions": (s, id) => compactWithInstructions(s, id),
  "baton.showPlan": (s, id) => showPlan(s, id),
  "baton.approvePlan": (s, id) => approvePlan(s, id, true),
  "baton.approvePlanKeepContext": (s, id) => approvePlan(s, id, false),
  "baton.approvePlanStepByStep": (s, id) => approvePlanStepByStep(s, id),
  "baton.togglePlanMode": (s, id) => togglePlanMode(s, id),
  "baton.showCompactionHistory": (s, id) => showCompactionHistory(s, id),
  "baton.setOpenAIApiKey": (s) => setOpenAIApiKey(s),
  "baton.restartServer": (s) => restartServer(s),
  "baton.openPlanFile": (s, id) => openPlanFile(s, id),
  "baton.refreshPlans": (s) => s.plansView.refresh(),
  "baton.newSessionOnPlan": (s, entry) => newSessionOnPlan(s, entry),
  "baton.openListedPlan": (s, entry) => openListedPlan(s, entry),
  "baton.attachPlan": (s, entry) => attachPlan(s, entry),
  "baton.showServerLog": (s) => showServerLog(s),
  "baton.renameSession": (s, id) => renameSession(s, id),
  "baton.deleteSession": (s, id) => deleteSession(s, id),
  "baton.forkSession": (s, id, messageId) => forkSession(s, id, messageId),
  "baton.exportSession": (s, id) => exportSession(s, id),
  "baton.selectModel": (s, id) => selectModel(s, id),
  "baton.undoLastTurn": (s, id) => undoLastTurn(s, id),
  "baton.undoTurn": (s, id, messageId) => undoTurnFrom(s, id, messageId),
  "baton.addSelectionToPrompt": (s) => addSelectionToPrompt(s),
  "baton.acceptChange": (s, uri) => acceptChange(s, uri),
  "baton.rejectChange": (s, uri) => rejectChange(s, uri),
  "baton.showPendingChange": (s, toolCallId) => showPendingChange(s, toolCallId),
  "baton.openChange": (s, id, toolCallId) => openChange(s, id, toolCallId),
  "baton.useLocalModel": (s) => useLocalModel(s),
  "baton.useCompatibleServer": (s) => useCompatibleServer(s),
  // With a model id (the welcome's list), that model; without, the server's models to pick from.
  "baton.chooseWorkspaceModel": (s, model) =>
    typeof model === "string" && model.trim() ? useWorkspaceModel(s, model.trim()) : chooseWorkspaceModel(s),
  "baton.setPythonPath": () => setPythonPath(),
  "baton.switchSession": (s) => switchSession(s),
  "baton.focusPrompt": (s) => focusPrompt(s),
  "baton.cancelTurn": (s, id) => cancelTurn(s, id),
  "baton.contextMenu": (s, id) => contextMenu(s, id),
  "baton.undoCompaction": (s, id, compactionId) => undoCompaction(s, id, compactionId),
  "baton.checkStore": (s) => checkStore(s),
  "baton.repairStore": (s) => repairStore(s),
};

export function registerCommands(services: Services): vscode.Disposable[] {
  return Object.entries(COMMANDS).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await handler(services, ...args);
      } catch (error) {
        if (error instanceof StartupError) return undefined; // already shown with its fix
        services.output.appendLine(`[client] ${id}: ${errorMessage(error)}`);
        const actions = isStoreDamage(error) ? ["Repair Store", "Show Log"] : ["Show Log"];
        void vscode.window.showErrorMessage(`Baton: ${errorMessage(error)}`, ...actions).then((choice) => {
          if (choice === "Repair Store") void vscode.commands.executeCommand("baton.repairStore");
          else if (choice) services.output.show(true);
        });
        return undefined;
      }
    }),
  );
}
