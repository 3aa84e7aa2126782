// The three ways to get a model (the sidebar's welcome state and error actions):
// a local GGUF model, an OpenAI key (serverCommands), an OpenAI-compatible server.
// Settings go to the person's user settings (never the workspace's), then the
// server restarts with them. Also: Set Python Path, Switch Session, focus/cancel.
import * as vscode from "vscode";
import { OPENAI_KEY_SECRET, type Services } from "../../services";
import { agentOf, nestChildren, parentOf } from "../children/childMessages";
import type { SetupView } from "../../shell/messages";
import type { FoundModelServer } from "../../protocol";
import { resolveSession } from "../sessions/activeSession";
import { modelItems } from "../sessions/sessionManagement";

/** What the sidebar's welcome state shows about the current set-up. */
export async function currentSetup(services: Pick<Services, "secrets">): Promise<SetupView> {
  const config = vscode.workspace.getConfiguration("baton");
  const provider = config.get<string>("provider");
  const hasKey = Boolean(await services.secrets.get(OPENAI_KEY_SECRET)) || Boolean(process.env.OPENAI_API_KEY?.trim());
  const setting = config.get<string>("baseUrl")?.trim();
  const env = process.env.OPENAI_BASE_URL?.trim();
  const baseUrl = setting || env;
  const model = config.get<string>("model")?.trim();
  return {
    ...(provider ? { provider } : {}),
    hasKey,
    ...(baseUrl ? { baseUrl, baseUrlFrom: setting ? ("setting" as const) : ("environment" as const) } : {}),
    ...(model ? { model } : {}),
  };
}

/**
 * The model every session of this workspace uses from now on: `baton.model` in the
 * workspace's settings (the person's, without a folder), then the server restarts with it.
 * A session's own pick (Select Model…) still holds for that session.
 */
export async function useWorkspaceModel(services: Services, model: string): Promise<void> {
  const config = vscode.workspace.getConfiguration("baton");
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  services.settingsChanging = true;
  try {
    await config.update("model", model, target);
  } finally {
    services.settingsChanging = false;
  }
  await services.client.restart().catch(() => undefined);
  await services.sidebar.postSetup();
  void vscode.window.setStatusBarMessage(`Baton: ${model} for this workspace`, 3000);
}

/** Choose Model for the Workspace: the configured server's models, the pick for every session. */
export async function chooseWorkspaceModel(services: Services): Promise<string | undefined> {
  const listed = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "Baton: listing models" },
    () => services.client.request("baton/models/list", {}),
  );
  const note = listed.error ? ` (the server's list is unavailable: ${listed.error})` : "";
  const picked = await vscode.window.showQuickPick(modelItems(listed.models, listed.current ?? undefined), {
    title: `Baton: model for this workspace (${listed.provider})`,
    placeHolder: `Every new session uses it. Current: ${listed.current ?? "none"}${note}`,
    ignoreFocusOut: true,
  });
  if (!picked) return undefined;
  const model = picked.custom ? await askModelId(listed.provider) : picked.model;
  if (!model) return undefined;
  await useWorkspaceModel(services, model);
  return model;
}

async function askModelId(provider: string): Promise<string | undefined> {
  return (
    await vscode.window.showInputBox({
      title: "Baton: model id",
      prompt: `A model id the ${provider} provider serves`,
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim() === "" ? "Enter a model id" : undefined),
    })
  )?.trim();
}

interface ServerItem extends vscode.QuickPickItem {
  name?: string;
  baseUrl?: string;
  models?: string[];
}

/** Servers running on this machine (`baton/models/servers`, as `baton model find`), then "Enter an address…". */
export function serverItems(found: FoundModelServer[]): ServerItem[] {
  const items: ServerItem[] = found.map((s) => ({
    label: `$(server) ${s.name}`,
    description: s.baseUrl,
    detail: s.models.length ? `${s.models.length} model${s.models.length === 1 ? "" : "s"}: ${s.models.slice(0, 4).join(", ")}${s.models.length > 4 ? ", …" : ""}` : "no models loaded",
    name: s.name,
    baseUrl: s.baseUrl,
    models: s.models,
  }));
  items.push({ label: "$(edit) Enter an address…", alwaysShow: true, detail: "Ollama, LM Studio, vLLM, llama.cpp, OpenRouter…" });
  return items;
}

/** Writes user settings and restarts the server once (without the "restart?" question). */
async function applySettings(services: Services, values: Record<string, unknown>): Promise<void> {
  const config = vscode.workspace.getConfiguration("baton");
  services.settingsChanging = true;
  try {
    for (const [key, value] of Object.entries(values)) await config.update(key, value, vscode.ConfigurationTarget.Global);
  } finally {
    services.settingsChanging = false;
  }
  await services.client.restart().catch(() => undefined);
}

export async function useLocalModel(services: Services): Promise<void> {
  const picked = await vscode.window.showQuickPick(
    [
      {
        label: "$(cloud-download) Download the default model",
        detail: "Runs `baton model install` in a terminal: a one-time download (about 1 GB), then the model runs on this machine.",
        choice: "install" as const,
      },
      { label: "$(file) Use a GGUF file on this machine…", detail: "Any chat model in GGUF format.", choice: "file" as const },
    ],
    { title: "Baton: use a local model" },
  );
  if (!picked) return;
  if (picked.choice === "file") {
    const files = await vscode.window.showOpenDialog({
      title: "Baton: choose a GGUF model",
      canSelectMany: false,
      filters: { "GGUF model": ["gguf"] },
    });
    const file = files?.[0];
    if (!file) return;
    await applySettings(services, { provider: "local", "local.modelPath": file.fsPath });
    void vscode.window.showInformationMessage(`Baton: using the local model ${file.fsPath}.`);
    return;
  }
  await applySettings(services, { provider: "local" });
  const python = services.client.pythonCommand ?? "python3";
  const terminal = vscode.window.createTerminal({ name: "Baton: model install" });
  terminal.show();
  terminal.sendText(`${quote(python)} -m baton model install`);
  void vscode.window.showInformationMessage("Baton: when the download finishes, press Retry (or send a prompt) in the sidebar.");
}

export async function useCompatibleServer(services: Services): Promise<void> {
  const config = vscode.workspace.getConfiguration("baton");
  // Servers already running here are offered first, each with the models it lists.
  const found = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "Baton: looking for model servers" },
    () => services.client.request("baton/models/servers", {}).then((r) => r.servers, () => [] as FoundModelServer[]),
  );
  let server: ServerItem | undefined = { label: "" };
  if (found.length) {
    server = await vscode.window.showQuickPick(serverItems(found), {
      title: "Baton: OpenAI-compatible server (1/3): server",
      placeHolder: "Running on this machine, or enter an address",
      ignoreFocusOut: true,
    });
    if (!server) return;
  }
  const baseUrl =
    server.baseUrl ??
    (await vscode.window.showInputBox({
      title: "Baton: OpenAI-compatible server (1/3): address",
      prompt: "The server's API base URL: Ollama, LM Studio, llama.cpp, vLLM, OpenRouter…",
      value: config.get<string>("baseUrl") || "http://localhost:11434/v1",
      ignoreFocusOut: true,
      validateInput: (value) => (/^https?:\/\/\S+$/.test(value.trim()) ? undefined : "Enter an http:// or https:// URL"),
    }));
  if (baseUrl === undefined) return;
  let model: string | undefined;
  if (server.models?.length) {
    const picked = await vscode.window.showQuickPick(
      modelItems(
        server.models.map((id) => ({ id, contextWindow: 0 })),
        undefined,
            ).map((item) => ({ ...item, description: item.custom ? "" : (server?.name ?? "") })),
      { title: "Baton: OpenAI-compatible server (2/3): model", placeHolder: `The models ${server.name ?? "the server"} lists`, ignoreFocusOut: true },
    );
    if (!picked) return;
    model = picked.custom ? await askModelId("openai-compatible") : picked.model;
  } else {
    model = await vscode.window.showInputBox({
      title: "Baton: OpenAI-compatible server (2/3): model",
      prompt: "The model id the server knows, for example qwen2.5-coder:7b",
      value: config.get<string>("model") ?? "",
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim() === "" ? "Enter a model id" : undefined),
    });
  }
  if (model === undefined) return;
  // A server found on this machine's loopback needs no key.
  const key = server.baseUrl ? "" : await vscode.window.showInputBox({
    title: "Baton: OpenAI-compatible server (3/3): API key",
    prompt: "Leave empty if the server needs none. Kept in VS Code's secret storage, never in settings.",
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key.trim()) await services.secrets.store(OPENAI_KEY_SECRET, key.trim());
  await applySettings(services, { provider: "openai-compatible", baseUrl: baseUrl.trim(), model: model.trim() });
  await services.sidebar.postSetup();
  void vscode.window.showInformationMessage(`Baton: using ${model.trim()} at ${baseUrl.trim()}.`);
}

/** `baton.pythonPath` is machine-overridable: the user settings show it (filtered to that one setting). */
export async function setPythonPath(): Promise<void> {
  await vscode.commands.executeCommand("workbench.action.openSettings", "@id:baton.pythonPath");
}

/** The sessions list: newest first, searchable by title; each parent's children under it
 * (a child opens as its read-only transcript). */
export async function switchSession(services: Services): Promise<void> {
  const { sessions } = await services.client.request("baton/session/list", {});
  const active = services.state.activeSessionId;
  const titles = new Map(sessions.map((s) => [s.sessionId, s.title]));
  const items = nestChildren(sessions).map(({ session: s, depth }) => ({
    label:
      depth === 1
        ? `$(indent) ${agentOf(s) ?? "child"}: ${s.title || "Untitled child"}`
        : `${s.sessionId === active ? "$(check) " : ""}${s.title || "Untitled session"}`,
    description: [depth === 1 ? "Child session" : s.mode === "plan" ? "Plan" : "Build", tokensUsed(s.usage)]
      .filter(Boolean)
      .join(" · "),
    // A child's first prompt is the task Baton wrote for it, not the person's words: it is
    // titled by its task's description and says whose work it was part of.
    detail: [
      depth === 1 ? `part of “${titles.get(parentOf(s) ?? "") || "its parent"}”` : s.firstPrompt,
      `last active ${lastActive(s.updatedAt)}`,
    ]
      .filter(Boolean)
      .join(" · "),
    sessionId: s.sessionId,
    child: parentOf(s) !== undefined,
  }));
  const picked = await vscode.window.showQuickPick(
    [{ label: "$(add) New Session", description: "", detail: undefined, sessionId: "", child: false }, ...items],
    {
      title: "Baton: sessions",
      placeHolder: "Search sessions by title or first prompt",
      matchOnDescription: true,
      matchOnDetail: true,
    },
  );
  if (!picked) return;
  if (picked.sessionId === "") await vscode.commands.executeCommand("baton.newSession");
  else if (picked.child) await services.sidebar.openChild(picked.sessionId);
  else await services.sidebar.showSession(picked.sessionId);
}

export async function focusPrompt(services: Services): Promise<void> {
  await services.sidebar.focusPrompt();
}

export async function cancelTurn(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (sessionId && services.state.isRunning(sessionId)) await services.client.notify("baton/session/cancel", { sessionId });
}

/** "12,400 tokens" used by a session's model requests (nothing before its first). */
export function tokensUsed(usage: { inputTokens?: number; outputTokens?: number; requests?: number } | null | undefined): string {
  if (!usage || !usage.requests) return "";
  const total = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
  return `${total.toLocaleString("en-US")} tokens`;
}

/** "5 min ago", "yesterday 14:02" style: recent activity relative, older as a date. */
export function lastActive(iso: string, now: number = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const minutes = Math.round((now - then) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return new Date(then).toLocaleString();
}

function quote(path: string): string {
  return /^[\w./:-]+$/.test(path) ? path : `"${path.replace(/(["\\$`])/g, "\\$1")}"`;
}
