import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import type { Services } from "../../src/services";
import { activateExtension, SESSION } from "./helpers";

const manifest = JSON.parse(readFileSync(path.join(import.meta.dirname, "../../package.json"), "utf8")) as {
  contributes: { commands: Array<{ command: string; title: string; category: string }> };
};

const run = (id: string, ...args: unknown[]) => {
  const handler = vscode.registeredCommands.get(id);
  if (!handler) throw new Error(`command ${id} not registered`);
  return handler(...args);
};

const sentRequests = (method: string) =>
  fake.clients.flatMap((c) => c.sendRequest.mock.calls.filter((call) => call[0] === method).map((call) => call[1]));

describe("command wiring", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    services.state.setActive(SESSION);
  });

  it("registers every contributed command, all under the Baton category", () => {
    const contributed = manifest.contributes.commands.map((c) => c.command).sort();
    expect([...vscode.registeredCommands.keys()].sort()).toEqual(contributed);
    for (const c of manifest.contributes.commands) expect(c.category).toBe("Baton");
    const titles = manifest.contributes.commands.map((c) => c.title);
    for (const title of [
      "New Session",
      "Compact Session",
      "Compact Session with Instructions…",
      "Show Plan",
      "Approve Plan and Build in a Fresh Context",
      "Approve Plan and Build (Keep the Planning Context)",
      "Toggle Plan Mode",
      "Show Compaction History",
      "Set OpenAI API Key",
      "Restart Server",
    ]) {
      expect(titles).toContain(title);
    }
  });

  it("Compact Session compacts the active session and reports tokens", async () => {
    await run("baton.compactSession");
    expect(sentRequests("baton/session/compact")).toEqual([{ sessionId: SESSION }]);
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith("Baton: compacted (native): 12,000 → 3,000 tokens.");
  });

  it("Compact Session with Instructions… passes the typed instructions", async () => {
    vscode.window.showInputBox.mockResolvedValueOnce("keep the failing test names");
    await run("baton.compactSessionWithInstructions");
    expect(sentRequests("baton/session/compact")).toEqual([{ sessionId: SESSION, instructions: "keep the failing test names" }]);
  });

  it("Compact Session with Instructions… does nothing when the box is dismissed", async () => {
    vscode.window.showInputBox.mockResolvedValueOnce(undefined);
    await run("baton.compactSessionWithInstructions");
    expect(sentRequests("baton/session/compact")).toEqual([]);
  });

  it("Toggle Plan Mode switches build → plan → build", async () => {
    await run("baton.togglePlanMode");
    await run("baton.togglePlanMode");
    expect(sentRequests("baton/session/setMode")).toEqual([
      { sessionId: SESSION, mode: "plan" },
      { sessionId: SESSION, mode: "build" },
    ]);
  });

  it("Show Compaction History opens a read-only document in plain words with Undo on each record", async () => {
    await run("baton.showCompactionHistory");
    const uri = vscode.workspace.openTextDocument.mock.calls[0]?.[0] as { scheme: string; path: string };
    expect(uri.scheme).toBe("baton-history"); // a virtual document: read-only, never dirty
    expect(vscode.languages.setTextDocumentLanguage).toHaveBeenCalledWith(expect.anything(), "markdown");
    const history = services.history;
    const text = await history.provideTextDocumentContent(uri as never);
    expect(text).toContain("- **Why:** You asked for it.");
    expect(text).toContain("- **Context in use:** 12,000 → 3,000 tokens (75% smaller).");
    expect(text).toContain("Ship the thing");
    expect(text).not.toMatch(/manual · |level \d|compaction_trigger/);
    const lenses = history.provideCodeLenses({ uri: { toString: () => (uri as { toString(): string }).toString() } } as never);
    expect(lenses.map((l) => l.command?.title)).toEqual(["Undo this compaction"]);
    expect(lenses[0]?.command?.command).toBe("baton.undoCompaction");
    expect(text).toContain("- ran `pytest` (failed, exit code 1)");
  });

  it("Set OpenAI API Key stores the key in secret storage and hands it to the server, never to settings", async () => {
    vscode.window.showInputBox.mockResolvedValueOnce(" sk-test-123 ");
    await services.client.ensureStarted();
    await run("baton.setOpenAIApiKey");
    expect(vscode.secretStore.get("baton.openai.apiKey")).toBe("sk-test-123");
    expect(sentRequests("baton/auth/set")).toContainEqual({ provider: "openai", apiKey: "sk-test-123" });
    const options = vscode.window.showInputBox.mock.calls[0]?.[0] as { password: boolean };
    expect(options.password).toBe(true);
    const config = vscode.workspace.getConfiguration.mock.results.map((r) => r.value as { update: { mock: { calls: unknown[] } } });
    for (const c of config) expect(c.update.mock.calls).toHaveLength(0);
  });

  it("after a key is saved the sidebar's setup says so (the welcome's 'No model is set up yet' ends)", async () => {
    const { currentSetup } = await import("../../src/features/setup/setupCommands");
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      expect((await currentSetup(services)).hasKey).toBe(false);
      const posted: unknown[] = [];
      services.sidebar.postSetup = async () => {
        posted.push(await currentSetup(services));
      };
      vscode.window.showInputBox.mockResolvedValueOnce("sk-test-456");
      await services.client.ensureStarted();
      await run("baton.setOpenAIApiKey");
      expect(posted).toEqual([expect.objectContaining({ hasKey: true })]);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  it("the setup reads OPENAI_BASE_URL from the environment when no baseUrl is set", async () => {
    const { currentSetup } = await import("../../src/features/setup/setupCommands");
    const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = "http://localhost:11434/v1";
    delete process.env.OPENAI_API_KEY;
    try {
      expect(await currentSetup(services)).toEqual({ hasKey: false, baseUrl: "http://localhost:11434/v1", baseUrlFrom: "environment" });
    } finally {
      if (saved.url === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.url;
      if (saved.key !== undefined) process.env.OPENAI_API_KEY = saved.key;
    }
  });

  it("the sessions list shows each session's first prompt, tokens and last activity", async () => {
    const now = Date.now();
    fake.responders.set("baton/session/list", () => ({
      sessions: [
        {
          sessionId: SESSION, title: "Cache", mode: "plan", createdAt: "t", updatedAt: new Date(now - 5 * 60_000).toISOString(),
          firstPrompt: "Add a response cache to the HTTP client", usage: { inputTokens: 12_000, cachedTokens: 0, outputTokens: 400, requests: 3 },
        },
        { sessionId: "s-2", title: "", mode: "build", createdAt: "t", updatedAt: new Date(now - 3 * 3_600_000).toISOString(), usage: { requests: 0 } },
      ],
    }));
    await services.client.ensureStarted();
    await run("baton.switchSession");
    const items = vscode.window.showQuickPick.mock.calls.at(-1)?.[0] as Array<{ label: string; description: string; detail?: string }>;
    expect(items.slice(1).map(({ label, description, detail }) => ({ label, description, detail }))).toEqual([
      { label: "$(check) Cache", description: "Plan · 12,400 tokens", detail: "Add a response cache to the HTTP client · last active 5 min ago" },
      { label: "Untitled session", description: "Build", detail: "last active 3 h ago" },
    ]);
    const options = vscode.window.showQuickPick.mock.calls.at(-1)?.[1] as { matchOnDetail: boolean };
    expect(options.matchOnDetail).toBe(true);
  });

  it("a stored key is sent after every server start", async () => {
    vscode.secretStore.set("baton.openai.apiKey", "sk-stored");
    await services.client.restart();
    await new Promise((r) => setTimeout(r, 0));
    expect(sentRequests("baton/auth/set")).toContainEqual({ provider: "openai", apiKey: "sk-stored" });
  });

  it("Restart Server stops the client and starts a new one", async () => {
    await services.client.ensureStarted();
    const first = fake.last;
    await run("baton.restartServer");
    expect(first.stop).toHaveBeenCalled();
    expect(fake.clients).toHaveLength(2);
    expect(services.client.state).toBe("running");
  });

  it("Approve Plan builds in a fresh context (the default); Keep the Planning Context sends start only", async () => {
    await run("baton.approvePlan");
    expect(sentRequests("baton/plan/approve")).toEqual([{ sessionId: SESSION, start: true, fresh: true }]);
    expect(services.state.mode(SESSION)).toBe("build");
    await run("baton.approvePlanKeepContext");
    expect(sentRequests("baton/plan/approve")).toEqual([
      { sessionId: SESSION, start: true, fresh: true },
      { sessionId: SESSION, start: true },
    ]);
  });

  it("a failing request becomes an error notification, not an exception", async () => {
    fake.responders.set("baton/session/compact", () => {
      throw Object.assign(new Error("session busy"), { code: -32002 });
    });
    await expect(run("baton.compactSession")).resolves.toBeUndefined();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith("Baton: session busy", "Show Log");
  });

  it("launches `python -m baton serve` with the user's settings as initializationOptions", async () => {
    vscode.configuration["baton.model"] = { globalValue: "gpt-test" };
    vscode.configuration["baton.compaction.threshold"] = { workspaceValue: 0.7, defaultValue: 0.85 };
    vscode.configuration["baton.compaction.strategy"] = { defaultValue: "auto" };
    await services.client.restart();
    const client = fake.last;
    expect(client.serverOptions).toMatchObject({ command: "python3", args: ["-m", "baton", "serve"] });
    expect(client.clientOptions.initializationOptions).toEqual({
      settings: { model: "gpt-test", compaction: { threshold: 0.7 } },
      workspaceTrusted: true,
      // It answers baton/question/request and baton/editor/diagnostics (issue 49).
      capabilities: { question: true, diagnostics: true },
    });
  });

  it("a start-up failure is reported once with its fix, and commands do not add a second error", async () => {
    await services.client.stop();
    fake.startError = new Error("Server initialization failed: exited with code 1");
    await run("baton.compactSession", SESSION);
    await run("baton.showCompactionHistory", SESSION);
    expect(vscode.window.showErrorMessage).toHaveBeenCalledTimes(1);
    const [message, ...buttons] = vscode.window.showErrorMessage.mock.calls[0] as string[];
    expect(message).toContain("the server did not start");
    expect(buttons).toContain("Show Log");
    expect(services.client.state).toBe("failed");
    expect(fake.clients.filter((c) => c.start.mock.calls.length > 0)).toHaveLength(2); // no retry loop

    fake.startError = undefined;
    await run("baton.restartServer");
    expect(services.client.state).toBe("running");
  });


  it("Check Store says a whole store is whole", async () => {
    fake.responders.set("baton/store/check", () => ({
      path: "/data/baton.db", ok: true, exists: true, problems: [], sessions: 3, sizeBytes: 2_000_000, fix: null,
    }));
    await run("baton.checkStore");
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith("Baton: the session store is whole (3 sessions, 2.0 MB).");
  });

  it("Check Store on a damaged store lists the problems and offers the repair", async () => {
    fake.responders.set("baton/store/check", () => ({
      path: "/data/baton.db", ok: false, exists: true, problems: ["Tree 7 page 12: btreeInitPage() returns error code 11"],
      sessions: 3, sizeBytes: 10, fix: "baton doctor --repair",
    }));
    await run("baton.checkStore");
    const [message, ...buttons] = vscode.window.showWarningMessage.mock.calls[0] as string[];
    expect(message).toContain("the session store is damaged (1 problem");
    expect(buttons).toEqual(["Repair Store", "Show Log"]);
    expect(sentRequests("baton/store/repair")).toEqual([]);
  });

  it("Repair Store asks first, repairs through the server, reports what it saved and restarts", async () => {
    fake.responders.set("baton/store/repair", () => ({
      path: "/data/baton.db", backupPath: "/data/baton.db.damaged-20261202-040000",
      sessions: [
        { sessionId: "s1", title: "One", messages: 4, recreated: false },
        { sessionId: "s2", title: "Recovered session", messages: 3, recreated: true },
      ],
      messages: 7, rowsSaved: { messages: 7 }, damagedRegions: { parts: 1 }, rowsLeftOut: {}, rowsInvalid: {},
      unreadableTables: [], check: { path: "/data/baton.db", ok: true, exists: true, problems: [], sessions: 2, sizeBytes: 10 },
    }));
    await run("baton.repairStore"); // the question is dismissed: nothing happens
    expect(sentRequests("baton/store/repair")).toEqual([]);

    const clientsBefore = fake.clients.length;
    vscode.window.showWarningMessage.mockResolvedValueOnce("Repair Store");
    await run("baton.repairStore");
    expect(sentRequests("baton/store/repair")).toEqual([{}]);
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith(
      "Baton: recovered 2 sessions (7 messages) into a new store; the damaged one is kept at /data/baton.db.damaged-20261202-040000.",
      "Show Log",
    );
    expect(fake.clients.length).toBe(clientsBefore + 1); // sessions are read afresh
  });

  it("a store-damaged error offers Repair Store", async () => {
    fake.responders.set("baton/session/compact", () => {
      throw Object.assign(new Error("the store at /data/baton.db is damaged (database disk image is malformed); run `baton doctor --repair`"), {
        code: -32013,
      });
    });
    await run("baton.compactSession");
    const [message, ...buttons] = vscode.window.showErrorMessage.mock.calls[0] as string[];
    expect(message).toContain("/data/baton.db is damaged");
    expect(buttons).toEqual(["Repair Store", "Show Log"]);
  });
});
