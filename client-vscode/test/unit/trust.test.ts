import { beforeEach, describe, expect, it } from "vitest";
import type { Services } from "../../src/services";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension, SESSION } from "./helpers";

const tick = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

const IGNORED = [".baton/config.toml: hooks.toolAfter (runs commands)", ".baton/plugins/x.py"];

function resolveSidebar(services: Services) {
  const webview = vscode.fakeWebview();
  const disposed = new vscode.EventEmitter<void>();
  services.sidebar.resolveWebviewView({ webview, visible: true, onDidDispose: disposed.event } as never);
  return webview;
}

const trustPosts = (webview: ReturnType<typeof vscode.fakeWebview>) =>
  webview.posted.filter((m) => (m as { type: string }).type === "trust") as Array<{ type: "trust"; trust: unknown }>;

describe("Workspace Trust", () => {
  let services: Services;
  let serverTrusted: boolean;

  beforeEach(async () => {
    ({ services } = await activateExtension());
    serverTrusted = false;
    fake.responders.set("baton/workspace/trust", () =>
      serverTrusted ? { trusted: true, source: "editor", ignored: [] } : { trusted: false, source: "editor", ignored: IGNORED },
    );
    fake.responders.set("baton/workspace/setTrust", (params) => {
      serverTrusted = (params as { trusted: boolean }).trusted;
      return { trusted: serverTrusted, source: "editor", ignored: serverTrusted ? [] : IGNORED };
    });
  });

  it("tells the server VS Code's answer, and keeps an untrusted folder's interpreter and base URL out", async () => {
    vscode.workspace.isTrusted = false;
    vscode.configuration["baton.baseUrl"] = { workspaceValue: "http://attacker.example/v1" };
    vscode.configuration["baton.pythonPath"] = { workspaceValue: "./evil-python" };
    vscode.configuration["baton.model"] = { workspaceValue: "gpt-repo" };
    await services.client.restart();
    expect(fake.last.clientOptions.initializationOptions).toEqual({
      settings: { model: "gpt-repo" },
      workspaceTrusted: false,
      capabilities: { question: true, diagnostics: true },
    });
    expect(fake.last.serverOptions).toMatchObject({ command: "python3" });
  });

  it("Restricted Mode: the sidebar lists what is ignored; trust granted in VS Code goes to the server without a restart", async () => {
    vscode.workspace.isTrusted = false;
    const webview = resolveSidebar(services);
    await services.client.restart();
    await tick();
    const starts = fake.clients.length;
    expect(trustPosts(webview).at(-1)).toEqual({ type: "trust", trust: { trusted: false, source: "editor", ignored: IGNORED } });

    // The server's notice, said once per session, is kept with the answer.
    const message = "This workspace is not trusted, so Baton ignores 2 of its settings or plugins.";
    fake.last.notificationHandlers.get("baton/session/update")?.({
      sessionId: SESSION,
      update: { kind: "workspace_trust", trusted: false, source: "editor", ignored: IGNORED, message },
    });
    expect(trustPosts(webview).at(-1)?.trust).toMatchObject({ trusted: false, ignored: IGNORED, message });

    // The banner's button opens VS Code's own Workspace Trust editor.
    webview.receive({ type: "action", action: "manageTrust" });
    await tick();
    expect(vscode.commands.executeCommand).toHaveBeenCalledWith("workbench.trust.manage");

    vscode.workspace.isTrusted = true;
    vscode.trustGranted.fire();
    await tick();
    const sent = fake.last.sendRequest.mock.calls.filter((c) => c[0] === "baton/workspace/setTrust").map((c) => c[1]);
    expect(sent).toEqual([{ trusted: true }]);
    expect(trustPosts(webview).at(-1)).toEqual({ type: "trust", trust: { trusted: true, source: "editor", ignored: [] } });
    expect(fake.clients.length).toBe(starts);
    expect(services.client.state).toBe("running");
  });

  it("a failed setTrust is logged and the sidebar keeps the server's last answer", async () => {
    vscode.workspace.isTrusted = false;
    const webview = resolveSidebar(services);
    await services.client.restart();
    await tick();
    fake.responders.set("baton/workspace/setTrust", () => {
      throw Object.assign(new Error("params.trusted: must be true or false"), { code: -32602 });
    });
    vscode.trustGranted.fire();
    await tick();
    expect(trustPosts(webview).at(-1)?.trust).toMatchObject({ trusted: false, ignored: IGNORED });
    expect(services.trust.view?.trusted).toBe(false);
  });

  it("a protected path's reason reaches the sidebar's permission prompt and the notification", async () => {
    const webview = resolveSidebar(services);
    await services.client.ensureStarted();
    const reason = ".baton/config.toml is inside .baton/, which decides what Baton, git or the editor runs";
    const params = {
      sessionId: SESSION,
      toolCall: { toolCallId: "t1", name: "write", input: { path: ".baton/config.toml", content: "x" } },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "reject", kind: "reject_once" },
      ],
      reason,
    };
    const answer = services.sidebar.askPermission(params as never, new vscode.CancellationTokenSource().token);
    await tick();
    const prompt = webview.posted.find((m) => (m as { type: string }).type === "permission") as { requestId: string; reason?: string };
    expect(prompt.reason).toBe(reason);
    webview.receive({ type: "permissionAnswer", requestId: prompt.requestId, optionId: "reject" });
    await expect(answer).resolves.toEqual({ outcome: { optionId: "reject" } });
  });
});
