// The Plans view's actions, also in the palette (a quick pick of the plans):
// New Session on a Plan…, Open a Plan File…, Attach a Plan to This Session….
import path from "node:path";
import * as vscode from "vscode";
import type { Mode, PlanListEntry } from "../../protocol";
import type { Services } from "../../services";
import { entryPath, planDescription } from "./plansView";

/** The entry given (from the tree), else the one the person picks from the workspace's plans. */
async function pickPlan(services: Services, given: unknown, title: string): Promise<PlanListEntry | undefined> {
  const wanted = entryPath(given);
  const entries = wanted ? await services.plansView.list() : await services.plansView.refresh();
  if (wanted) {
    const known = entries.find((e) => e.path === wanted);
    if (known) return known;
    // Not listed (yet): the path is enough for the server, which checks it.
    return { path: wanted, title: wanted, status: "draft", version: 0, stepsDone: 0, stepsTotal: 0, lastSessionId: null, lastSessionTitle: null, updatedAt: "" };
  }
  if (entries.length === 0) {
    void vscode.window.showInformationMessage("Baton: there are no plans in this workspace yet. In Plan mode the agent writes one.");
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    entries.map((entry) => ({ label: entry.title || entry.path, description: planDescription(entry), detail: entry.path, entry })),
    { title: `Baton: ${title}`, matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.entry;
}

/** A plan still being written or reviewed is worked on in plan mode; an approved one is built. */
function modeFor(entry: PlanListEntry): Mode {
  return entry.status === "draft" || entry.status === "awaiting_approval" ? "plan" : "build";
}

export async function newSessionOnPlan(services: Services, given?: unknown): Promise<string | undefined> {
  const entry = await pickPlan(services, given, "start a new session on a plan");
  if (!entry) return undefined;
  const sessionId = await services.sidebar.newSession(modeFor(entry), { planPath: entry.path });
  await services.sidebar.showSession(sessionId);
  void services.plansView.refresh().catch(() => undefined);
  return sessionId;
}

export async function openListedPlan(services: Services, given?: unknown): Promise<void> {
  const entry = await pickPlan(services, given, "open a plan file");
  if (!entry) return;
  const folder = vscode.workspace.workspaceFolders?.[0];
  const file = path.isAbsolute(entry.path) || !folder ? vscode.Uri.file(entry.path) : vscode.Uri.joinPath(folder.uri, entry.path);
  const doc = await vscode.workspace.openTextDocument(file);
  await vscode.window.showTextDocument(doc, { preview: true });
}

export async function attachPlan(services: Services, given?: unknown): Promise<void> {
  const entry = await pickPlan(services, given, "attach a plan to this session");
  if (!entry) return;
  const sessionId = services.state.activeSessionId;
  if (!sessionId) {
    const choice = await vscode.window.showInformationMessage(
      "Baton: no session is open to attach the plan to. Start a new session on it?",
      "New Session on This Plan",
    );
    if (choice) await newSessionOnPlan(services, entry);
    return;
  }
  const title = services.state.title(sessionId) ?? sessionId;
  const current = await services.client.request("baton/plan/get", { sessionId }).catch(() => null);
  if (current && current.path === entry.path) {
    void vscode.window.showInformationMessage(`Baton: “${title}” already follows ${entry.path}.`);
    return;
  }
  if (current) {
    // A session follows one plan: the server attaches a plan only to a session without one.
    const choice = await vscode.window.showInformationMessage(
      `Baton: “${title}” already follows ${current.path}. Start a new session on ${entry.path} instead?`,
      "New Session on This Plan",
    );
    if (choice) await newSessionOnPlan(services, entry);
    return;
  }
  const result = await services.client.request("baton/plan/attach", { sessionId, path: entry.path });
  await services.sidebar.reloadSession(sessionId);
  await services.plans.refreshIfOpen(sessionId);
  void services.plansView.refresh().catch(() => undefined);
  const choice = await vscode.window.showInformationMessage(
    `Baton: “${title}” now follows ${result.path} (version ${result.version}).`,
    "Show Plan",
  );
  if (choice) await services.plans.show(sessionId);
}
