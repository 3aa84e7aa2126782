// Baton for VS Code: wires the server connection, the sidebar agent, the plan
// panels, the status bar and the commands together.
import * as vscode from "vscode";
import { BatonClient } from "./client/batonClient";
import { prepareLaunch } from "./client/launch";
import { notifyProblem } from "./client/problemNotifier";
import { runProcess } from "./client/processRunner";
import { activePythonInterpreter } from "./client/pythonExtension";
import { affectsServer, collectServerSettings, userSetting, userValue } from "./client/settings";
import { parseTcpTarget } from "./client/tcp";
import { WorkspaceTrust } from "./client/workspaceTrust";
import { registerCommands } from "./shell/registerCommands";
import { sendStoredKey } from "./features/setup/serverCommands";
import { currentSetup } from "./features/setup/setupCommands";
import type { Services } from "./services";
import { ReviewController } from "./features/review/reviewController";
import { PROPOSAL_SCHEME, ProposalFiles } from "./features/review/proposalFiles";
import { REVIEW_SCHEME, ReviewDocuments } from "./features/review/reviewDocuments";
import { SessionState } from "./state/sessionState";
import { ContextStatus } from "./features/compaction/contextStatus";
import { ChildTranscripts, CHILD_SCHEME } from "./features/children/childTranscript";
import { CompactionHistory, HISTORY_SCHEME } from "./features/compaction/compactionHistory";
import { PlanPanels } from "./features/plans/planPanels";
import { PlansView } from "./features/plans/plansView";
import { registerEditorDiagnostics } from "./features/diagnostics/editorDiagnostics";
import { QuestionHost, registerQuestions } from "./features/question/questionHost";
import { registerSidebarFeatures } from "./features/index";
import { SIDEBAR_VIEW_ID, SidebarProvider } from "./shell/sidebarProvider";

let services: Services | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Services> {
  const output = vscode.window.createOutputChannel("Baton Server", { log: true });
  const state = new SessionState();
  // `baton.turnRunning` scopes the Stop key binding to when there is a turn to stop.
  const turnRunning = () => {
    const sessionId = state.activeSessionId;
    void vscode.commands.executeCommand("setContext", "baton.turnRunning", Boolean(sessionId && state.isRunning(sessionId)));
  };
  context.subscriptions.push(state.onDidChangeSession(turnRunning), state.onDidChangeActive(turnRunning));
  const firstFolder = () => vscode.workspace.workspaceFolders?.[0];

  const client: BatonClient = new BatonClient({
    output,
    workspaceFolder: firstFolder,
    // Restricted Mode in VS Code is restricted in Baton too (docs/security.md).
    initializationOptions: () => ({
      settings: collectServerSettings(vscode.workspace.getConfiguration("baton"), vscode.workspace.isTrusted),
      workspaceTrusted: vscode.workspace.isTrusted,
      // What this client answers (the server offers the `question` and `diagnostics` tools only then).
      capabilities: { question: true, diagnostics: true },
    }),
    tcp: () => {
      const config = vscode.workspace.getConfiguration("baton");
      return parseTcpTarget(userSetting(config, "server.tcp"), userSetting(config, "server.tokenFile"));
    },
    prepare: () =>
      prepareLaunch({
        run: runProcess,
        env: process.env,
        bundledDir: vscode.Uri.joinPath(context.extensionUri, "bundled").fsPath,
        storageDir: context.globalStorageUri.fsPath,
        log: (line) => output.appendLine(`[client] ${line}`),
        lookup: {
          // An untrusted folder's .vscode/settings.json does not choose the interpreter.
          setting: () => personSetting("pythonPath"),
          env: process.env,
          pythonExtension: () => activePythonInterpreter(firstFolder()?.uri),
        },
        withProgress: (title, task) =>
          Promise.resolve(
            vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: false }, (progress) =>
              task((message) => progress.report({ message })),
            ),
          ),
      }),
    afterStart: (started) =>
      sendStoredKey(context, async (apiKey) => {
        await started.request("baton/auth/set", { provider: "openai", apiKey });
        const provider = personSetting("provider");
        if (provider === "openai-compatible") {
          await started.request("baton/auth/set", { provider, apiKey });
        }
      }),
    reportProblem: (error) =>
      void notifyProblem(error, {
        showLog: () => output.show(true),
        restart: () => client.restart(),
      }),
  });

  const trust = new WorkspaceTrust(client, (line) => output.appendLine(`[client] ${line}`));
  const childTranscripts = new ChildTranscripts(client);
  const sidebar = new SidebarProvider(context.extensionUri, client, state, () => currentSetup(context), trust, childTranscripts, (line) =>
    output.error(line),
  );
  const questions = new QuestionHost(sidebar, (sessionId) => childTranscripts.describe(sessionId));
  const reviewDocuments = new ReviewDocuments();
  const proposals = new ProposalFiles();
  const review = new ReviewController(client, reviewDocuments, (params, token, options) => sidebar.askPermission(params, token, options), firstFolder, proposals);
  const plans = new PlanPanels(context.extensionUri, client, state);
  const plansView = new PlansView(client, () => {
    const dir = vscode.workspace.getConfiguration("baton").get<string>("plans.dir");
    return typeof dir === "string" && dir.trim() !== "" ? dir.trim() : ".baton/plans";
  }, (line) => output.appendLine(`[client] ${line}`));
  const status = new ContextStatus(client, state);
  const history = new CompactionHistory(client, state);
  services = { client, state, sidebar, plans, plansView, secrets: context.secrets, output, review, history, trust };

  context.subscriptions.push(
    output,
    state,
    trust,
    sidebar,
    plans,
    plansView,
    status,
    { dispose: () => void client.dispose() },
    vscode.window.registerWebviewViewProvider(SIDEBAR_VIEW_ID, sidebar, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    // Writes and edits are shown in the diff editor too; the first answer wins.
    client.setPermissionHandler((params, token) => review.handlePermission(params, token)),
    reviewDocuments,
    review,
    vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, reviewDocuments),
    // The proposed side of a pending write is editable; the sidebar's card follows its edits.
    proposals,
    vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, proposals, { isCaseSensitive: true }),
    review.onDidChangeEdits((state) => sidebar.permissionEdited(state)),
    history,
    vscode.workspace.registerTextDocumentContentProvider(HISTORY_SCHEME, history),
    vscode.languages.registerCodeLensProvider({ scheme: HISTORY_SCHEME }, history),
    childTranscripts,
    vscode.workspace.registerTextDocumentContentProvider(CHILD_SCHEME, childTranscripts),
    registerQuestions(client, questions),
    // Each feature takes the webview messages it owns.
    ...registerSidebarFeatures(sidebar.messages, sidebar, { permissions: sidebar.permissions, questions }),
    registerEditorDiagnostics(client),
    // A compaction that ends refreshes an open history document.
    client.onSessionUpdate(({ sessionId, update }) => {
      if (update.kind === "compaction_finished") history.refresh(sessionId);
    }),
    client.onSessionUpdate(({ sessionId, update }) => {
      if (update.kind === "mode") state.setMode(sessionId, update.mode);
      else if (update.kind === "turn_ended") state.setRunning(sessionId, false);
      else if (
        update.kind === "user_message" ||
        update.kind === "agent_message_chunk" ||
        update.kind === "tool_call" ||
        (update.kind === "child" && update.status === "running")
      ) {
        state.setRunning(sessionId, true);
      }
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!affectsServer((section) => event.affectsConfiguration(section))) return;
      if (services?.settingsChanging) return; // Baton restarts the server itself
      if (client.state !== "running" && client.state !== "failed") return;
      const choice = await vscode.window.showInformationMessage(
        "Baton: settings changed. Restart the server to apply them?",
        "Restart Server",
      );
      if (choice) await client.restart().catch(() => undefined);
    }),
    ...registerCommands(services),
  );
  return services;
}

/** A string `baton.<key>` the person set (restricted keys: user settings only in an untrusted folder). */
function personSetting(key: string): string | undefined {
  const value = userValue(vscode.workspace.getConfiguration("baton"), key, vscode.workspace.isTrusted);
  return typeof value === "string" ? value : undefined;
}

export async function deactivate(): Promise<void> {
  await services?.client.stop();
  services = undefined;
}
