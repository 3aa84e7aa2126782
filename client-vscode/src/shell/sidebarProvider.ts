// The sidebar agent: a webview view that lists sessions, runs prompts and
// shows the streamed answer, tool calls and permission prompts. It relays
// between the webview and the server; the transcript lives in the webview
// (retained while hidden) and is reloaded with baton/session/load.
import * as vscode from "vscode";
import type { BatonClient } from "../client/batonClient";
import type { WorkspaceTrust } from "../client/workspaceTrust";
import type { Message, Mode, PermissionRequestParams, PermissionResponse, PromptParams, SessionInfo } from "../protocol";
import { promptContext, type AttachmentRef } from "../features/review/editorContext";
import type { SessionState } from "../state/sessionState";
import { errorCause, errorMessage } from "../util/errors";
import { webviewHtml, webviewOptions } from "./webviewAssets";
import { type SessionInfoView, type SetupView, needsServerModel, type SidebarInbound, type ImageRef } from "./messages";
import { MessageRegistry } from "./messageRegistry";
import type { SidebarHost } from "./sidebarHost";
import { countSteps } from "../features/plans/steps";
import type { ChildTranscripts } from "../features/children/childTranscript";
import { PermissionPrompts } from "../features/permissions/permissionPrompts";
import { SIDEBAR_BODY } from "./sidebarBody";

export const SIDEBAR_VIEW_ID = "baton.agent";

export class SidebarProvider implements vscode.WebviewViewProvider, vscode.Disposable, SidebarHost {
  private view: vscode.WebviewView | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** What the webview posts, each type handled by the feature that registered it (src/features/index.ts). */
  readonly messages: MessageRegistry;
  /** Permission prompts asked in the sidebar's cards (or a dialog when it is not showing). */
  readonly permissions: PermissionPrompts;
  /** Attachments added while the view was not there yet; sent when it is ready. */
  private queuedAttachments: AttachmentRef[] = [];
  /** The view whose script has said "ready" (messages posted before that are lost). */
  private readyView: vscode.WebviewView | undefined;
  /** Each session's plan as last seen (null: none), for the sidebar's plan line. */
  private readonly plans = new Map<string, SessionInfoView["plan"]>();
  /** The load the active-session listener started, while it is on its way (`activate`). */
  private activation: { sessionId: string; load: Promise<void> } | undefined;
  /** How many mode changes this sidebar has asked for, per session: a load that began
   * before one does not show its older mode. */
  private readonly modeChanges = new Map<string, number>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    readonly client: BatonClient,
    readonly state: SessionState,
    /** How a model is set up now (provider setting, whether a key is stored). */
    private readonly setup: () => Promise<SetupView> = async () => ({ hasKey: false }),
    /** Workspace Trust as the server knows it: the sidebar says what is ignored meanwhile. */
    private readonly trust?: WorkspaceTrust,
    /** Child sessions' transcripts, opened from their cards. */
    private readonly childTranscripts?: ChildTranscripts,
    /** Where a webview message no feature takes is reported. */
    logError: (line: string) => void = () => undefined,
  ) {
    this.messages = new MessageRegistry(logError);
    this.permissions = new PermissionPrompts(this, (sessionId) => this.childTranscripts?.describe(sessionId));
    // The handshake is the sidebar's own; every other message belongs to a feature.
    this.disposables.push(this.messages.on("ready", (message) => this.ready(message.activeSessionId)));
    if (trust) this.disposables.push(trust.onDidChange((view) => this.post({ type: "trust", trust: view ?? null })));
    this.disposables.push(
      client.onSessionUpdate((n) => this.post({ type: "update", sessionId: n.sessionId, update: n.update })),
      // Once a turn ends its messages have ids: the webview puts Undo on the turn.
      client.onSessionUpdate(({ sessionId, update }) => {
        if (update.kind === "turn_ended" && sessionId === state.activeSessionId) void this.postMarks(sessionId).catch(() => undefined);
      }),
      client.onDidChangeState((status) => {
        this.post({ type: "server", status });
        if (status === "running" && this.view) {
          void this.refreshSessions();
          void this.postSetup();
        }
      }),
      state.onDidChangeActive((sessionId) => {
        if (!sessionId || !this.view) return;
        const load = this.loadSession(sessionId);
        this.activation = { sessionId, load };
        void load
          .catch(() => undefined)
          .finally(() => {
            if (this.activation?.load === load) this.activation = undefined;
          });
      }),
      // Mode changes made elsewhere (Toggle Plan Mode, plan approval) show here too.
      state.onDidChangeSession((sessionId) => {
        const mode = state.mode(sessionId);
        if (mode) this.post({ type: "mode", sessionId, mode });
        if (sessionId === state.activeSessionId) this.postInfo(sessionId);
      }),
      // Token totals follow every request's usage report, whether or not the view shows.
      client.onSessionUpdate(({ sessionId, update }) => {
        if (update.kind === "usage" && update.inputTokens != null) {
          state.addTokens(sessionId, update.inputTokens, update.cachedTokens ?? 0, update.outputTokens ?? 0);
        } else if (update.kind === "turn_ended" && this.view && sessionId === state.activeSessionId) {
          void this.postForkPoint(sessionId).catch(() => undefined);
        }
      }),
      client.onPlanDidChange((n) => {
        // The notification carries no content: ask for the plan so the line shows its progress.
        this.plans.set(n.sessionId, { path: n.path, status: n.status, version: n.version, ...this.progressOf(n.sessionId) });
        if (n.sessionId === state.activeSessionId) {
          this.postInfo(n.sessionId);
          void this.seedPlan(n.sessionId).catch(() => undefined);
        }
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("baton")) void this.postSetup();
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = webviewOptions(this.extensionUri);
    view.webview.html = webviewHtml(view.webview, this.extensionUri, "sidebar", "Baton", SIDEBAR_BODY);
    this.disposables.push(
      view.webview.onDidReceiveMessage((raw: unknown) => {
        void this.messages.dispatch(raw).catch((error) => this.post({ type: "error", message: errorMessage(error) }));
      }),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  get isVisible(): boolean {
    return this.view?.visible ?? false;
  }

  get isReady(): boolean {
    return Boolean(this.view?.visible) && this.readyView === this.view;
  }

  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${SIDEBAR_VIEW_ID}.focus`);
  }

  /** Reveals the sidebar and shows the session in it. */
  async showSession(sessionId: string): Promise<void> {
    const hadView = this.view !== undefined;
    const shown = this.activate(sessionId);
    await vscode.commands.executeCommand(`${SIDEBAR_VIEW_ID}.focus`);
    if (this.view) {
      await this.refreshSessions();
      // A view the focus just made has not loaded it yet.
      await (hadView ? shown : this.loadSession(sessionId));
    }
  }

  /**
   * Makes the session the active one and shows it, loading it once whoever asked:
   * when that changes the active session, the active-session listener has started the
   * load, and this waits for it. Two loads of a new session raced, and the later one
   * could show a mode the person had changed in between.
   */
  async activate(sessionId: string): Promise<void> {
    this.state.setActive(sessionId);
    if (!this.view) return;
    const started = this.activation;
    await (started?.sessionId === sessionId ? started.load : this.loadSession(sessionId));
  }

  /** A child session's transcript, read-only (the sidebar stays on its parent). */
  async openChild(sessionId: string): Promise<void> {
    await this.childTranscripts?.show(sessionId);
  }

  /** Answers baton/permission/request in the sidebar when it is showing, else in a dialog. */
  askPermission(
    params: PermissionRequestParams,
    token: vscode.CancellationToken,
    /** `editable`: its proposal is open for editing in the diff editor, which a modal dialog would block. */
    options: { editable?: boolean } = {},
  ): Promise<PermissionResponse> {
    return this.permissions.ask(params, token, options);
  }

  /** The person edited a pending proposal in the diff editor (or edited it back). */
  permissionEdited(state: { toolCallId: string; edited: boolean }): void {
    this.permissions.edited(state);
  }

  /** Features in their own modules (the question card) post their own messages: false
   * when the view is not showing with its script ready, so the feature asks another way. */
  postFeature(message: { type: string }): boolean {
    if (!this.isReady) return false;
    void this.view?.webview.postMessage(message);
    return true;
  }

  post(message: SidebarInbound): void {
    void this.view?.webview.postMessage(message);
  }

  /** The webview's script is there: what it shows first, then the active session. */
  private async ready(activeSessionId: string | null): Promise<void> {
    this.post({ type: "server", status: this.client.state });
    void this.postSetup();
    this.post({ type: "trust", trust: this.trust?.view ?? null });
    await this.client.ensureStarted();
    const sessions = await this.refreshSessions();
    const wanted = activeSessionId ?? this.state.activeSessionId;
    const active = sessions.find((s) => s.sessionId === wanted) ?? sessions[0];
    if (active) await this.activate(active.sessionId);
    this.readyView = this.view;
    this.flushAttachments();
  }

  async setMode(sessionId: string, mode: Mode): Promise<void> {
    this.modeChanges.set(sessionId, (this.modeChanges.get(sessionId) ?? 0) + 1);
    const result = await this.client.request("baton/session/setMode", { sessionId, mode });
    this.state.setMode(sessionId, result.mode);
    this.post({ type: "mode", sessionId, mode: result.mode });
  }

  /** Tells the webview how a model is set up (the welcome state and error actions). */
  async postSetup(): Promise<void> {
    const setup = await this.setup();
    this.post({ type: "setup", setup });
    if (!needsServerModel(setup) || this.client.state !== "running") return;
    // A server and no model (OPENAI_BASE_URL alone): the welcome offers what the server lists.
    try {
      const listed = await this.client.request("baton/models/list", {});
      if (listed.source === "provider") setup.serverModels = listed.models.map((m) => m.id);
      else if (listed.error) setup.serverModelsError = listed.error;
    } catch (error) {
      setup.serverModelsError = errorMessage(error);
    }
    this.post({ type: "setup", setup });
  }

  /** Puts the caret in the prompt box (after New Session, or from the keybinding). */
  async focusPrompt(): Promise<void> {
    await vscode.commands.executeCommand(`${SIDEBAR_VIEW_ID}.focus`);
    this.post({ type: "focusPrompt" });
  }

  /**
   * Sends the failed turn's prompt again. When the failed turn changed no files, it is
   * taken back first (baton/session/revert), so the model does not see the prompt twice.
   */
  async retry(sessionId: string): Promise<void> {
    const loaded = await this.client.request("baton/session/load", { sessionId });
    const last = lastPrompt(loaded.messages);
    if (!last) throw new Error("there is no prompt to send again");
    const preview = await this.client
      .request("baton/session/revert", { sessionId, messageId: last.id, dryRun: true })
      .catch(() => undefined);
    const changesFiles = preview ? preview.files.some((f) => f.action !== "unchanged") : true;
    if (!changesFiles) await this.client.request("baton/session/revert", { sessionId, messageId: last.id });
    if (!changesFiles) await this.loadSession(sessionId);
    this.post({ type: "userMessage", sessionId, text: last.text });
    await this.prompt(sessionId, last.text);
  }

  /** Adds a file or selection to the prompt box's attachments, revealing the sidebar. */
  async attach(attachment: AttachmentRef): Promise<void> {
    this.queuedAttachments.push(attachment);
    await vscode.commands.executeCommand(`${SIDEBAR_VIEW_ID}.focus`);
    if (this.view && this.readyView === this.view) this.flushAttachments();
  }

  private flushAttachments(): void {
    for (const attachment of this.queuedAttachments.splice(0)) this.post({ type: "attach", attachment });
  }

  /** Shows a session's history again from the server (after a revert). */
  async reloadSession(sessionId: string): Promise<void> {
    if (this.view && sessionId === this.state.activeSessionId) await this.loadSession(sessionId);
  }

  /** Ids and reverted marks of the session's messages, for the turns streamed live. */
  private async postMarks(sessionId: string): Promise<void> {
    const loaded = await this.client.request("baton/session/load", { sessionId });
    this.post({
      type: "messageMarks",
      sessionId,
      messages: loaded.messages.map((m) => ({
        id: m.id,
        role: m.role,
        reverted: m.reverted === true,
        // A slash command's node shows what the person typed: it is matched by that.
        ...(m.role === "user"
          ? { text: m.command?.typed ?? m.parts.map((part) => (part.type === "text" ? part.text : "")).join("") }
          : {}),
      })),
    });
  }

  /** The active session was deleted and none is left: show an empty sidebar. */
  clearSession(): void {
    this.post({ type: "sessions", sessions: [], activeSessionId: null });
  }

  /** Model, token totals, context meter and plan line of a session, as the sidebar shows them. */
  sessionInfo(sessionId: string): SessionInfoView {
    const info: SessionInfoView = {};
    const choice = this.state.modelOf(sessionId);
    if (choice?.provider) info.provider = choice.provider;
    if (choice?.model) info.model = choice.model;
    const totals = this.state.tokenTotals(sessionId);
    if (totals) info.tokens = { ...totals };
    const usage = this.state.usageOf(sessionId);
    if (usage) info.context = { tokens: usage.tokens, contextWindow: usage.contextWindow };
    if (this.plans.has(sessionId)) info.plan = this.plans.get(sessionId) ?? null;
    return info;
  }

  private progressOf(sessionId: string): { done?: number; total?: number } {
    const known = this.plans.get(sessionId);
    return known && known.total !== undefined ? { done: known.done ?? 0, total: known.total } : {};
  }

  private async seedPlan(sessionId: string): Promise<void> {
    const plan = await this.client.request("baton/plan/get", { sessionId });
    this.plans.set(sessionId, plan ? { path: plan.path, status: plan.status, version: plan.version, ...countSteps(plan.content) } : null);
    if (sessionId === this.state.activeSessionId) this.postInfo(sessionId);
  }

  /** Streamed messages carry no ids: after a turn, look up the answer the session can fork after. */
  private async postForkPoint(sessionId: string): Promise<void> {
    const loaded = await this.client.request("baton/session/load", { sessionId });
    const last = loaded.messages[loaded.messages.length - 1];
    if (last && last.role === "assistant") this.post({ type: "forkPoint", sessionId, messageId: last.id });
  }

  private postInfo(sessionId: string): void {
    this.post({ type: "sessionInfo", sessionId, info: this.sessionInfo(sessionId) });
  }

  /** The plan line and context meter of a session being resumed. */
  private async seedInfo(sessionId: string): Promise<void> {
    const [plan, context] = await Promise.all([
      this.client.request("baton/plan/get", { sessionId }).catch(() => undefined),
      this.state.usageOf(sessionId) ? undefined : this.client.request("baton/session/context", { sessionId }).catch(() => undefined),
    ]);
    if (plan !== undefined) {
      this.plans.set(sessionId, plan ? { path: plan.path, status: plan.status, version: plan.version, ...countSteps(plan.content) } : null);
    }
    if (context && !this.state.usageOf(sessionId)) {
      this.state.setUsage(sessionId, { tokens: context.tokens, contextWindow: context.contextWindow });
    }
    this.postInfo(sessionId);
  }

  /** `planPath`: a plan file of the workspace the session carries on from (its first open step). */
  async newSession(mode: Mode, options: { planPath?: string } = {}): Promise<string> {
    const { sessionId } = await this.client.request("baton/session/new", {
      mode,
      ...(options.planPath ? { planPath: options.planPath } : {}),
    });
    this.state.remember(sessionId, { mode });
    const shown = this.activate(sessionId);
    await this.refreshSessions();
    await shown;
    this.post({ type: "focusPrompt" });
    return sessionId;
  }

  async prompt(sessionId: string, text: string, attachments: AttachmentRef[] = [], images: ImageRef[] = []): Promise<void> {
    this.state.setRunning(sessionId, true);
    this.post({ type: "turn", sessionId, running: true });
    try {
      // Chips and `@path` mentions become the prompt's editor context (the server reads the files).
      const context = await promptContext(attachments, text, vscode.workspace.workspaceFolders?.[0]);
      const result = await this.client.request("baton/session/prompt", {
        sessionId,
        text,
        ...(context.length ? { context } : {}),
        // parseImages bounds the list to the wire's at most 8 (typed as tuples).
        ...(images.length ? { images: images as PromptParams["images"] } : {}),
      });
      this.post({
        type: "turn",
        sessionId,
        running: false,
        stopReason: result.stopReason,
        ...(result.error ? { error: result.error } : {}),
        ...(result.cause ? { cause: result.cause } : {}),
      });
    } catch (error) {
      const cause = errorCause(error);
      this.post({ type: "turn", sessionId, running: false, stopReason: "error", error: errorMessage(error), ...(cause ? { cause } : {}) });
    } finally {
      this.state.setRunning(sessionId, false);
      void this.refreshSessions().catch(() => undefined);
    }
  }

  async refreshSessions(): Promise<SessionInfo[]> {
    const { sessions } = await this.client.request("baton/session/list", {});
    for (const s of sessions) this.state.remember(s.sessionId, { mode: s.mode, title: s.title });
    this.post({ type: "sessions", sessions, activeSessionId: this.state.activeSessionId ?? null });
    return sessions;
  }

  async loadSession(sessionId: string): Promise<void> {
    const modeChanges = this.modeChanges.get(sessionId);
    const loaded = await this.client.request("baton/session/load", { sessionId });
    // A mode the person set while the load was on its way is newer than the loaded one.
    const mode = modeChanges === this.modeChanges.get(sessionId) ? loaded.mode : (this.state.mode(sessionId) ?? loaded.mode);
    this.state.remember(sessionId, { mode, title: loaded.title });
    if (loaded.usage) {
      const u = loaded.usage;
      this.state.setTokenTotals(sessionId, {
        input: u.inputTokens ?? 0,
        cached: u.cachedTokens ?? 0,
        output: u.outputTokens ?? 0,
        requests: u.requests ?? 0,
      });
    }
    if (loaded.model) {
      this.state.setModel(sessionId, { ...(loaded.provider ? { provider: loaded.provider } : {}), model: loaded.model });
    }
    this.post({
      type: "history",
      sessionId,
      title: loaded.title,
      mode,
      messages: loaded.messages,
      running: this.state.isRunning(sessionId),
      ...(loaded.turns?.length ? { turns: loaded.turns } : {}),
      ...(loaded.notices?.length ? { notices: loaded.notices } : {}),
    });
    void this.seedInfo(sessionId);
  }

  dispose(): void {
    this.permissions.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** The last prompt of the session that is still in the model's view, with its text. */
function lastPrompt(messages: Message[]): { id: string; text: string } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m || m.role !== "user" || m.reverted) continue;
    const text = m.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
    if (text.trim()) return { id: m.id, text };
  }
  return undefined;
}
