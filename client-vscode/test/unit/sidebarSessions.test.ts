// Showing a session in the sidebar: one load however it became the active one, and a
// mode the person changes while that load is on its way is not undone by it.
import { beforeEach, describe, expect, it } from "vitest";
import type { Services } from "../../src/services";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension, SESSION } from "./helpers";

const tick = () => new Promise((r) => setTimeout(r, 0));

type Posted = { type: string; sessionId?: string; mode?: string };

function resolveSidebar(services: Services) {
  const webview = vscode.fakeWebview();
  const view = { webview, visible: true, onDidDispose: new vscode.EventEmitter<void>().event };
  services.sidebar.resolveWebviewView(view as never);
  return webview;
}

const loadsOf = (sessionId: string) =>
  fake.last.sendRequest.mock.calls.filter(([method, params]) => method === "baton/session/load" && (params as { sessionId: string }).sessionId === sessionId).length;

describe("showing a session in the sidebar", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    fake.responders.set("baton/session/new", () => ({ sessionId: "s-2" }));
    fake.responders.set("baton/session/load", (p) => ({ sessionId: (p as { sessionId: string }).sessionId, title: "", mode: "build", messages: [] }));
    fake.responders.set("baton/plan/get", () => null);
  });

  it("loads a new session once, and shows it once", async () => {
    const webview = resolveSidebar(services);
    await services.sidebar.showSession(SESSION);
    await services.sidebar.newSession("build");
    await tick();
    expect(loadsOf("s-2")).toBe(1);
    const histories = (webview.posted as Posted[]).filter((m) => m.type === "history" && m.sessionId === "s-2");
    expect(histories).toHaveLength(1);
  });

  it("loads a picked session once", async () => {
    const webview = resolveSidebar(services);
    await services.sidebar.showSession(SESSION);
    webview.receive({ type: "selectSession", sessionId: "s-2" });
    await tick();
    await tick();
    expect(loadsOf("s-2")).toBe(1);
    expect(services.state.activeSessionId).toBe("s-2");
  });

  it("keeps a mode set while the session was loading", async () => {
    const webview = resolveSidebar(services);
    await services.sidebar.showSession(SESSION);
    let answer: (value: unknown) => void = () => undefined;
    fake.responders.set("baton/session/load", () => new Promise((resolve) => (answer = resolve)));
    const shown = services.sidebar.activate("s-2");
    await tick();
    await services.sidebar.setMode("s-2", "plan");
    // The load was sent before the mode changed: it answers with the older mode.
    answer({ sessionId: "s-2", title: "", mode: "build", messages: [] });
    await shown;
    const history = (webview.posted as Posted[]).filter((m) => m.type === "history" && m.sessionId === "s-2").pop();
    expect(history?.mode).toBe("plan");
    expect(services.state.mode("s-2")).toBe("plan");
  });
});
