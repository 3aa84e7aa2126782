import { beforeEach, describe, expect, it } from "vitest";
import type { Services } from "../../src/services";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension, SESSION } from "./helpers";

const tick = () => new Promise((r) => setTimeout(r, 0));

function resolveSidebar(services: Services, visible = true) {
  const webview = vscode.fakeWebview();
  const disposed = new vscode.EventEmitter<void>();
  const view = { webview, visible, onDidDispose: disposed.event };
  services.sidebar.resolveWebviewView(view as never);
  return webview;
}

const permissionParams = {
  sessionId: SESSION,
  toolCall: { toolCallId: "t1", name: "bash", input: { command: "ls" } },
  options: [
    { optionId: "allow", kind: "allow_once" },
    { optionId: "always", kind: "allow_always" },
    { optionId: "reject", kind: "reject_once" },
  ],
};

describe("sidebar host", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    await services.client.ensureStarted();
  });

  it("serves a CSP'd page whose only script carries a nonce", () => {
    const webview = resolveSidebar(services);
    expect(webview.html).toMatch(/Content-Security-Policy" content="default-src 'none'; [^"]*script-src 'nonce-([A-Za-z0-9]{32})'/);
    const nonce = /nonce-([A-Za-z0-9]{32})/.exec(webview.html)?.[1];
    expect(webview.html).toContain(`<script nonce="${nonce}" src="file:///ext/dist/webview/sidebar.js"></script>`);
    expect(webview.html.match(/<script/g)).toHaveLength(1);
  });

  it("answers baton/permission/request with the option picked in the sidebar", async () => {
    const webview = resolveSidebar(services);
    const handler = fake.last.requestHandlers.get("baton/permission/request");
    const source = new vscode.CancellationTokenSource();
    const answer = handler?.(permissionParams, source.token) as Promise<unknown>;
    await tick();
    const prompt = webview.posted.find((m) => (m as { type: string }).type === "permission") as { requestId: string };
    expect(prompt).toMatchObject({ type: "permission", sessionId: SESSION, toolCall: permissionParams.toolCall });
    webview.receive({ type: "permissionAnswer", requestId: prompt.requestId, optionId: "always" });
    await expect(answer).resolves.toEqual({ outcome: { optionId: "always" } });
    expect(webview.posted).toContainEqual({ type: "permissionClosed", requestId: prompt.requestId });
  });

  it("answers cancelled when the server cancels the request", async () => {
    resolveSidebar(services);
    const handler = fake.last.requestHandlers.get("baton/permission/request");
    const source = new vscode.CancellationTokenSource();
    const answer = handler?.(permissionParams, source.token) as Promise<unknown>;
    await tick();
    source.cancel();
    await expect(answer).resolves.toEqual({ outcome: "cancelled" });
  });

  it("asks in a modal dialog showing the whole command, escaped, when the sidebar is not showing", async () => {
    resolveSidebar(services, false);
    vscode.window.showWarningMessage.mockImplementationOnce(async (...args: unknown[]) => args[3]);
    const handler = fake.last.requestHandlers.get("baton/permission/request");
    const command = "echo ok" + " ".repeat(520) + "; touch X\x1b[2K\u202e";
    const params = { ...permissionParams, toolCall: { ...permissionParams.toolCall, input: { command } } };
    const answer = await handler?.(params, new vscode.CancellationTokenSource().token);
    const [message, options, ...items] = vscode.window.showWarningMessage.mock.calls[0] ?? [];
    expect(message).toBe("Baton: the agent wants to run bash");
    expect(options).toEqual({ modal: true, detail: "echo ok[… 520 spaces …]; touch X\\x1b[2K\\u202e" });
    expect((items as Array<{ title: string }>).map((i) => i.title)).toEqual(["Allow once", "Always allow", "Reject"]);
    expect(answer).toEqual({ outcome: { optionId: "always" } });
  });

  it("a request too long for a dialog can only be rejected or read whole in the sidebar", async () => {
    const webview = vscode.fakeWebview();
    const view = { webview, visible: false, onDidDispose: new vscode.EventEmitter<void>().event };
    services.sidebar.resolveWebviewView(view as never);
    vscode.window.showWarningMessage.mockImplementationOnce(async (...args: unknown[]) => args[2]);
    vscode.commands.executeCommand.mockImplementationOnce(async (id: string) => {
      expect(id).toBe("baton.agent.focus");
      view.visible = true;
    });
    const handler = fake.last.requestHandlers.get("baton/permission/request");
    const command = Array.from({ length: 300 }, (_, i) => `echo ${i}`).join("\n") + "\ntouch hidden-tail";
    const params = { ...permissionParams, toolCall: { ...permissionParams.toolCall, input: { command } } };
    const answer = handler?.(params, new vscode.CancellationTokenSource().token) as Promise<unknown>;
    await tick();
    await tick();
    const [, options, ...items] = vscode.window.showWarningMessage.mock.calls[0] ?? [];
    expect((items as Array<{ title: string }>).map((i) => i.title)).toEqual(["Show in Sidebar", "Reject"]);
    expect((options as { detail: string }).detail).toMatch(/more characters not shown here: open it in the sidebar/);
    const card = webview.posted.find((m) => (m as { type: string }).type === "permission") as { requestId: string; toolCall: { input: { command: string } } };
    expect(card.toolCall.input.command).toBe(command);
    webview.receive({ type: "permissionAnswer", requestId: card.requestId, optionId: "reject" });
    await expect(answer).resolves.toEqual({ outcome: { optionId: "reject" } });
  });

  it("relays a prompt and reports the end of the turn; ignores malformed messages", async () => {
    fake.responders.set("baton/session/prompt", () => ({ stopReason: "end_turn" }));
    const webview = resolveSidebar(services);
    webview.receive({ type: "prompt", sessionId: SESSION, text: "hello" });
    webview.receive({ type: "prompt", sessionId: SESSION });
    webview.receive({ type: "somethingElse" });
    await tick();
    await tick();
    const prompts = fake.last.sendRequest.mock.calls.filter((c) => c[0] === "baton/session/prompt");
    expect(prompts).toEqual([["baton/session/prompt", { sessionId: SESSION, text: "hello" }]]);
    expect(webview.posted).toContainEqual({ type: "turn", sessionId: SESSION, running: false, stopReason: "end_turn" });
  });

  it("relays a prompt's images to the server; a malformed image drops the message", async () => {
    fake.responders.set("baton/session/prompt", () => ({ stopReason: "end_turn" }));
    const webview = resolveSidebar(services);
    const image = { mimeType: "image/png", data: "iVBORw0KGgo=", name: "shot.png" };
    webview.receive({ type: "prompt", sessionId: SESSION, text: "look", images: [image] });
    webview.receive({ type: "prompt", sessionId: SESSION, text: "bmp", images: [{ ...image, mimeType: "image/bmp" }] });
    webview.receive({ type: "prompt", sessionId: SESSION, text: "many", images: Array(9).fill(image) });
    await tick();
    await tick();
    const prompts = fake.last.sendRequest.mock.calls.filter((c) => c[0] === "baton/session/prompt");
    expect(prompts).toEqual([["baton/session/prompt", { sessionId: SESSION, text: "look", images: [image] }]]);
  });

  it("forwards session updates to the webview", () => {
    const webview = resolveSidebar(services);
    const update = { kind: "agent_message_chunk", text: "hi" };
    fake.last.notificationHandlers.get("baton/session/update")?.({ sessionId: SESSION, update });
    expect(webview.posted).toContainEqual({ type: "update", sessionId: SESSION, update });
  });
});

describe("plan panel host", () => {
  let services: Services;
  const plan = { path: ".baton/plans/p.md", status: "awaiting_approval", version: 2, content: "# P" };
  beforeEach(async () => {
    ({ services } = await activateExtension());
    fake.responders.set("baton/plan/get", () => plan);
    fake.responders.set("baton/plan/history", () => ({ versions: [] }));
    fake.responders.set("baton/plan/getVersion", (p) => ({ version: (p as { version: number }).version, content: "# old", author: "agent", createdAt: "t" }));
    fake.responders.set("baton/plan/requestChanges", () => ({ status: "draft" }));
    await services.client.ensureStarted();
  });

  it("opens on baton/plan/show and when the agent asks for approval, and updates live", async () => {
    fake.last.notificationHandlers.get("baton/plan/show")?.({ sessionId: SESSION, path: plan.path, version: 2 });
    await tick();
    await tick();
    expect(vscode.createdPanels).toHaveLength(1);
    const panel = vscode.createdPanels[0]!;
    expect(panel.webview.posted).toContainEqual(expect.objectContaining({ type: "plan", sessionId: SESSION, plan }));

    fake.last.notificationHandlers.get("baton/plan/didChange")?.({ sessionId: SESSION, path: plan.path, version: 3, status: "draft", author: "agent" });
    await tick();
    await tick();
    expect(vscode.createdPanels).toHaveLength(1);
    expect(panel.webview.posted.filter((m) => (m as { type: string }).type === "plan")).toHaveLength(2);
  });

  it("one panel per plan file: a second session on the same plan reveals it (titled with the plan and that session); another plan opens its own", async () => {
    const plans: Record<string, typeof plan> = {
      [SESSION]: plan,
      "s-2": { ...plan, content: "# P\n\n- [x] one\n- [ ] two" },
      "s-3": { ...plan, path: ".baton/plans/other.md" },
    };
    fake.responders.set("baton/plan/get", (p) => plans[(p as { sessionId: string }).sessionId] ?? null);
    services.state.remember(SESSION, { mode: "plan", title: "First" });
    services.state.remember("s-2", { mode: "plan", title: "Second" });
    services.state.remember("s-3", { mode: "plan", title: "Third" });

    await services.plans.show(SESSION);
    expect(vscode.createdPanels).toHaveLength(1);
    const panel = vscode.createdPanels[0]!;
    expect(panel.title).toBe("Plan: p.md · First");

    await services.plans.show("s-2");
    expect(vscode.createdPanels).toHaveLength(1);
    expect(panel.reveal).toHaveBeenCalled();
    expect(panel.title).toBe("Plan: p.md · Second (1/2)");
    // The panel now acts for the session that showed it.
    panel.webview.receive({ type: "approve", fresh: false });
    for (let i = 0; i < 5; i++) await tick();
    expect(fake.last.sendRequest.mock.calls.filter((c) => c[0] === "baton/plan/approve").map((c) => c[1])).toEqual([{ sessionId: "s-2", start: true }]);

    // A change of the shared plan from the other session refreshes that one panel.
    const before = panel.webview.posted.length;
    fake.last.notificationHandlers.get("baton/plan/didChange")?.({ sessionId: SESSION, path: plan.path, version: 3, status: "draft", author: "agent" });
    for (let i = 0; i < 3; i++) await tick();
    expect(panel.webview.posted.slice(before)).toContainEqual(expect.objectContaining({ type: "plan", sessionId: "s-2" }));

    await services.plans.show("s-3");
    expect(vscode.createdPanels).toHaveLength(2);
    expect(vscode.createdPanels[1]!.title).toBe("Plan: other.md · Third");

    // Out of view and back: the webview hears it (what it has shown counts as seen only in view).
    panel.setVisible(false);
    panel.setVisible(true);
    expect(panel.webview.posted.slice(-2)).toEqual([
      { type: "inView", visible: false },
      { type: "inView", visible: true },
    ]);

    // Closed, the plan's next show opens a panel again.
    panel.dispose();
    await services.plans.show(SESSION);
    expect(vscode.createdPanels).toHaveLength(3);
  });

  it("opens a panel when plan_exit sets awaiting_approval", async () => {
    fake.last.notificationHandlers.get("baton/plan/didChange")?.({ sessionId: SESSION, path: plan.path, version: 2, status: "awaiting_approval", author: "agent" });
    await tick();
    expect(vscode.createdPanels).toHaveLength(1);
  });

  it("Approve (fresh or not), Request changes and version requests go to the server", async () => {
    await services.plans.show(SESSION);
    const panel = vscode.createdPanels[0]!;
    panel.webview.receive({ type: "approve", fresh: true });
    panel.webview.receive({ type: "approve" });
    panel.webview.receive({ type: "requestChanges", feedback: "more tests" });
    panel.webview.receive({ type: "getVersion", version: 1 });
    panel.webview.receive({ type: "getVersion", version: "1; drop table" });
    for (let i = 0; i < 5; i++) await tick();
    const calls = fake.last.sendRequest.mock.calls.map((c) => [c[0], c[1]]);
    expect(calls.filter((c) => c[0] === "baton/plan/approve")).toEqual([
      ["baton/plan/approve", { sessionId: SESSION, start: true, fresh: true }],
      ["baton/plan/approve", { sessionId: SESSION, start: true }],
    ]);
    expect(calls).toContainEqual(["baton/plan/requestChanges", { sessionId: SESSION, feedback: "more tests" }]);
    expect(calls.filter((c) => c[0] === "baton/plan/getVersion")).toEqual([["baton/plan/getVersion", { sessionId: SESSION, version: 1 }]]);
    expect(panel.webview.posted).toContainEqual({ type: "versionContent", version: 1, content: "# old", author: "agent", createdAt: "t" });
    expect(services.state.mode(SESSION)).toBe("build");
  });

  it("Request changes sends the overall comment and every annotation in one request; the panel hears it arrived", async () => {
    await services.plans.show(SESSION);
    const panel = vscode.createdPanels[0]!;
    const annotations = [
      { kind: "comment", startLine: 3, endLine: 3, quote: "Add the store", text: "Which store?" },
      { kind: "replace", startLine: 5, endLine: 6, quote: "Tests", text: "- [ ] Tests first" },
      { kind: "delete", startLine: 8, endLine: 8, quote: "Docs" },
    ];
    panel.webview.receive({ type: "requestChanges", feedback: "  Smaller steps  ", annotations });
    // A malformed one (no text for a comment) is dropped whole: nothing is sent.
    panel.webview.receive({ type: "requestChanges", feedback: "x", annotations: [{ kind: "comment", startLine: 1, endLine: 1, quote: "q" }] });
    for (let i = 0; i < 5; i++) await tick();
    const calls = fake.last.sendRequest.mock.calls.filter((c) => c[0] === "baton/plan/requestChanges").map((c) => c[1]);
    expect(calls).toEqual([{ sessionId: SESSION, feedback: "Smaller steps", annotations }]);
    expect(panel.webview.posted).toContainEqual({ type: "reviewSent" });
    expect(panel.webview.posted).toContainEqual({
      type: "notice",
      level: "info",
      message: "3 annotations and your comment sent; the agent is revising the plan.",
    });
  });

  it("a refused review keeps the annotations in the panel (no reviewSent) and says why", async () => {
    fake.responders.set("baton/plan/requestChanges", () => {
      throw Object.assign(new Error("the plan is approved; changes can be requested only for a draft"), { code: -32602 });
    });
    await services.plans.show(SESSION);
    const panel = vscode.createdPanels[0]!;
    panel.webview.receive({ type: "requestChanges", feedback: "", annotations: [{ kind: "delete", startLine: 1, endLine: 1, quote: "# P" }] });
    for (let i = 0; i < 5; i++) await tick();
    expect(panel.webview.posted).not.toContainEqual({ type: "reviewSent" });
    expect(panel.webview.posted).toContainEqual({
      type: "notice",
      level: "error",
      message: expect.stringContaining("changes can be requested only for a draft"),
    });
  });
});
