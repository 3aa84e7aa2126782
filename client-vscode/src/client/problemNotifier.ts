// Shows a start-up problem as an error notification with buttons that fix it.
import * as vscode from "vscode";
import { describeProblem, StartupError, type FixAction } from "./startupError";

export interface ProblemActions {
  showLog(): void;
  restart(): Promise<void>;
}

export async function notifyProblem(error: unknown, actions: ProblemActions): Promise<void> {
  const description =
    error instanceof StartupError
      ? describeProblem(error.problem)
      : { message: `Baton: the server did not start: ${String(error)}`, actions: [{ title: "Show Log", action: "showLog" as FixAction }] };
  const choice = await vscode.window.showErrorMessage(description.message, ...description.actions.map((a) => a.title));
  const action = description.actions.find((a) => a.title === choice)?.action;
  switch (action) {
    case "openPythonSetting":
      await vscode.commands.executeCommand("workbench.action.openSettings", "baton.pythonPath");
      return;
    case "showLog":
      actions.showLog();
      return;
    case "restart":
      await actions.restart().catch(() => undefined);
      return;
    case undefined:
      return;
  }
}
