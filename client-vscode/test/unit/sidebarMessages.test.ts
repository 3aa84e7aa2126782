// The sidebar's message registry: every message type the webview posts has exactly one
// feature's handler once the extension is active; what no feature takes is logged.
import { beforeEach, describe, expect, it } from "vitest";
import { QUESTION_ANSWER_TYPE } from "../../src/features/question/messages";
import type { Services } from "../../src/services";
import { SIDEBAR_OUTBOUND_TYPES } from "../../src/shell/messages";
import { MessageRegistry } from "../../src/shell/messageRegistry";
import * as vscode from "../mocks/vscode";
import { activateExtension } from "./helpers";

const tick = () => new Promise((r) => setTimeout(r, 0));

function resolveSidebar(services: Services) {
  const webview = vscode.fakeWebview();
  const view = { webview, visible: true, onDidDispose: new vscode.EventEmitter<void>().event };
  services.sidebar.resolveWebviewView(view as never);
  return webview;
}

const errorLines = (services: Services) => (services.output.error as unknown as { mock: { calls: unknown[][] } }).mock.calls.map((c) => String(c[0]));

describe("sidebar message registry", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
  });

  it("has exactly one handler for each message type the webview posts", () => {
    const expected = [...SIDEBAR_OUTBOUND_TYPES, QUESTION_ANSWER_TYPE].sort();
    const registered = services.sidebar.messages.types();
    expect(new Set(registered).size).toBe(registered.length);
    expect([...registered].sort()).toEqual(expected);
    // A second owner for any of them is refused, so no type is handled twice.
    for (const type of expected) {
      expect(() => services.sidebar.messages.register(type, { parse: () => ({}), handle: () => undefined })).toThrow(/already has a handler/);
    }
  });

  it("logs a message of a type no feature handles, and changes nothing", async () => {
    const webview = resolveSidebar(services);
    const posted = webview.posted.length;
    webview.receive({ type: "launchMissiles", sessionId: "s-1" });
    await tick();
    expect(errorLines(services)).toContainEqual(expect.stringContaining("no feature handles the webview message 'launchMissiles'"));
    expect(webview.posted.length).toBe(posted);
    expect(vscode.commands.executeCommand).not.toHaveBeenCalledWith(expect.stringMatching(/^baton\./), expect.anything());
  });

  it("logs a known type that fails its guard, and something that is not a message", async () => {
    const webview = resolveSidebar(services);
    webview.receive({ type: "renameSession", sessionId: 42 });
    webview.receive("ready");
    await tick();
    const lines = errorLines(services);
    expect(lines).toContainEqual(expect.stringContaining("the webview message 'renameSession' is malformed"));
    expect(lines).toContainEqual(expect.stringContaining("not a message"));
    expect(vscode.commands.executeCommand).not.toHaveBeenCalledWith("baton.renameSession", expect.anything());
  });

  it("dispatches to the registered handler, and a disposed registration stops taking messages", async () => {
    const seen: unknown[] = [];
    const logged: string[] = [];
    const registry = new MessageRegistry((line) => logged.push(line));
    const registration = registry.on("compact", (message) => void seen.push(message));
    await expect(registry.dispatch({ type: "compact", sessionId: "s-1" })).resolves.toBe(true);
    expect(seen).toEqual([{ type: "compact", sessionId: "s-1" }]);
    registration.dispose();
    await expect(registry.dispatch({ type: "compact", sessionId: "s-1" })).resolves.toBe(false);
    expect(seen).toHaveLength(1);
    expect(logged).toEqual(["[sidebar] no feature handles the webview message 'compact'; ignored"]);
  });
});
