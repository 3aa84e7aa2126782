// The Plans view in the Baton sidebar: the workspace's plan files as the
// server lists them (baton/plan/list: status, steps done of total, the last
// session that had each one). Plans outlive sessions: from an entry the person
// starts a new session on the plan, opens its file, or attaches it to the
// current session (src/features/plans/planListCommands.ts).
import * as vscode from "vscode";
import type { BatonClient } from "../../client/batonClient";
import { ErrorCodes, type PlanListEntry } from "../../protocol";
import { errorCode, errorMessage } from "../../util/errors";
import { isRecord, isString } from "../../shell/guards";

export const PLANS_VIEW_ID = "baton.plans";

export const PLAN_STATUS_LABELS: Record<PlanListEntry["status"], string> = {
  draft: "Draft",
  awaiting_approval: "Awaiting approval",
  approved: "Approved",
  done: "Done",
};

const STATUS_ICONS: Record<PlanListEntry["status"], string> = {
  draft: "edit",
  awaiting_approval: "bell",
  approved: "play-circle",
  done: "pass",
};

/** The entry's one-line summary: status, progress, last session. */
export function planDescription(entry: PlanListEntry): string {
  const parts = [PLAN_STATUS_LABELS[entry.status] ?? entry.status];
  if (entry.stepsTotal > 0) parts.push(`${entry.stepsDone}/${entry.stepsTotal} done`);
  if (entry.lastSessionTitle) parts.push(entry.lastSessionTitle);
  return parts.join(" · ");
}

export function planTooltip(entry: PlanListEntry): string {
  const lines = [
    entry.title || entry.path,
    entry.path,
    `Status: ${PLAN_STATUS_LABELS[entry.status] ?? entry.status}, version ${entry.version}`,
    entry.stepsTotal > 0 ? `Steps: ${entry.stepsDone} of ${entry.stepsTotal} done` : "No task-list steps",
    entry.lastSessionId ? `Last session: ${entry.lastSessionTitle || entry.lastSessionId}` : "No session has worked on it in this store",
  ];
  const updated = new Date(entry.updatedAt);
  if (!Number.isNaN(updated.getTime())) lines.push(`Updated ${updated.toLocaleString()}`);
  return lines.join("\n");
}

/** A plan list entry passed to a command (from the tree, or a caller): only its path matters. */
export function entryPath(value: unknown): string | undefined {
  if (isRecord(value) && isString(value.path, 4096) && value.path !== "") return value.path;
  return undefined;
}

export class PlansView implements vscode.TreeDataProvider<PlanListEntry>, vscode.Disposable {
  private entries: PlanListEntry[] | undefined;
  private loading: Promise<PlanListEntry[]> | undefined;
  private readonly changed = new vscode.EventEmitter<PlanListEntry | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<PlanListEntry>;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: BatonClient,
    plansDir: () => string,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.view = vscode.window.createTreeView(PLANS_VIEW_ID, { treeDataProvider: this, showCollapseAll: false });
    const folder = vscode.workspace.workspaceFolders?.[0];
    const watcher = folder
      ? vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, `${plansDir().replace(/\/+$/, "")}/**/*.md`))
      : undefined;
    this.disposables.push(
      this.view,
      this.changed,
      // A plan file written, ticked, or added by a teammate's pull: list again (once per burst).
      ...(watcher ? [watcher, watcher.onDidCreate(() => this.soon()), watcher.onDidChange(() => this.soon()), watcher.onDidDelete(() => this.soon())] : []),
      client.onPlanDidChange(() => this.soon()),
      client.onDidChangeState((state) => {
        if (state === "running" && this.entries !== undefined) this.soon();
      }),
    );
  }

  /** The plans as last listed (listing them when never done). */
  async list(): Promise<PlanListEntry[]> {
    return this.entries ?? this.load();
  }

  /** Lists the plans again and redraws the view. */
  async refresh(): Promise<PlanListEntry[]> {
    const entries = await this.load();
    this.changed.fire(undefined);
    return entries;
  }

  private soon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh().catch(() => undefined);
    }, 300);
  }

  private load(): Promise<PlanListEntry[]> {
    this.loading ??= this.client
      .request("baton/plan/list", {})
      .then(
        ({ plans }) => {
          this.entries = plans;
          this.log(`plans: ${plans.map((e) => `${e.path} (${e.status}, ${e.stepsDone}/${e.stepsTotal}, ${e.lastSessionTitle ?? "no session"})`).join("; ") || "none"}`);
          this.view.message = plans.length
            ? undefined
            : "No plans in this workspace yet. In Plan mode the agent writes one; plan files stay in the folder for later sessions.";
          return plans;
        },
        (error: unknown) => {
          this.entries = [];
          this.view.message =
            errorCode(error) === ErrorCodes.methodNotFound
              ? "This Baton server cannot list plans (baton/plan/list): update Baton."
              : `Could not list the plans: ${errorMessage(error)}`;
          return [];
        },
      )
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  getTreeItem(entry: PlanListEntry): vscode.TreeItem {
    const item = new vscode.TreeItem(entry.title || entry.path, vscode.TreeItemCollapsibleState.None);
    item.id = entry.path;
    item.description = planDescription(entry);
    item.tooltip = planTooltip(entry);
    item.iconPath = new vscode.ThemeIcon(STATUS_ICONS[entry.status] ?? "checklist");
    item.contextValue = `batonPlan.${entry.status}`;
    item.command = { command: "baton.openListedPlan", title: "Open Plan File", arguments: [entry] };
    item.accessibilityInformation = { label: `${entry.title || entry.path}: ${planDescription(entry)}` };
    return item;
  }

  async getChildren(element?: PlanListEntry): Promise<PlanListEntry[]> {
    if (element) return [];
    return this.list();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
