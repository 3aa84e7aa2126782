// The sidebar agent: a webview view that lists sessions, runs prompts and
// shows the streamed answer, tool calls and permission prompts. It relays
// between the webview and the server; the transcript lives in the webview
// (retained while hidden) and is reloaded with baton/session/load.
import * as vscode from "vscode";
import type { BatonClient } from "../../client/batonClient";
import type { WorkspaceTrust } from "../../client/workspaceTrust";
import type { Message, Mode, PermissionRequestParams, PermissionResponse, PromptParams, SessionInfo } from "../../protocol";
import { FileIndex, promptContext, type AttachmentRef } from "../../review/editorContext";
import type { SessionState } from "../../state/sessionState";
import { errorCause, errorMessage } from "../../util/errors";
import { visibleText } from "../../util/visible";
import { webviewHtml, webviewOptions } from "../webviewAssets";
import {
  parseSidebarOutbound,
  type SessionInfoView,
  type SetupView,
  type SidebarAction,
  needsServerModel,
  type SidebarInbound,
  type SidebarOutbound,
  type ImageRef,
} from "./messages";
import { countSteps } from "../plan/steps";
import type { ChildTranscripts } from "../childTranscript";
import { childAsker } from "./children";
import { SIDEBAR_BODY } from "./sidebarBody";
import { listCommands, runBuiltin, type BuiltinHost } from "./slashCommands";

export const SIDEBAR_VIEW_ID = "baton.agent";

interface PendingPermission {
  resolve(response: PermissionResponse): void;
}

export class SidebarProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly pending = new Map<string, PendingPermission>();
  private requestCounter = 0;
  /** Workspace files for `@` completion in the prompt box. */
  private readonly files = new FileIndex();
  /** Attachments added while the view was not there yet; sent when it is ready. */
  private queuedAttachments: AttachmentRef[] = [];
  /** The view whose script has said "ready" (messages posted before that are lost). */
  private readyView: vscode.WebviewView | undefined;
  /** Each session's plan as last seen (null: none), for the sidebar's plan line. */
  private readonly plans = new Map<string, SessionInfoView["plan"]>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: BatonClient,
    private readonly state: SessionState,
    /** How a model is set up now (provider setting, whether a key is stored). */
    private readonly setup: () => Promise<SetupView> = async () => ({ hasKey: false }),
    /** Workspace Trust as the server knows it: the sidebar says what is ignored meanwhile. */
    private readonly trust?: WorkspaceTrust,
    /** Child sessions' transcripts, opened from their cards. */
    private readonly childTranscripts?: ChildTranscripts,
  ) {
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
        if (sessionId && this.view) void this.loadSession(sessionId).catch(() => undefined);
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
        for (const listener of this.featureListeners) if (listener(raw)) return;
        const message = parseSidebarOutbound(raw);
        if (!message) return; // not ours, or malformed: ignore
        void this.handle(message).catch((error) => this.post({ type: "error", message: errorMessage(error) }));
      }),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  get isVisible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Reveals the sidebar and shows the session in it. */
  async showSession(sessionId: string): Promise<void> {
    this.state.setActive(sessionId);
    await vscode.commands.executeCommand(`${SIDEBAR_VIEW_ID}.focus`);
    if (this.view) {
      await this.refreshSessions();
      await this.loadSession(sessionId);
    }
  }

  /** A child session's transcript, read-only (the sidebar stays on its parent). */
  async openChild(sessionId: string): Promise<void> {
    await this.childTranscripts?.show(sessionId);
  }

  /** Answers baton/permission/request in the sidebar when it is showing, else in a notification. */
  async askPermission(
    params: PermissionRequestParams,
    token: vscode.CancellationToken,
    /** `editable`: its proposal is open for editing in the diff editor, which a modal dialog would block. */
    options: { editable?: boolean } = {},
  ): Promise<PermissionResponse> {
    if ((!this.view || !this.view.visible) && options.editable) {
      // The person may want to edit the proposal before answering: ask in the card, not a modal.
      await vscode.commands.executeCommand(`${SIDEBAR_VIEW_ID}.focus`);
      if (token.isCancellationRequested) return { outcome: "cancelled" };
    }
    if (!this.view || !this.view.visible) {
      const answer = await askInDialog(params, token, this.childTranscripts?.describe(params.sessionId));
      if (answer !== "sidebar") return answer;
      // Too long for a dialog: shown whole in the sidebar's card instead.
      await vscode.commands.executeCommand(`${SIDEBAR_VIEW_ID}.focus`);
      if (token.isCancellationRequested) return { outcome: "cancelled" };
      if (!this.view?.visible) return { outcome: "cancelled" };
    }
    const requestId = `perm-${++this.requestCounter}`;
    return new Promise<PermissionResponse>((resolve) => {
      const finish = (response: PermissionResponse) => {
        if (!this.pending.delete(requestId)) return;
        subscription.dispose();
        this.post({ type: "permissionClosed", requestId });
        resolve(response);
      };
      const subscription = token.onCancellationRequested(() => finish({ outcome: "cancelled" }));
      this.pending.set(requestId, { resolve: finish });
      this.post({
        type: "permission",
        requestId,
        sessionId: params.sessionId,
        toolCall: params.toolCall,
        options: params.options,
        ...(params.diff ? { diff: params.diff } : {}),
        ...(params.reason ? { reason: params.reason } : {}),
        ...childFields(params),
      });
    });
  }

  /** The person edited a pending proposal in the diff editor (or edited it back): the card says
   * whether allowing writes their version. */
  permissionEdited(state: { toolCallId: string; edited: boolean }): void {
    this.post({ type: "permissionEdited", toolCallId: state.toolCallId, edited: state.edited });
  }

  /** Features in their own modules (the question card) post their own messages: false
   * when the view is not showing with its script ready, so the feature asks another way. */
  postFeature(message: { type: string }): boolean {
    if (!this.view?.visible || this.readyView !== this.view) return false;
    void this.view.webview.postMessage(message);
    return true;
  }

  /** A feature's listener sees each message from the view first; true: it was the feature's. */
  onFeatureMessage(listener: (raw: unknown) => boolean): vscode.Disposable {
    this.featureListeners.add(listener);
    return new vscode.Disposable(() => this.featureListeners.delete(listener));
  }

  private readonly featureListeners = new Set<(raw: unknown) => boolean>();

  private post(message: SidebarInbound): void {
    void this.view?.webview.postMessage(message);
  }

  private async handle(message: SidebarOutbound): Promise<void> {
    switch (message.type) {
      case "ready": {
        this.post({ type: "server", status: this.client.state });
        void this.postSetup();
        this.post({ type: "trust", trust: this.trust?.view ?? null });
        await this.client.ensureStarted();
        const sessions = await this.refreshSessions();
        const wanted = message.activeSessionId ?? this.state.activeSessionId;
        const active = sessions.find((s) => s.sessionId === wanted) ?? sessions[0];
        if (active) {
          this.state.setActive(active.sessionId);
          await this.loadSession(active.sessionId);
        }
        this.readyView = this.view;
        this.flushAttachments();
        return;
      }
      case "newSession":
        await this.newSession(message.mode);
        return;
      case "selectSession":
        this.state.setActive(message.sessionId);
        await this.loadSession(message.sessionId);
        return;
      case "prompt": {
        // Send always works: with no session yet, start one in the mode the composer shows.
        let sessionId = message.sessionId;
        if (!sessionId) {
          sessionId = await this.newSession(message.mode ?? "build");
          this.post({ type: "userMessage", sessionId, text: message.text });
        }
        await this.prompt(sessionId, message.text, message.attachments ?? [], message.images ?? []);
        return;
      }
      case "retry":
        await this.retry(message.sessionId);
        return;
      case "openLink":
        await openLink(message.url);
        return;
      case "action":
        await this.runAction(message.action);
        return;
      case "codeAction":
        await codeAction(message.action, message.text);
        return;
      case "revert":
        await vscode.commands.executeCommand("baton.undoTurn", message.sessionId, message.messageId);
        return;
      case "openChange":
        await vscode.commands.executeCommand("baton.openChange", message.sessionId, message.toolCallId);
        return;
      case "showPendingChange":
        await vscode.commands.executeCommand("baton.showPendingChange", message.toolCallId);
        return;
      case "commandsQuery":
        this.post(await listCommands(this.client, this.state.activeSessionId ?? null));
        return;
      case "builtinCommand":
        await runBuiltin(this.builtinHost(), message.sessionId, message.name, message.arguments);
        return;
      case "mentionQuery":
        this.post({ type: "mentionResults", query: message.query, paths: await this.files.search(message.query) });
        return;
      case "cancel":
        await this.client.notify("baton/session/cancel", { sessionId: message.sessionId });
        return;
      case "openChild":
        await this.openChild(message.sessionId);
        return;
      case "setMode": {
        const result = await this.client.request("baton/session/setMode", {
          sessionId: message.sessionId,
          mode: message.mode,
        });
        this.state.setMode(message.sessionId, result.mode);
        this.post({ type: "mode", sessionId: message.sessionId, mode: result.mode });
        return;
      }
      case "permissionAnswer":
        this.pending.get(message.requestId)?.resolve({ outcome: { optionId: message.optionId } });
        return;
      case "showPlan":
        await vscode.commands.executeCommand("baton.showPlan", message.sessionId);
        return;
      case "compact":
        await vscode.commands.executeCommand("baton.compactSession", message.sessionId);
        return;
      case "contextMenu":
        await vscode.commands.executeCommand("baton.contextMenu", message.sessionId);
        return;
      case "renameSession":
        await vscode.commands.executeCommand("baton.renameSession", message.sessionId);
        return;
      case "deleteSession":
        await vscode.commands.executeCommand("baton.deleteSession", message.sessionId);
        return;
      case "forkSession":
        await vscode.commands.executeCommand("baton.forkSession", message.sessionId, message.messageId);
        return;
      case "exportSession":
        await vscode.commands.executeCommand("baton.exportSession", message.sessionId);
        return;
      case "childHistory": {
        const loaded = await this.client.request("baton/session/load", { sessionId: message.sessionId });
        this.post({ type: "childHistory", sessionId: message.sessionId, messages: loaded.messages });
        return;
      }
      case "queue":
        await this.client.request("baton/session/queue", { sessionId: message.sessionId, text: message.text, delivery: message.delivery });
        return;
      case "unqueue":
        await this.client.request("baton/session/unqueue", { sessionId: message.sessionId, id: message.id });
        return;
      case "useModel":
        await vscode.commands.executeCommand("baton.chooseWorkspaceModel", message.model);
        return;
      case "pickModel": {
        // Before the first prompt the model is the new session's: start it, then pick.
        const sessionId = message.sessionId ?? (await this.newSession(message.mode ?? "build"));
        await vscode.commands.executeCommand("baton.selectModel", sessionId);
        return;
      }
    }
  }

  /** What a built-in slash command runs on: the sidebar's own commands and methods. */
  private builtinHost(): BuiltinHost {
    return {
      client: this.client,
      executeCommand: (command, ...args) => vscode.commands.executeCommand(command, ...args),
      newSession: (mode) => this.newSession(mode),
      setMode: async (sessionId, mode) => {
        const result = await this.client.request("baton/session/setMode", { sessionId, mode });
        this.state.setMode(sessionId, result.mode);
        this.post({ type: "mode", sessionId, mode: result.mode });
      },
      prompt: async (sessionId, text) => {
        this.post({ type: "userMessage", sessionId, text });
        await this.prompt(sessionId, text);
      },
      error: (message) => this.post({ type: "error", message }),
    };
  }

  /** The welcome state's and the error actions' buttons: each runs one fixed command. */
  private async runAction(action: SidebarAction): Promise<void> {
    const commands: Record<SidebarAction, string> = {
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
    await vscode.commands.executeCommand(commands[action]);
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
    this.state.setActive(sessionId);
    await this.refreshSessions();
    await this.loadSession(sessionId);
    this.post({ type: "focusPrompt" });
    return sessionId;
  }

  private async prompt(sessionId: string, text: string, attachments: AttachmentRef[] = [], images: ImageRef[] = []): Promise<void> {
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

  private async loadSession(sessionId: string): Promise<void> {
    const loaded = await this.client.request("baton/session/load", { sessionId });
    this.state.remember(sessionId, { mode: loaded.mode, title: loaded.title });
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
      mode: loaded.mode,
      messages: loaded.messages,
      running: this.state.isRunning(sessionId),
      ...(loaded.turns?.length ? { turns: loaded.turns } : {}),
    });
    void this.seedInfo(sessionId);
  }

  dispose(): void {
    for (const p of this.pending.values()) p.resolve({ outcome: "cancelled" });
    this.pending.clear();
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

/** Copy puts the code on the clipboard; Insert replaces the active editor's selection (or opens a new file). */
async function codeAction(action: "copy" | "insert", text: string): Promise<void> {
  if (action === "copy") {
    await vscode.env.clipboard.writeText(text);
    void vscode.window.setStatusBarMessage("Baton: code copied", 2000);
    return;
  }
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    const doc = await vscode.workspace.openTextDocument({ content: text });
    await vscode.window.showTextDocument(doc, { preview: false });
    return;
  }
  await editor.edit((edit) => {
    for (const selection of editor.selections) edit.replace(selection, text);
  });
}

/** Opens a link from a webview through VS Code, after showing the person the full URL. */
export async function openLink(url: string): Promise<void> {
  let uri: vscode.Uri;
  try {
    uri = vscode.Uri.parse(url, true);
  } catch {
    void vscode.window.showWarningMessage(`Baton: not a link that can be opened: ${url}`);
    return;
  }
  if (!["http", "https", "mailto"].includes(uri.scheme)) {
    void vscode.window.showWarningMessage(`Baton: only web and mail links open from the sidebar, not ${uri.scheme}: links.`);
    return;
  }
  const choice = await vscode.window.showInformationMessage(
    "Open this link in your browser?",
    { modal: true, detail: url },
    "Open Link",
  );
  if (choice === "Open Link") await vscode.env.openExternal(uri);
}

/** A child's request carries its parent and agent: the sidebar says which child asks. */
function childFields(params: PermissionRequestParams): { parentId?: string; agent?: string } {
  const asker = childAsker(params);
  return asker ? { parentId: asker.parentId, agent: asker.agent } : {};
}

/** The most a dialog shows; a longer request is shown in the sidebar's card. */
export const DIALOG_LIMIT = { chars: 2_000, lines: 40 };

/**
 * Asks in a modal dialog whose detail is the whole request, escaped (src/util/visible.ts):
 * a toast would cut a long command and render control characters. A request too long for
 * a dialog offers only "Show in Sidebar" or Reject, so nothing unseen can be allowed.
 */
async function askInDialog(
  params: PermissionRequestParams,
  token: vscode.CancellationToken,
  /** Which child asks, when a child's tool does and its parent told of it. */
  child?: string,
): Promise<PermissionResponse | "sidebar"> {
  const labels: Record<string, string> = {
    allow_once: "Allow once",
    allow_always: "Always allow",
    reject_once: "Reject",
  };
  const { name, input } = params.toolCall;
  const full = typeof input.command === "string" ? input.command : JSON.stringify(input, null, 2);
  const shown = visibleText(full) + (params.diff ? `\n\n${visibleText(params.diff, false)}` : "");
  const tooLong = shown.length > DIALOG_LIMIT.chars || shown.split("\n").length > DIALOG_LIMIT.lines;
  type Item = vscode.MessageItem & { optionId?: string; sidebar?: boolean };
  const items: Item[] = tooLong
    ? [{ title: "Show in Sidebar", sidebar: true }, ...params.options.filter((o) => o.kind === "reject_once").map((o) => ({ title: o.name ?? "Reject", optionId: o.optionId }))]
    : params.options.map((o) => ({ title: o.name ?? labels[o.kind] ?? o.kind, optionId: o.optionId }));
  const detail = tooLong
    ? `${shown.slice(0, 500)}\n[… ${(shown.length - 500).toLocaleString("en-US")} more characters not shown here: open it in the sidebar to read all of it before you decide]`
    : shown;
  const asker = childAsker(params);
  const who = asker ? `the ${visibleText(child ?? `${asker.agent || "task"} child`)} of a session` : "the agent";
  const answer = await Promise.race([
    vscode.window.showWarningMessage(
      `Baton: ${who} wants to run ${visibleText(name)}${params.reason ? ` (${visibleText(params.reason)})` : ""}`,
      { modal: true, detail },
      ...items,
    ),
    new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined))),
  ]);
  if (answer?.sidebar) return "sidebar";
  return answer?.optionId ? { outcome: { optionId: answer.optionId } } : { outcome: "cancelled" };
}

