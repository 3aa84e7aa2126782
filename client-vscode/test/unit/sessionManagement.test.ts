// Session management and the model picker: the commands, and the sidebar host's
// session info (token totals, context meter, plan line, model), against the
// mocked vscode and language client.
import { beforeEach, describe, expect, it } from "vitest";
import { formatWindow, modelItems } from "../../src/features/sessions/sessionManagement";
import type { Services } from "../../src/services";
import { parseSidebarOutbound } from "../../src/shell/messages";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension, SESSION } from "./helpers";

const tick = () => new Promise((r) => setTimeout(r, 0));

const run = (id: string, ...args: unknown[]) => {
  const handler = vscode.registeredCommands.get(id);
  if (!handler) throw new Error(`command ${id} not registered`);
  return handler(...args);
};

const sentRequests = (method: string) =>
  fake.clients.flatMap((c) => c.sendRequest.mock.calls.filter((call) => call[0] === method).map((call) => call[1]));

const sentNotifications = (method: string) =>
  fake.clients.flatMap((c) => c.sendNotification.mock.calls.filter((call) => call[0] === method).map((call) => call[1]));

function resolveSidebar(services: Services) {
  const webview = vscode.fakeWebview();
  const disposed = new vscode.EventEmitter<void>();
  services.sidebar.resolveWebviewView({ webview, visible: true, onDidDispose: disposed.event } as never);
  return webview;
}

const infos = (webview: ReturnType<typeof vscode.fakeWebview>) =>
  webview.posted.filter((m) => (m as { type: string }).type === "sessionInfo") as Array<{ sessionId: string; info: Record<string, unknown> }>;

describe("session management commands", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    await services.client.ensureStarted();
    services.state.setActive(SESSION);
    services.state.remember(SESSION, { title: "First" });
  });

  it("Rename Session renames with the typed title and refreshes the list", async () => {
    fake.responders.set("baton/session/rename", (p) => ({
      sessionId: SESSION,
      title: (p as { title: string }).title,
      mode: "build",
      createdAt: "t",
      updatedAt: "t",
    }));
    fake.responders.set("baton/session/list", () => ({
      sessions: [{ sessionId: SESSION, title: "Cache work", mode: "build", createdAt: "t", updatedAt: "t" }],
    }));
    vscode.window.showInputBox.mockResolvedValueOnce("  Cache work ");
    expect(await run("baton.renameSession")).toBe("Cache work");
    expect(sentRequests("baton/session/rename")).toEqual([{ sessionId: SESSION, title: "Cache work" }]);
    expect(services.state.title(SESSION)).toBe("Cache work");
    expect(sentRequests("baton/session/list").length).toBeGreaterThan(0);
    // Escape, or the same title: nothing is sent.
    vscode.window.showInputBox.mockResolvedValueOnce(undefined);
    await run("baton.renameSession");
    expect(sentRequests("baton/session/rename")).toHaveLength(1);
  });

  it("Delete Session asks first, and deletes only when confirmed", async () => {
    fake.responders.set("baton/session/delete", () => ({}));
    vscode.window.showWarningMessage.mockResolvedValueOnce(undefined);
    expect(await run("baton.deleteSession")).toBe(false);
    expect(sentRequests("baton/session/delete")).toEqual([]);
    const [question, options] = vscode.window.showWarningMessage.mock.calls[0] ?? [];
    expect(question).toBe("Delete the Baton session “First”?");
    expect(options).toMatchObject({ modal: true });

    vscode.window.showWarningMessage.mockResolvedValueOnce("Delete");
    fake.responders.set("baton/session/list", () => ({ sessions: [] }));
    expect(await run("baton.deleteSession")).toBe(true);
    expect(sentRequests("baton/session/delete")).toEqual([{ sessionId: SESSION }]);
    expect(services.state.activeSessionId).toBeUndefined();
    expect(services.state.title(SESSION)).toBeUndefined();
  });

  it("Delete Session cancels a running turn first and waits until the server lets go", async () => {
    services.state.setRunning(SESSION, true);
    let calls = 0;
    fake.responders.set("baton/session/delete", () => {
      calls += 1;
      if (calls < 3) throw Object.assign(new Error("session busy"), { code: -32002 });
      return {};
    });
    vscode.window.showWarningMessage.mockResolvedValueOnce("Delete");
    expect(await run("baton.deleteSession", SESSION)).toBe(true);
    expect(sentNotifications("baton/session/cancel")).toEqual([{ sessionId: SESSION }]);
    expect(calls).toBe(3);
  });

  it("Fork Session forks at the given message, or after the last one, and shows the fork", async () => {
    fake.responders.set("baton/session/load", () => ({
      sessionId: SESSION,
      title: "First",
      mode: "build",
      messages: [
        { id: "m1", role: "user", createdAt: "t", parts: [] },
        { id: "m2", role: "assistant", createdAt: "t", parts: [] },
      ],
    }));
    fake.responders.set("baton/session/fork", () => ({ sessionId: "s-2", title: "First (fork)", messages: 2, planPath: ".baton/plans/p.md" }));
    expect(await run("baton.forkSession", SESSION, "m1")).toBe("s-2");
    expect(await run("baton.forkSession")).toBe("s-2");
    expect(sentRequests("baton/session/fork")).toEqual([
      { sessionId: SESSION, messageId: "m1" },
      { sessionId: "s-2", messageId: "m2" },
    ]);
    expect(services.state.activeSessionId).toBe("s-2");
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith(
      "Baton: forked into “First (fork)” (2 messages with its plan copied to .baton/plans/p.md).",
    );
  });

  it("Export Session opens the markdown in an editor and offers to copy it", async () => {
    fake.responders.set("baton/session/export", () => ({ sessionId: SESSION, title: "First", markdown: "# First\n" }));
    vscode.window.showInformationMessage.mockResolvedValueOnce("Copy to Clipboard");
    expect(await run("baton.exportSession")).toBe("# First\n");
    expect(vscode.workspace.openTextDocument).toHaveBeenCalledWith({ language: "markdown", content: "# First\n" });
    expect(vscode.window.showTextDocument).toHaveBeenCalled();
    await tick();
    expect(vscode.env.clipboard.writeText).toHaveBeenCalledWith("# First\n");
  });

  it("Select Model lists the provider's models and pins the pick with setModel", async () => {
    fake.responders.set("baton/models/list", () => ({
      provider: "openai",
      source: "provider",
      current: "gpt-5.1",
      models: [
        { id: "gpt-5.1", contextWindow: 400000 },
        { id: "gpt-4.1", contextWindow: 1047576 },
      ],
    }));
    fake.responders.set("baton/session/setModel", (p) => ({ provider: "openai", model: (p as { model: string }).model }));
    vscode.window.showQuickPick.mockImplementationOnce(async (items: unknown) => (items as Array<{ label: string }>)[1]);
    expect(await run("baton.selectModel")).toBe("gpt-4.1");
    expect(sentRequests("baton/models/list")).toEqual([{ sessionId: SESSION }]);
    expect(sentRequests("baton/session/setModel")).toEqual([{ sessionId: SESSION, model: "gpt-4.1" }]);
    expect(services.state.modelOf(SESSION)).toEqual({ provider: "openai", model: "gpt-4.1" });
    const items = vscode.window.showQuickPick.mock.calls[0]?.[0] as Array<{ label: string; description?: string }>;
    expect(items.map((i) => i.label)).toEqual(["gpt-5.1", "gpt-4.1", "$(edit) Enter a model id…"]);
    expect(items[0]?.description).toBe("400k context · current");

    // "Enter a model id…" takes any id the provider serves.
    vscode.window.showQuickPick.mockImplementationOnce(async (items: unknown) => (items as Array<{ label: string }>)[2]);
    vscode.window.showInputBox.mockResolvedValueOnce("my-local-model");
    expect(await run("baton.selectModel")).toBe("my-local-model");
    // Escape: nothing changes.
    vscode.window.showQuickPick.mockResolvedValueOnce(undefined);
    expect(await run("baton.selectModel")).toBeUndefined();
    expect(sentRequests("baton/session/setModel")).toHaveLength(2);
  });

  it("formats windows and marks the current model", () => {
    expect(formatWindow(128000)).toBe("128k");
    expect(formatWindow(1047576)).toBe("1.0M");
    expect(formatWindow(2_000_000)).toBe("2M");
    expect(modelItems([{ id: "a", contextWindow: 8192 }], "a")[0]).toMatchObject({ label: "a", picked: true });
  });
});

describe("sidebar session info", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    await services.client.ensureStarted();
  });

  it("shows the model, token totals, context meter and plan of a resumed session, and follows usage", async () => {
    fake.responders.set("baton/session/load", () => ({
      sessionId: SESSION,
      title: "First",
      mode: "build",
      messages: [],
      usage: { inputTokens: 1000, cachedTokens: 600, outputTokens: 50, requests: 2 },
      provider: "openai",
      model: "gpt-5.1",
    }));
    fake.responders.set("baton/plan/get", () => ({ path: ".baton/plans/cache.md", status: "approved", version: 3, content: "x" }));
    fake.responders.set("baton/session/context", () => ({ tokens: 32000, contextWindow: 128000, threshold: 90000, items: [] }));
    const webview = resolveSidebar(services);
    webview.receive({ type: "ready", activeSessionId: null });
    await tick();
    await tick();
    await tick();
    const last = infos(webview).pop();
    expect(last).toEqual({
      type: "sessionInfo",
      sessionId: SESSION,
      info: {
        provider: "openai",
        model: "gpt-5.1",
        tokens: { input: 1000, cached: 600, output: 50, requests: 2 },
        context: { tokens: 32000, contextWindow: 128000 },
        plan: { path: ".baton/plans/cache.md", status: "approved", version: 3 },
      },
    });

    fake.last.notificationHandlers.get("baton/session/update")?.({
      sessionId: SESSION,
      update: { kind: "usage", tokens: 40000, contextWindow: 128000, inputTokens: 500, cachedTokens: 400, outputTokens: 20 },
    });
    fake.last.notificationHandlers.get("baton/plan/didChange")?.({
      sessionId: SESSION,
      path: ".baton/plans/cache.md",
      version: 4,
      status: "approved",
      author: "agent",
    });
    const now = infos(webview).pop()?.info;
    expect(now?.tokens).toEqual({ input: 1500, cached: 1000, output: 70, requests: 3 });
    expect(now?.context).toEqual({ tokens: 40000, contextWindow: 128000 });
    expect(now?.plan).toEqual({ path: ".baton/plans/cache.md", status: "approved", version: 4 });
  });

  it("after a turn ends, tells the view which answer it can fork after", async () => {
    const webview = resolveSidebar(services);
    services.state.setActive(SESSION);
    fake.responders.set("baton/session/load", () => ({
      sessionId: SESSION,
      title: "First",
      mode: "build",
      messages: [
        { id: "m1", role: "user", createdAt: "t", parts: [] },
        { id: "m2", role: "assistant", createdAt: "t", parts: [] },
      ],
    }));
    fake.last.notificationHandlers.get("baton/session/update")?.({
      sessionId: SESSION,
      update: { kind: "turn_ended", stopReason: "end_turn" },
    });
    await tick();
    await tick();
    expect(webview.posted).toContainEqual({ type: "forkPoint", sessionId: SESSION, messageId: "m2" });
  });

  it("relays the session actions to their commands", async () => {
    const webview = resolveSidebar(services);
    const executed: unknown[][] = [];
    vscode.commands.executeCommand.mockImplementation(async (...args: unknown[]) => void executed.push(args));
    webview.receive({ type: "renameSession", sessionId: SESSION });
    webview.receive({ type: "deleteSession", sessionId: SESSION });
    webview.receive({ type: "forkSession", sessionId: SESSION, messageId: "m7" });
    webview.receive({ type: "exportSession", sessionId: SESSION });
    webview.receive({ type: "pickModel", sessionId: SESSION });
    webview.receive({ type: "forkSession", sessionId: SESSION, messageId: 7 });
    await tick();
    expect(executed).toEqual([
      ["baton.renameSession", SESSION],
      ["baton.deleteSession", SESSION],
      ["baton.forkSession", SESSION, "m7"],
      ["baton.exportSession", SESSION],
      ["baton.selectModel", SESSION],
    ]);
  });

  it("guards the new webview messages", () => {
    expect(parseSidebarOutbound({ type: "forkSession", sessionId: "s" })).toEqual({ type: "forkSession", sessionId: "s" });
    expect(parseSidebarOutbound({ type: "forkSession", sessionId: "s", messageId: "" })).toBeUndefined();
    expect(parseSidebarOutbound({ type: "deleteSession" })).toBeUndefined();
    expect(parseSidebarOutbound({ type: "pickModel", sessionId: "s", extra: 1 })).toEqual({ type: "pickModel", sessionId: "s" });
  });
});
