// The plan review panel, one per plan file (sessions that share a plan share its
// panel, which follows the session that showed it last): the plan rendered from markdown,
// live-updated on baton/plan/didChange, opened on baton/plan/show and when the
// agent leaves plan mode (status awaiting_approval). Approve, request changes,
// version history with diffs, and the plan file in an editor (the server
// records saved edits as user versions when it next reads the plan).
import path from "node:path";
import * as vscode from "vscode";
import type { BatonClient } from "../../client/batonClient";
import { ErrorCodes, type PlanAnnotation, type PlanInfo } from "../../protocol";
import type { SessionState } from "../../state/sessionState";
import { errorCode, errorMessage } from "../../util/errors";
import { webviewHtml, webviewOptions } from "../../shell/webviewAssets";
import { parsePlanOutbound, type PlanInbound, type PlanOutbound } from "./messages";
import { openLink } from "../sessions/transcriptActions";
import { PLAN_BODY } from "./planBody";
import { countSteps } from "./steps";
import { parseChildProgress } from "../children/childMessages";
import { PLAN_VIEW_TYPE } from "./viewType";


/**
 * The tab's title: the plan file, the session it is shown for and the plan's
 * progress, so that two plans (or one plan in another session) never read alike.
 */
export function panelTitle(plan: PlanInfo | null, sessionTitle: string): string {
  if (!plan) return `Plan: ${sessionTitle}`;
  const { done, total } = countSteps(plan.content);
  const progress = total ? ` (${done}/${total})` : "";
  return `Plan: ${path.basename(plan.path)} · ${sessionTitle}${progress}`;
}

interface PlanPanel {
  panel: vscode.WebviewPanel;
  /** The session whose plan the panel shows: the last one that showed it. */
  sessionId: string;
  /** The plan file (absolute, normalised), or the session's own key while it has no plan. */
  key: string;
}

interface KnownPlan {
  sessionId: string;
  version: number;
  content: string;
}

const sessionKey = (sessionId: string) => `session:${sessionId}`;

export class PlanPanels implements vscode.Disposable {
  /** Plan file (or a session without a plan) → its one panel. */
  private readonly panels = new Map<string, PlanPanel>();
  /** Plan file (absolute path) → the session and content last seen, for saves from the editor. */
  private readonly files = new Map<string, KnownPlan>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly running = new Map<string, boolean>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: BatonClient,
    private readonly state: SessionState,
  ) {
    this.disposables.push(
      client.onPlanDidChange((n) => {
        if (n.status === "awaiting_approval" && n.author === "agent") {
          void this.show(n.sessionId);
        } else {
          // The session's panel, or the panel of the same plan file shown for another session.
          const shownFor = this.panelOf(n.sessionId)?.sessionId ?? (n.path ? this.panels.get(this.fileKey(n.path))?.sessionId : undefined);
          if (shownFor) void this.refresh(shownFor);
        }
      }),
      client.onPlanShow((n) => void this.show(n.sessionId)),
      // Buttons and the "building" line follow whether the session's turn is running.
      state.onDidChangeSession((sessionId) => {
        const running = state.isRunning(sessionId);
        if (this.panelOf(sessionId) && this.running.get(sessionId) !== running) {
          this.running.set(sessionId, running);
          void this.refresh(sessionId).catch(() => undefined);
        }
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => void this.onSaved(doc)),
      // A plan built step by step: the panel says which step a child builds now.
      client.onSessionUpdate(({ sessionId, update }) => {
        const child = parseChildProgress(update);
        if (!child?.step || !this.panelOf(sessionId)) return;
        const { index, total } = child.step;
        this.post(sessionId, { type: "step", step: child.status === "running" ? { index, total, description: child.description } : null });
      }),
    );
  }

  /**
   * Shows the session's plan: the panel its plan file already has is revealed
   * (and now follows this session) instead of opening another one.
   */
  async show(sessionId: string): Promise<void> {
    const plan = await this.client.request("baton/plan/get", { sessionId }).catch(() => null);
    const key = plan ? this.fileKey(plan.path) : sessionKey(sessionId);
    const entry = this.panels.get(key) ?? this.panelOf(sessionId);
    if (entry) {
      entry.sessionId = sessionId;
      this.rekey(entry, key);
      // Last in the map: the session's panel now, should an older one still name the session.
      this.panels.delete(entry.key);
      this.panels.set(entry.key, entry);
      entry.panel.reveal(undefined, true);
    } else {
      this.create(sessionId, key, plan);
    }
    await this.refresh(sessionId);
  }

  /** The panel that shows the session's plan now (the one it showed last), if any. */
  private panelOf(sessionId: string): PlanPanel | undefined {
    let found: PlanPanel | undefined;
    for (const entry of this.panels.values()) if (entry.sessionId === sessionId) found = entry;
    return found;
  }

  private fileKey(planPath: string): string {
    return path.normalize(this.absolute(planPath));
  }

  /** A session's panel that got a plan (or another plan) moves to that file's key, unless that file has a panel. */
  private rekey(entry: PlanPanel, key: string): void {
    if (entry.key === key || this.panels.has(key)) return;
    this.panels.delete(entry.key);
    entry.key = key;
    this.panels.set(key, entry);
  }

  private create(sessionId: string, key: string, plan: PlanInfo | null): PlanPanel {
    const title = this.state.title(sessionId);
    const panel = vscode.window.createWebviewPanel(
      PLAN_VIEW_TYPE,
      title ? panelTitle(plan, title) : "Baton Plan",
      {
        // Beside the code being discussed; in the main area when nothing is open.
        viewColumn: vscode.window.visibleTextEditors.length > 0 ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active,
        preserveFocus: true,
      },
      { ...webviewOptions(this.extensionUri), retainContextWhenHidden: true, enableFindWidget: true },
    );
    panel.webview.html = webviewHtml(panel.webview, this.extensionUri, "plan", "Baton Plan", PLAN_BODY);
    const entry: PlanPanel = { panel, sessionId, key };
    const subscriptions = [
      panel.webview.onDidReceiveMessage((raw: unknown) => {
        const message = parsePlanOutbound(raw);
        if (!message) return;
        const target = entry.sessionId;
        void this.handle(target, message).catch((error) =>
          this.post(target, { type: "notice", level: "error", message: errorMessage(error) }),
        );
      }),
      panel.onDidChangeViewState(() => void panel.webview.postMessage({ type: "inView", visible: panel.visible } satisfies PlanInbound)),
    ];
    panel.onDidDispose(() => {
      if (this.panels.get(entry.key) === entry) this.panels.delete(entry.key);
      for (const s of subscriptions) s.dispose();
    });
    this.panels.set(key, entry);
    return entry;
  }

  private post(sessionId: string, message: PlanInbound): void {
    void this.panelOf(sessionId)?.panel.webview.postMessage(message);
  }

  private async handle(sessionId: string, message: PlanOutbound): Promise<void> {
    switch (message.type) {
      case "ready":
      case "refresh":
        await this.refresh(sessionId);
        return;
      case "approve":
        await this.approve(sessionId, { fresh: message.fresh, ...(message.steps ? { steps: true } : {}) });
        return;
      case "requestChanges":
        await this.requestChanges(sessionId, message.feedback, message.annotations);
        return;
      case "openFile":
        await this.openFile(sessionId);
        return;
      case "getVersion":
        await this.sendVersion(sessionId, message.version);
        return;
      case "openLink":
        await openLink(message.url);
        return;
    }
  }

  async refresh(sessionId: string): Promise<PlanInfo | null> {
    const [plan, history] = await Promise.all([
      this.client.request("baton/plan/get", { sessionId }),
      this.client.request("baton/plan/history", { sessionId }).catch(() => ({ versions: [] })),
    ]);
    if (plan) this.remember(sessionId, plan);
    const entry = this.panelOf(sessionId);
    if (entry && plan) this.rekey(entry, this.fileKey(plan.path));
    const title = this.state.title(sessionId) ?? sessionId;
    this.post(sessionId, {
      type: "plan",
      sessionId,
      title,
      plan,
      versions: history.versions,
      running: this.state.isRunning(sessionId),
    });
    if (entry) entry.panel.title = panelTitle(plan, title);
    return plan;
  }

  /** After an undo: the plan file may be back to an earlier version. */
  async refreshIfOpen(sessionId: string): Promise<void> {
    if (this.panelOf(sessionId)) await this.refresh(sessionId).catch(() => undefined);
  }

  /**
   * Approves the plan and starts the build. `fresh`: the build starts from the
   * person's requests, the ledger and the approved plan (no summary call); the
   * planning conversation stays in the history, one `recall` away.
   */
  async approve(sessionId: string, options: { fresh: boolean; steps?: boolean }): Promise<void> {
    this.post(sessionId, { type: "busy", busy: true });
    try {
      const result = await this.client.request("baton/plan/approve", {
        sessionId,
        start: true,
        // `steps`: Baton runs each open step in a fresh `build` child, in order.
        ...(options.steps ? { build: "steps" as const } : options.fresh ? { fresh: true } : {}),
      });
      this.state.setMode(sessionId, result.mode);
      const how = options.steps ? "building it step by step" : options.fresh ? "building in a fresh context" : "building";
      this.post(sessionId, { type: "notice", level: "info", message: `Approved; the session is in ${result.mode} mode, ${how}.` });
    } finally {
      this.post(sessionId, { type: "busy", busy: false });
    }
    if (this.panelOf(sessionId)) await this.refresh(sessionId);
  }

  /** The overall comment and every annotation, as one request (the model gets them as one message). */
  async requestChanges(sessionId: string, feedback: string, annotations: PlanAnnotation[] = []): Promise<void> {
    this.post(sessionId, { type: "busy", busy: true });
    try {
      await this.client.request("baton/plan/requestChanges", {
        sessionId,
        feedback: feedback.trim(),
        ...(annotations.length ? { annotations } : {}),
      });
      this.post(sessionId, { type: "reviewSent" });
      const notes = annotations.length === 1 ? "1 annotation" : `${annotations.length} annotations`;
      const what = annotations.length ? `${notes}${feedback.trim() ? " and your comment" : ""} sent` : "Feedback sent";
      this.post(sessionId, { type: "notice", level: "info", message: `${what}; the agent is revising the plan.` });
    } finally {
      this.post(sessionId, { type: "busy", busy: false });
    }
  }

  async openFile(sessionId: string): Promise<void> {
    const plan = await this.client.request("baton/plan/get", { sessionId });
    if (!plan) {
      void vscode.window.showInformationMessage("Baton: this session has no plan yet.");
      return;
    }
    this.remember(sessionId, plan);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(this.absolute(plan.path)));
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.One });
  }

  private async sendVersion(sessionId: string, version: number): Promise<void> {
    try {
      const result = await this.client.request("baton/plan/getVersion", { sessionId, version });
      this.post(sessionId, { type: "versionContent", ...result });
    } catch (error) {
      const message =
        errorCode(error) === ErrorCodes.methodNotFound
          ? "This server cannot return old plan versions yet (baton/plan/getVersion)."
          : errorMessage(error);
      this.post(sessionId, { type: "versionUnavailable", version, message });
    }
  }

  private absolute(planPath: string): string {
    if (path.isAbsolute(planPath)) return planPath;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
    return path.join(folder, planPath);
  }

  private remember(sessionId: string, plan: PlanInfo): void {
    this.files.set(path.normalize(this.absolute(plan.path)), {
      sessionId,
      version: plan.version,
      content: plan.content,
    });
  }

  /**
   * The server picks up edits to the plan file whenever it reads the plan
   * (a `user` version); asking for the plan after a save records the edit now
   * and refreshes the panel.
   */
  private async onSaved(doc: vscode.TextDocument): Promise<void> {
    const known = this.files.get(path.normalize(doc.uri.fsPath));
    if (!known || doc.getText() === known.content) return;
    try {
      const shownFor = this.panels.get(path.normalize(doc.uri.fsPath))?.sessionId;
      if (shownFor) await this.refresh(shownFor);
      else {
        const plan = await this.client.request("baton/plan/get", { sessionId: known.sessionId });
        if (plan) this.remember(known.sessionId, plan);
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Baton: could not record the plan edit: ${errorMessage(error)}`);
    }
  }

  dispose(): void {
    for (const entry of [...this.panels.values()]) entry.panel.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
