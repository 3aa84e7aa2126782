// Baton: Check Store, Repair Store: the way out of a damaged session store.
import * as vscode from "vscode";
import { runProcess } from "../../client/processRunner";
import type { StoreCheckResult, StoreRepairResult } from "../../protocol";
import type { Services } from "../../services";
import { errorCode, errorMessage } from "../../util/errors";

/** The server's "store damaged" error (its message names the file and the way out). */
export const STORE_DAMAGED = -32013;
const REPAIR = "Repair Store";

/** Whether an error says the store is damaged: the code, or the start-up error that carries it. */
export function isStoreDamage(error: unknown): boolean {
  return errorCode(error) === STORE_DAMAGED || /the store at .* is damaged/.test(errorMessage(error));
}

export async function checkStore(services: Services): Promise<void> {
  let result: StoreCheckResult;
  try {
    result = await services.client.request("baton/store/check", {});
  } catch (error) {
    // A store that cannot even be opened stops the server's start: ask `baton doctor`.
    if (!isStoreDamage(error)) throw error;
    result = (await runDoctor(services, [])) as StoreCheckResult;
  }
  if (result.ok) {
    const what = result.exists ? `${result.sessions ?? 0} sessions, ${((result.sizeBytes ?? 0) / 1e6).toFixed(1)} MB` : "no sessions yet";
    void vscode.window.showInformationMessage(`Baton: the session store is whole (${what}).`);
    return;
  }
  const problems = result.problems ?? [];
  services.output.appendLine(`[store] ${result.path} is damaged:`);
  for (const problem of problems) services.output.appendLine(`[store]   ${problem}`);
  const choice = await vscode.window.showWarningMessage(
    `Baton: the session store is damaged (${problems.length} problem${problems.length === 1 ? "" : "s"}, listed in the log). Repair keeps the damaged file and recovers every readable session.`,
    REPAIR,
    "Show Log",
  );
  if (choice === REPAIR) await repairStore(services, { confirmed: true });
  else if (choice === "Show Log") services.output.show(true);
}

export async function repairStore(services: Services, options: { confirmed?: boolean } = {}): Promise<void> {
  if (!options.confirmed) {
    const choice = await vscode.window.showWarningMessage(
      "Repair Baton's session store for this folder?",
      {
        modal: true,
        detail:
          "The store's file is kept, unchanged, beside the new one (baton.db.damaged-<time>); every session that can be read is recovered into a new store. Nothing is deleted. Other VS Code windows on this folder must be closed first.",
      },
      REPAIR,
    );
    if (choice !== REPAIR) return;
  }
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Baton: repairing the session store" },
    async () => {
      try {
        return await services.client.request("baton/store/repair", {});
      } catch (error) {
        if (!isStoreDamage(error)) throw error;
        // The server could not open the store at all: repair it with the server stopped.
        await services.client.stop();
        const done = (await runDoctor(services, ["--repair"])) as StoreRepairResult | StoreCheckResult;
        if (!("backupPath" in done)) throw new Error("the store could not be opened, yet `baton doctor` finds nothing to repair; see the log");
        return done;
      }
    },
  );
  reportRepair(services, result);
  // Sessions, plans and the sidebar are read afresh from the new store.
  await services.client.restart();
}

function reportRepair(services: Services, result: StoreRepairResult): void {
  services.output.appendLine(`[store] kept the damaged store, unchanged, at ${result.backupPath}`);
  for (const s of result.sessions) {
    services.output.appendLine(`[store] recovered ${s.sessionId} "${s.title}": ${s.messages} messages${s.recreated ? " (record made anew)" : ""}`);
  }
  for (const [table, n] of Object.entries(result.damagedRegions ?? {})) {
    services.output.appendLine(`[store] skipped ${String(n)} damaged stretch${n === 1 ? "" : "es"} of ${table}`);
  }
  const summary = `Baton: recovered ${result.sessions.length} session${result.sessions.length === 1 ? "" : "s"} (${result.messages} messages) into a new store; the damaged one is kept at ${result.backupPath}.`;
  const show = result.check.ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  void show(result.check.ok ? summary : `${summary} The new store still has problems.`, "Show Log").then((choice) => {
    if (choice) services.output.show(true);
  });
}

/** `baton doctor [--repair] --json` in the workspace, with the server's interpreter. */
async function runDoctor(services: Services, args: string[]): Promise<unknown> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const python = services.client.pythonCommand ?? "python3";
  const done = await runProcess(python, ["-m", "baton", "doctor", ...args, "--json"], {
    env: services.client.launchEnv,
    ...(folder ? { cwd: folder.uri.fsPath } : {}),
    timeoutMs: 10 * 60_000,
  });
  services.output.appendLine(`[store] baton doctor ${args.join(" ")}: exit ${String(done.code)}`);
  if (done.stderr.trim()) services.output.appendLine(done.stderr.trimEnd());
  try {
    return JSON.parse(done.stdout);
  } catch {
    throw new Error(`baton doctor ${args.join(" ")} failed: ${done.stderr.trim() || `exit ${String(done.code)}`}`);
  }
}
