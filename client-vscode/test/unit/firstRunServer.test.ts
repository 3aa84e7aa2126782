// A first run with only OPENAI_BASE_URL set (issue 50, point 2), host side: the welcome
// gets the server's models, a model is chosen once for the workspace (a workspace
// setting, then a restart, not a per-session pin), and "Use another server" offers the
// servers running on this machine with their own model lists.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Services } from "../../src/services";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension } from "./helpers";

const tick = () => new Promise((r) => setTimeout(r, 0));
const run = (id: string, ...args: unknown[]) => vscode.registeredCommands.get(id)?.(...args);
const sentRequests = (method: string) =>
  fake.clients.flatMap((c) => c.sendRequest.mock.calls.filter((call) => call[0] === method).map((call) => call[1]));

/** Every `config.update(key, value, target)` the extension made. */
function updates(): unknown[][] {
  return vscode.workspace.getConfiguration.mock.results.flatMap((r) => (r.value as { update: { mock: { calls: unknown[][] } } }).update.mock.calls);
}

const savedBaseUrl = process.env.OPENAI_BASE_URL;
const savedKey = process.env.OPENAI_API_KEY;

describe("a first run with a server and no model", () => {
  let services: Services;
  beforeEach(async () => {
    process.env.OPENAI_BASE_URL = "http://127.0.0.1:11434/v1";
    delete process.env.OPENAI_API_KEY;
    ({ services } = await activateExtension());
    await services.client.ensureStarted();
    fake.responders.set("baton/models/list", () => ({
      provider: "openai-compatible",
      models: [
        { id: "qwen2.5-coder:7b", contextWindow: 32768 },
        { id: "llama3.1:8b", contextWindow: 131072 },
      ],
      source: "provider",
    }));
  });
  afterEach(() => {
    if (savedBaseUrl === undefined) delete process.env.OPENAI_BASE_URL;
    else process.env.OPENAI_BASE_URL = savedBaseUrl;
    if (savedKey !== undefined) process.env.OPENAI_API_KEY = savedKey;
  });

  it("the welcome gets the models the server lists", async () => {
    const webview = vscode.fakeWebview();
    services.sidebar.resolveWebviewView({ webview, visible: true, onDidDispose: new vscode.EventEmitter<void>().event } as never);
    await services.sidebar.postSetup();
    await tick();
    const setups = webview.posted.filter((m) => (m as { type: string }).type === "setup") as Array<{ setup: Record<string, unknown> }>;
    expect(setups.at(-1)?.setup).toMatchObject({
      hasKey: false,
      baseUrl: "http://127.0.0.1:11434/v1",
      baseUrlFrom: "environment",
      serverModels: ["qwen2.5-coder:7b", "llama3.1:8b"],
    });
    expect(sentRequests("baton/models/list")).toContainEqual({});
  });

  it("a model picked from the welcome becomes the workspace's, for every session", async () => {
    const restarts = fake.clients.length;
    await run("baton.chooseWorkspaceModel", "qwen2.5-coder:7b");
    expect(updates()).toContainEqual(["model", "qwen2.5-coder:7b", 2 /* ConfigurationTarget.Workspace */]);
    // The server restarts with it; no session is pinned.
    expect(fake.clients.length).toBeGreaterThan(restarts);
    expect(sentRequests("baton/session/setModel")).toEqual([]);
  });

  it("Choose a model lists the server's models and saves the pick for the workspace", async () => {
    vscode.window.showQuickPick.mockImplementationOnce(async (items: unknown) => (items as Array<{ model?: string }>)[1]);
    expect(await run("baton.chooseWorkspaceModel")).toBe("llama3.1:8b");
    expect(updates()).toContainEqual(["model", "llama3.1:8b", 2]);
  });

  it("Use another server offers the servers running here, then that server's models, and asks no key", async () => {
    fake.responders.set("baton/models/servers", () => ({
      servers: [{ port: 1234, name: "LM Studio", baseUrl: "http://127.0.0.1:1234/v1", models: ["qwen3-coder-30b", "gemma-3-12b"] }],
    }));
    const picks: unknown[] = [];
    vscode.window.showQuickPick
      .mockImplementationOnce(async (items: unknown) => {
        picks.push(items);
        return (items as unknown[])[0];
      })
      .mockImplementationOnce(async (items: unknown) => {
        picks.push(items);
        return (items as unknown[])[1];
      });
    await run("baton.useCompatibleServer");
    const [servers, models] = picks as Array<Array<{ label: string; description?: string; detail?: string }>>;
    expect(servers?.map((s) => s.label)).toEqual(["$(server) LM Studio", "$(edit) Enter an address…"]);
    expect(servers?.[0]?.detail).toBe("2 models: qwen3-coder-30b, gemma-3-12b");
    expect(models?.map((m) => m.label)).toEqual(["qwen3-coder-30b", "gemma-3-12b", "$(edit) Enter a model id…"]);
    expect(vscode.window.showInputBox).not.toHaveBeenCalled();
    expect(updates()).toEqual(
      expect.arrayContaining([
        ["provider", "openai-compatible", 1],
        ["baseUrl", "http://127.0.0.1:1234/v1", 1],
        ["model", "gemma-3-12b", 1],
      ]),
    );
  });
});
