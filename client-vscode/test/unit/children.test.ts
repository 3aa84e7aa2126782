// Child sessions on the host side: the session list puts children under their parent
// and opens one as its read-only transcript; the transcript document follows the
// child's stream; a plan approved step by step sends `build: "steps"`; a child's
// permission request names the child in the dialog.
import { beforeEach, describe, expect, it } from "vitest";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import type { Services } from "../../src/services";
import { CHILD_SCHEME, describeChild } from "../../src/features/children/childTranscript";
import { nestChildren, parseChildProgress } from "../../src/features/children/childMessages";
import { activateExtension, SESSION } from "./helpers";

const CHILD = "s-child";

const run = (id: string, ...args: unknown[]) => {
  const handler = vscode.registeredCommands.get(id);
  if (!handler) throw new Error(`command ${id} not registered`);
  return handler(...args);
};
const sentRequests = (method: string) =>
  fake.clients.flatMap((c) => c.sendRequest.mock.calls.filter((call) => call[0] === method).map((call) => call[1]));

const childMessages = [
  { id: "c1", role: "user", createdAt: "t", parts: [{ type: "text", text: "List every TODO in src/" }] },
  {
    id: "c2",
    role: "assistant",
    createdAt: "t",
    parts: [
      { type: "text", text: "Searching." },
      { type: "tool_call", toolCallId: "g1", name: "grep", input: { pattern: "TODO" }, status: "completed", output: "src/a.py:3: # TODO cache\nsrc/b.py:9: # TODO ```docs```" },
    ],
  },
];

function childProvider(): { provideTextDocumentContent(uri: unknown): Promise<string> } {
  const call = vscode.workspace.registerTextDocumentContentProvider.mock.calls.find((c) => c[0] === CHILD_SCHEME);
  if (!call) throw new Error("no provider for the child scheme");
  return call[1] as never;
}

describe("child sessions (host)", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    services.state.setActive(SESSION);
    fake.responders.set("baton/session/list", () => ({
      sessions: [
        { sessionId: SESSION, title: "Tidy", mode: "build", createdAt: "t1", updatedAt: "t2", parentId: null, agent: null },
        { sessionId: CHILD, title: "Find the TODOs", mode: "build", createdAt: "t3", updatedAt: "t9", parentId: SESSION, agent: "explore", firstPrompt: "<baton:task>List every TODO in src/" },
        { sessionId: "s-old", title: "Older", mode: "plan", createdAt: "t0", updatedAt: "t0" },
      ],
    }));
    fake.responders.set("baton/session/load", (p) =>
      (p as { sessionId: string }).sessionId === CHILD
        ? { sessionId: CHILD, title: "Find the TODOs", mode: "build", messages: childMessages }
        : { sessionId: SESSION, title: "Tidy", mode: "build", messages: [] },
    );
  });

  it("Approve Plan and Build Step by Step sends build: steps", async () => {
    await run("baton.approvePlanStepByStep");
    expect(sentRequests("baton/plan/approve")).toEqual([{ sessionId: SESSION, start: true, build: "steps" }]);
    expect(services.state.mode(SESSION)).toBe("build");
  });

  it("the session list shows each child under its parent; picking one opens its read-only transcript", async () => {
    vscode.window.showQuickPick.mockImplementationOnce(async (items: unknown) => (items as Array<{ sessionId: string }>).find((i) => i.sessionId === CHILD));
    await run("baton.switchSession");
    const [items] = vscode.window.showQuickPick.mock.calls[0] as [Array<{ label: string; description: string; sessionId: string }>];
    expect(items.map((i) => i.sessionId)).toEqual(["", SESSION, CHILD, "s-old"]);
    expect(items[2]?.label).toBe("$(indent) explore: Find the TODOs");
    expect(items[2]?.description).toBe("Child session");
    // Not previewed by the task prompt Baton wrote for it (issue 50, point 8).
    expect((items[2] as { detail?: string }).detail).toMatch(/^part of “Tidy”/);
    const opened = vscode.workspace.openTextDocument.mock.calls.map((c) => c[0] as { scheme: string; path: string });
    expect(opened.at(-1)?.scheme).toBe(CHILD_SCHEME);
    expect(opened.at(-1)?.path.startsWith(`/${CHILD}/`)).toBe(true);
    // The sidebar stays on the parent: a child is not a session to prompt.
    expect(services.state.activeSessionId).toBe(SESSION);
    const text = await childProvider().provideTextDocumentContent(opened.at(-1));
    expect(text).toContain("## Task\n\nList every TODO in src/");
    expect(text).toContain("- **grep** `TODO`: completed");
    expect(text).toContain("src/a.py:3: # TODO cache");
  });

  it("the transcript says the child's status from its parent's child updates", async () => {
    await services.client.ensureStarted();
    fake.last.notificationHandlers.get("baton/session/update")?.({
      sessionId: SESSION,
      update: { kind: "child", callId: "t1", childId: CHILD, agent: "explore", description: "Find the TODOs", status: "running", currentTool: "grep", tokens: 4200, step: { index: 2, total: 5 } },
    });
    await services.sidebar.openChild(CHILD);
    const uri = vscode.workspace.openTextDocument.mock.calls.at(-1)?.[0];
    const text = await childProvider().provideTextDocumentContent(uri);
    expect(text.split("\n")[0]).toBe("# Child session: explore: Find the TODOs");
    expect(text).toContain("Status: **running** · step 2 of 5 · 4,200 tokens");
  });

  it("a child's permission request, asked in a dialog, says a child asks", async () => {
    /** The child's `bash ls` asked with the sidebar hidden: the dialog's message. */
    const ask = async (): Promise<unknown> => {
      vscode.window.showWarningMessage.mockResolvedValueOnce(undefined);
      await services.sidebar.askPermission(
        {
          sessionId: CHILD,
          parentId: SESSION,
          agent: "explore",
          toolCall: { toolCallId: "x", name: "bash", input: { command: "ls" } },
          options: [{ optionId: "allow_once", kind: "allow_once" }],
        } as never,
        { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) } as never,
      );
      return vscode.window.showWarningMessage.mock.calls.at(-1)?.[0];
    };
    expect(await ask()).toBe("Baton: the explore child of a session wants to run bash");
    // Once the parent told of the child, the dialog names its task too.
    fake.last.notificationHandlers.get("baton/session/update")?.({
      sessionId: SESSION,
      update: { kind: "child", callId: "t1", childId: CHILD, agent: "explore", description: "Find the TODOs", status: "running", tokens: 1 },
    });
    expect(await ask()).toBe("Baton: the explore child “Find the TODOs” of a session wants to run bash");
  });
});

describe("child helpers", () => {
  it("nests children under their parent, oldest child first; an orphan stands alone", () => {
    const rows = [
      { sessionId: "p", createdAt: "1", updatedAt: "5" },
      { sessionId: "c2", createdAt: "3", updatedAt: "9", parentId: "p" },
      { sessionId: "c1", createdAt: "2", updatedAt: "4", parentId: "p" },
      { sessionId: "orphan", createdAt: "0", updatedAt: "1", parentId: "gone" },
      { sessionId: "q", createdAt: "1", updatedAt: "6" },
    ];
    expect(nestChildren(rows).map((r) => `${r.depth}:${r.session.sessionId}`)).toEqual(["0:q", "0:p", "1:c1", "1:c2", "0:orphan"]);
  });

  it("reads a child update and drops a malformed one", () => {
    const good = { kind: "child", callId: "c", childId: "k", agent: "build", description: "d", status: "max_steps", tokens: 3 };
    expect(parseChildProgress(good)).toEqual({ ...good, currentTool: null, step: null });
    expect(parseChildProgress({ ...good, status: "weird" })).toBeUndefined();
    expect(parseChildProgress({ ...good, step: { index: 0, total: 2 } })).toBeUndefined();
    expect(parseChildProgress({ ...good, kind: "tool_call" })).toBeUndefined();
  });

  it("fences a tool result that holds backticks with a longer fence", () => {
    const text = describeChild("k", childMessages as never);
    expect(text).toContain("  ````\n  src/a.py:3: # TODO cache\n  src/b.py:9: # TODO ```docs```\n  ````");
  });
});
