// Review and undo in the extension host: diffs before edits in VS Code's diff
// editor (Accept / Reject answer the permission request), completed changes
// reopened from the checkpoint store, Undo Last Turn's Changes with its
// conflict flow, and editor context (Add Selection to Prompt, @file mentions).
import { beforeEach, describe, expect, it, vi } from "vitest";
import { proposedContent } from "../../src/features/review/proposed";
import type { Services } from "../../src/services";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension, SESSION } from "./helpers";

const tick = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

function resolveSidebar(services: Services, visible = true) {
  const webview = vscode.fakeWebview();
  const disposed = new vscode.EventEmitter<void>();
  services.sidebar.resolveWebviewView({ webview, visible, onDidDispose: disposed.event } as never);
  return webview;
}

const posted = (webview: vscode.FakeWebview, type: string) =>
  webview.posted.filter((m) => (m as { type: string }).type === type) as Array<Record<string, unknown>>;

const sent = (method: string) =>
  fake.clients.flatMap((c) => c.sendRequest.mock.calls.filter((call) => call[0] === method).map((call) => call[1]));

const OPTIONS = [
  { optionId: "allow", kind: "allow_once" },
  { optionId: "always", kind: "allow_always" },
  { optionId: "reject", kind: "reject_once" },
];

function writeRequest(toolCallId: string, diff: string, input: Record<string, unknown>, name = "write") {
  return { sessionId: SESSION, toolCall: { toolCallId, name, input }, options: OPTIONS, diff };
}

/** `vscode.diff` opens a tab, as VS Code does; the controller closes it after the decision. */
function fakeDiffEditor() {
  const opened: Array<{ left: vscode.Uri; right: vscode.Uri; title: string }> = [];
  vscode.registeredCommands.set("vscode.diff", (...args: unknown[]) => {
    const [left, right, title] = args as [vscode.Uri, vscode.Uri, string];
    opened.push({ left, right, title });
    const tab = { input: new vscode.TabInputTextDiff(left, right), label: title };
    vscode.openTabs.push(tab);
    vscode.window.tabGroups.activeTabGroup.activeTab = tab;
  });
  return opened;
}

function contentOf(uri: vscode.Uri): string {
  const provider = vscode.workspace.registerTextDocumentContentProvider.mock.calls[0]?.[1] as {
    provideTextDocumentContent(uri: vscode.Uri): string;
  };
  return provider.provideTextDocumentContent(uri);
}

/** The proposal file's saved text (the editable right side of a pending write); undefined once forgotten. */
function proposalOf(uri: vscode.Uri): string | undefined {
  const provider = vscode.workspace.registerFileSystemProvider.mock.calls[0]?.[1] as { readFile(uri: vscode.Uri): Uint8Array };
  try {
    return new TextDecoder().decode(provider.readFile(uri));
  } catch {
    return undefined;
  }
}

/** An editor on `uri` holding `text`, as VS Code's text documents are (unsaved edits included). */
function editDocument(uri: vscode.Uri, text: string) {
  const doc = { uri, isDirty: true, isUntitled: false, getText: () => text, save: vi.fn(async () => true) };
  const index = vscode.workspace.textDocuments.findIndex((d) => d.uri.toString() === uri.toString());
  if (index >= 0) vscode.workspace.textDocuments.splice(index, 1, doc);
  else vscode.workspace.textDocuments.push(doc);
  vscode.documentChanged.fire({ document: doc });
  return doc;
}

const contextCalls = (key: string) =>
  vscode.commands.executeCommand.mock.calls.filter((c) => c[0] === "setContext" && c[1] === key).map((c) => c[2]);

describe("diffs before edits", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    await services.client.ensureStarted();
  });

  it("a protected path's diff says in its title that it always asks", async () => {
    resolveSidebar(services);
    const opened = fakeDiffEditor();
    vscode.fakeFiles.set("file:///workspace/.baton/config.toml", "maxSteps = 5\n");
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const request = {
      ...writeRequest("call_p1", "--- a/.baton/config.toml\n+++ b/.baton/config.toml\n@@ -1 +1 @@\n-maxSteps = 5\n+bash = \"allow\"\n", {
        path: ".baton/config.toml",
        content: 'bash = "allow"\n',
      }),
      options: OPTIONS.filter((o) => o.kind !== "allow_always"),
      reason: ".baton/config.toml is inside .baton/, which decides what Baton, git or the editor runs; changes there always ask, even after Always allow",
    };
    void handler(request, new vscode.CancellationTokenSource().token);
    await tick();
    expect(opened[0]!.title).toBe("Baton wants to overwrite .baton/config.toml (protected path: always asks) (edit the right side to change it; Accept ✓ / Reject ✗)");
  });

  it("a write is shown in the diff editor; Reject answers it (nothing allowed), asked again Accept allows it", async () => {
    const webview = resolveSidebar(services);
    const opened = fakeDiffEditor();
    vscode.fakeFiles.set("file:///workspace/greeting.txt", "hello\nworld\n");
    const diff = "--- a/greeting.txt\n+++ b/greeting.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n";
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const input = { path: "greeting.txt", content: "hello\nthere\n" };

    const first = handler(writeRequest("call_w1", diff, input), new vscode.CancellationTokenSource().token) as Promise<unknown>;
    await tick();
    expect(opened).toHaveLength(1);
    const [view] = opened;
    expect(view!.left.scheme).toBe("baton-review");
    expect(view!.right.path).toMatch(/\/greeting\.txt$/);
    expect(view!.title).toBe("Baton wants to overwrite greeting.txt (edit the right side to change it; Accept ✓ / Reject ✗)");
    expect(contentOf(view!.left)).toBe("hello\nworld\n");
    // The proposal is an editable file (not a read-only virtual document).
    expect(view!.right.scheme).toBe("baton-proposal");
    expect(proposalOf(view!.right)).toBe("hello\nthere\n");
    expect(contextCalls("baton.pendingReviewPaths").at(-1)).toEqual([view!.left.path, view!.right.path]);
    expect(contextCalls("baton.hasPendingReview").at(-1)).toBe(true);
    // The sidebar shows the same request, with its diff.
    expect(posted(webview, "permission")[0]).toMatchObject({ toolCall: { toolCallId: "call_w1" }, diff });

    // Reject from the diff editor's title bar (the command gets the editor's resource).
    await vscode.commands.executeCommand("baton.rejectChange", view!.right);
    await expect(first).resolves.toEqual({ outcome: { optionId: "reject" } });
    await tick();
    expect(vscode.openTabs).toHaveLength(0);
    expect(posted(webview, "permissionClosed")).toHaveLength(1);
    expect(contextCalls("baton.pendingReviewPaths").at(-1)).toEqual([]);
    expect(proposalOf(view!.right)).toBeUndefined(); // forgotten

    // Asked again: Accept from the palette acts on the active diff editor.
    const second = handler(writeRequest("call_w2", diff, input), new vscode.CancellationTokenSource().token) as Promise<unknown>;
    await tick();
    expect(opened).toHaveLength(2);
    await vscode.commands.executeCommand("baton.acceptChange");
    await expect(second).resolves.toEqual({ outcome: { optionId: "allow" } });
    await tick();
    expect(vscode.openTabs).toHaveLength(0);
    expect(posted(webview, "permissionClosed")).toHaveLength(2);
  });

  it("an edit's proposed side is the server's diff applied to the file on disk (CRLF kept)", async () => {
    resolveSidebar(services);
    const opened = fakeDiffEditor();
    vscode.fakeFiles.set("file:///workspace/a.txt", "one\r\ntwo\r\nthree");
    const diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-one\r\n-two\r\n+1\r\n+2\r\n three\n\\ No newline at end of file\n";
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const answer = handler(
      writeRequest("call_e", diff, { path: "a.txt", old_string: "one\ntwo", new_string: "1\n2" }, "edit"),
      new vscode.CancellationTokenSource().token,
    ) as Promise<unknown>;
    await tick();
    expect(opened[0]!.title).toBe("Baton wants to edit a.txt (edit the right side to change it; Accept ✓ / Reject ✗)");
    expect(proposalOf(opened[0]!.right)).toBe("1\r\n2\r\nthree");
    vscode.commands.executeCommand("baton.acceptChange", opened[0]!.left);
    await expect(answer).resolves.toEqual({ outcome: { optionId: "allow" } });
  });

  it("a request the server withdraws ($/cancelRequest) closes the prompt and the diff editor", async () => {
    const webview = resolveSidebar(services);
    fakeDiffEditor();
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const withdrawn = new vscode.CancellationTokenSource();
    const answer = handler(
      writeRequest("call_x", "--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+x\n", { path: "x.txt", content: "x\n" }),
      withdrawn.token,
    ) as Promise<unknown>;
    await tick();
    expect(posted(webview, "permission")).toHaveLength(1);
    expect(vscode.openTabs).toHaveLength(1);
    withdrawn.cancel();
    await expect(answer).resolves.toEqual({ outcome: "cancelled" });
    await tick();
    expect(posted(webview, "permissionClosed")).toHaveLength(1);
    expect(vscode.openTabs).toHaveLength(0);
    expect(services.review.pendingReviews).toHaveLength(0);
  });

  it("answering in the sidebar (Always allow) closes the diff editor", async () => {
    const webview = resolveSidebar(services);
    fakeDiffEditor();
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const answer = handler(
      writeRequest("call_n", "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n", { path: "new.txt", content: "fresh\n" }),
      new vscode.CancellationTokenSource().token,
    ) as Promise<unknown>;
    await tick();
    expect(vscode.openTabs[0]?.label).toBe("Baton wants to create new.txt (edit the right side to change it; Accept ✓ / Reject ✗)");
    const prompt = posted(webview, "permission")[0]!;
    webview.receive({ type: "permissionAnswer", requestId: prompt.requestId, optionId: "always" });
    await expect(answer).resolves.toEqual({ outcome: { optionId: "always" } });
    await tick();
    expect(vscode.openTabs).toHaveLength(0);
    expect(services.review.pendingReviews).toHaveLength(0);
  });

  it("the server cancelling the request closes both; a reopened diff comes from Show Change Waiting for Review", async () => {
    resolveSidebar(services);
    const opened = fakeDiffEditor();
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const source = new vscode.CancellationTokenSource();
    const answer = handler(writeRequest("call_c", "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n", { path: "x", content: "x\n" }), source.token) as Promise<unknown>;
    await tick();
    vscode.openTabs.length = 0; // the person closed the tab
    await vscode.commands.executeCommand("baton.showPendingChange", "call_c");
    expect(opened).toHaveLength(2);
    source.cancel();
    await expect(answer).resolves.toEqual({ outcome: "cancelled" });
  });

  it("commands and other tools are not shown in the diff editor", async () => {
    resolveSidebar(services);
    const opened = fakeDiffEditor();
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const source = new vscode.CancellationTokenSource();
    const answer = handler(
      { sessionId: SESSION, toolCall: { toolCallId: "b", name: "bash", input: { command: "ls" } }, options: OPTIONS },
      source.token,
    ) as Promise<unknown>;
    await tick();
    expect(opened).toHaveLength(0);
    source.cancel();
    await expect(answer).resolves.toEqual({ outcome: "cancelled" });
  });

  it("a completed change opens from its tool card with the before and after from the checkpoint store", async () => {
    const webview = resolveSidebar(services);
    const opened = fakeDiffEditor();
    fake.responders.set("baton/session/changes", () => ({
      changes: [{ path: "src/app.py", existedBefore: true, existsAfter: true, before: "x = 1\n", after: "x = 2\n", reverted: false }],
    }));
    webview.receive({ type: "openChange", sessionId: SESSION, toolCallId: "call_9" });
    await tick(5);
    expect(sent("baton/session/changes")).toEqual([{ sessionId: SESSION, toolCallId: "call_9" }]);
    expect(opened[0]!.title).toBe("src/app.py: changed by Baton");
    expect(contentOf(opened[0]!.left)).toBe("x = 1\n");
    expect(contentOf(opened[0]!.right)).toBe("x = 2\n");
    // Nothing waits for a decision: Accept / Reject stay hidden for this diff.
    expect(services.review.pendingReviews).toHaveLength(0);
  });
});

describe("editing a proposal before accepting it", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    await services.client.ensureStarted();
  });

  const diff = "--- a/greeting.txt\n+++ b/greeting.txt\n@@ -1,2 +1,3 @@\n hello\n-world\n+there\n+friend\n";
  const input = { path: "greeting.txt", content: "hello\nthere\nfriend\n" };

  it("the proposal is an editable file; the card is told of edits; Accept in the sidebar sends the person's text", async () => {
    const webview = resolveSidebar(services);
    const opened = fakeDiffEditor();
    vscode.fakeFiles.set("file:///workspace/greeting.txt", "hello\nworld\n");
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const answer = handler(writeRequest("call_ed", diff, input), new vscode.CancellationTokenSource().token) as Promise<unknown>;
    await tick();
    const right = opened[0]!.right;
    // Served by a registered file system (editable in VS Code), not the read-only content provider.
    expect(vscode.workspace.registerFileSystemProvider).toHaveBeenCalledWith("baton-proposal", expect.anything(), { isCaseSensitive: true });
    const provider = vscode.workspace.registerFileSystemProvider.mock.calls[0]![1] as {
      writeFile(uri: vscode.Uri, data: Uint8Array): void;
      stat(uri: vscode.Uri): { type: number };
    };
    expect(provider.stat(right).type).toBe(vscode.FileType.File);
    // Saving in the diff editor keeps the text in memory.
    provider.writeFile(right, new TextEncoder().encode("saved\n"));
    expect(proposalOf(right)).toBe("saved\n");
    expect(() => provider.writeFile(vscode.Uri.from({ scheme: "baton-proposal", path: "/other/x" }), new Uint8Array())).toThrow();
    provider.writeFile(right, new TextEncoder().encode(input.content));

    // The person undoes the second hunk line ("friend") and changes another: the card hears of it once.
    editDocument(right, "hello\nthere, you\n");
    const doc = editDocument(right, "hello\nthere, you!\n");
    expect(posted(webview, "permissionEdited")).toEqual([{ type: "permissionEdited", toolCallId: "call_ed", edited: true }]);
    const prompt = posted(webview, "permission")[0]!;
    webview.receive({ type: "permissionAnswer", requestId: prompt.requestId, optionId: "allow" });
    await expect(answer).resolves.toEqual({ outcome: { optionId: "allow", editedContent: "hello\nthere, you!\n" } });
    await tick();
    // The edited document was saved (to memory) before its tab closed, so closing asks nothing.
    expect(doc.save).toHaveBeenCalled();
    expect(vscode.openTabs).toHaveLength(0);
    expect(proposalOf(right)).toBeUndefined();
  });

  it("edited back to the proposal: the card is told, and Accept sends no edits", async () => {
    const webview = resolveSidebar(services);
    const opened = fakeDiffEditor();
    vscode.fakeFiles.set("file:///workspace/greeting.txt", "hello\nworld\n");
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const answer = handler(writeRequest("call_back", diff, input), new vscode.CancellationTokenSource().token) as Promise<unknown>;
    await tick();
    editDocument(opened[0]!.right, "mine\n");
    editDocument(opened[0]!.right, input.content);
    expect(posted(webview, "permissionEdited").map((m) => m.edited)).toEqual([true, false]);
    await vscode.commands.executeCommand("baton.acceptChange", opened[0]!.right);
    await expect(answer).resolves.toEqual({ outcome: { optionId: "allow" } });
  });

  it("Accept in the diff editor's title bar sends the edits; Reject never does", async () => {
    resolveSidebar(services);
    const opened = fakeDiffEditor();
    vscode.fakeFiles.set("file:///workspace/greeting.txt", "hello\nworld\n");
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const first = handler(writeRequest("call_a", diff, input), new vscode.CancellationTokenSource().token) as Promise<unknown>;
    await tick();
    editDocument(opened[0]!.right, "hello\nworld\nand more\n");
    await vscode.commands.executeCommand("baton.acceptChange", opened[0]!.right);
    await expect(first).resolves.toEqual({ outcome: { optionId: "allow", editedContent: "hello\nworld\nand more\n" } });

    const second = handler(writeRequest("call_r", diff, input), new vscode.CancellationTokenSource().token) as Promise<unknown>;
    await tick();
    editDocument(opened[1]!.right, "not sent\n");
    await vscode.commands.executeCommand("baton.rejectChange", opened[1]!.right);
    await expect(second).resolves.toEqual({ outcome: { optionId: "reject" } });
  });

  it("with the sidebar hidden an editable proposal is asked in the sidebar's card, not a modal dialog that would block editing", async () => {
    const webview = vscode.fakeWebview();
    const view = { webview, visible: false, onDidDispose: new vscode.EventEmitter<void>().event };
    services.sidebar.resolveWebviewView(view as never);
    const opened = fakeDiffEditor();
    const focus = vi.fn(() => {
      view.visible = true;
    });
    vscode.registeredCommands.set("baton.agent.focus", focus);
    vscode.fakeFiles.set("file:///workspace/greeting.txt", "hello\nworld\n");
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const answer = handler(writeRequest("call_h", diff, input), new vscode.CancellationTokenSource().token) as Promise<unknown>;
    await tick(5);
    expect(focus).toHaveBeenCalled();
    expect(vscode.window.showWarningMessage).not.toHaveBeenCalled();
    editDocument(opened[0]!.right, "mine\n");
    const prompt = posted(webview, "permission")[0]!;
    webview.receive({ type: "permissionAnswer", requestId: prompt.requestId, optionId: "allow" });
    await expect(answer).resolves.toEqual({ outcome: { optionId: "allow", editedContent: "mine\n" } });
  });

  it("a diff that no longer applies is shown read-only and is never sent as edits", async () => {
    resolveSidebar(services);
    const opened = fakeDiffEditor();
    vscode.fakeFiles.set("file:///workspace/a.txt", "changed meanwhile\n");
    const stale = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";
    const handler = fake.last.requestHandlers.get("baton/permission/request")!;
    const answer = handler(
      writeRequest("call_s", stale, { path: "a.txt", old_string: "a", new_string: "b" }, "edit"),
      new vscode.CancellationTokenSource().token,
    ) as Promise<unknown>;
    await tick();
    expect(opened[0]!.right.scheme).toBe("baton-review");
    expect(opened[0]!.title).toBe("Baton wants to edit a.txt (Accept ✓ / Reject ✗)");
    editDocument(opened[0]!.right, "typed into a read-only view\n");
    await vscode.commands.executeCommand("baton.acceptChange", opened[0]!.right);
    await expect(answer).resolves.toEqual({ outcome: { optionId: "allow" } });
  });
});

describe("undoing one hunk of an applied change", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    await services.client.ensureStarted();
  });

  it("a change the file still holds opens against the workspace file itself (its arrows undo a hunk)", async () => {
    const webview = resolveSidebar(services);
    const opened = fakeDiffEditor();
    fake.responders.set("baton/session/changes", () => ({
      changes: [{ path: "src/app.py", existedBefore: true, existsAfter: true, before: "x = 1\ny = 1\n", after: "x = 2\ny = 2\n", reverted: false }],
    }));
    vscode.fakeFiles.set("file:///workspace/src/app.py", "x = 2\ny = 2\n");
    webview.receive({ type: "openChange", sessionId: SESSION, toolCallId: "call_9" });
    await tick(5);
    expect(opened[0]!.right.toString()).toBe("file:///workspace/src/app.py");
    expect(contentOf(opened[0]!.left)).toBe("x = 1\ny = 1\n");
    expect(opened[0]!.title).toBe("src/app.py: changed by Baton (your file: undo a hunk with its arrow, then save)");

    // Changed since (a later turn, or a hunk already undone): the recorded after, read-only.
    vscode.fakeFiles.set("file:///workspace/src/app.py", "x = 1\ny = 2\n");
    webview.receive({ type: "openChange", sessionId: SESSION, toolCallId: "call_9" });
    await tick(5);
    expect(opened[1]!.right.scheme).toBe("baton-review");
    expect(contentOf(opened[1]!.right)).toBe("x = 2\ny = 2\n");
    expect(opened[1]!.title).toBe("src/app.py: changed by Baton");
    // An open editor with unsaved text counts as the file.
    editDocument(vscode.Uri.parse("file:///workspace/src/app.py"), "x = 2\ny = 2\n");
    webview.receive({ type: "openChange", sessionId: SESSION, toolCallId: "call_9" });
    await tick(5);
    expect(opened[2]!.right.scheme).toBe("file");
  });

  it("a reverted change stays read-only", async () => {
    const webview = resolveSidebar(services);
    const opened = fakeDiffEditor();
    fake.responders.set("baton/session/changes", () => ({
      changes: [{ path: "b.txt", existedBefore: true, existsAfter: true, before: "b\n", after: "B\n", reverted: true }],
    }));
    vscode.fakeFiles.set("file:///workspace/b.txt", "B\n");
    webview.receive({ type: "openChange", sessionId: SESSION, toolCallId: "call_b" });
    await tick(5);
    expect(opened[0]!.right.scheme).toBe("baton-review");
    expect(opened[0]!.title).toBe("b.txt: changed by Baton (reverted)");
  });
});

describe("proposed content", () => {
  it("applies the server's diffs exactly (new file, no final newline, unicode)", () => {
    expect(proposedContent({ tool: "edit", input: {}, current: undefined, diff: "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+new\n+file\n" })).toBe("new\nfile\n");
    expect(
      proposedContent({
        tool: "edit",
        input: {},
        current: "a\nb",
        diff: "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n\\ No newline at end of file\n",
      }),
    ).toBe("a\nb\nc");
    expect(proposedContent({ tool: "edit", input: {}, current: "π = 3.14\n", diff: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-π = 3.14\n+π = 3.1416\n" })).toBe(
      "π = 3.1416\n",
    );
    // A diff that no longer applies (the file changed) gives nothing; write uses its content.
    expect(proposedContent({ tool: "edit", input: {}, current: "zzz\n", diff: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n" })).toBeUndefined();
    expect(proposedContent({ tool: "write", input: { content: "whole\n" }, current: "zzz\n", diff: "x" })).toBe("whole\n");
  });
});

describe("undo", () => {
  let services: Services;
  const messages = [
    { id: "u1", role: "user", createdAt: "t", parts: [{ type: "text", text: "one" }], reverted: false },
    { id: "a1", role: "assistant", createdAt: "t", parts: [], reverted: false },
    { id: "u2", role: "user", createdAt: "t", parts: [{ type: "text", text: "two" }], reverted: false },
    { id: "a2", role: "assistant", createdAt: "t", parts: [], reverted: false },
    { id: "u3", role: "user", createdAt: "t", parts: [{ type: "text", text: "three" }], reverted: true },
  ];
  const files = [
    { path: "a.txt", action: "restored" },
    { path: "new/c.txt", action: "removed" },
  ];
  beforeEach(async () => {
    ({ services } = await activateExtension());
    services.state.setActive(SESSION);
    fake.responders.set("baton/session/load", () => ({ sessionId: SESSION, title: "First", mode: "build", messages }));
  });

  it("Undo Last Turn's Changes: shows what a dry run would restore, reverts, and on -32011 asks before forcing", async () => {
    const calls: unknown[] = [];
    fake.responders.set("baton/session/revert", (p) => {
      const params = p as { dryRun?: boolean; force?: boolean };
      calls.push(p);
      if (params.dryRun) return { revertId: null, messageIds: ["u2", "a2"], files, conflicts: [], shellCommands: ["make"], notes: [], dryRun: true };
      if (!params.force) {
        throw Object.assign(new Error("revert refused"), {
          code: -32011,
          data: { conflicts: [{ path: "a.txt", reason: "modified" }] },
        });
      }
      return { revertId: "rev_1", messageIds: ["u2", "a2"], files, conflicts: [{ path: "a.txt", reason: "modified" }], shellCommands: [], notes: [], dryRun: false };
    });
    vscode.window.showWarningMessage.mockResolvedValueOnce("Undo").mockResolvedValueOnce("Overwrite and Undo");
    const webview = resolveSidebar(services);
    await vscode.commands.executeCommand("baton.undoLastTurn");
    expect(calls).toEqual([
      { sessionId: SESSION, messageId: "u2", dryRun: true },
      { sessionId: SESSION, messageId: "u2" },
      { sessionId: SESSION, messageId: "u2", force: true },
    ]);
    const [question, options] = vscode.window.showWarningMessage.mock.calls[0] as [string, { modal: boolean; detail: string }];
    expect(question).toBe("Baton: undo the last turn's changes?");
    expect(options.modal).toBe(true);
    expect(options.detail).toContain("Restores: a.txt");
    expect(options.detail).toContain("Removes (created by the turn): new/c.txt");
    expect(options.detail).toContain("`make`");
    const [conflict, conflictOptions] = vscode.window.showWarningMessage.mock.calls[1] as [string, { detail: string }];
    expect(conflict).toContain("changed outside Baton");
    expect(conflictOptions.detail).toBe("a.txt: changed since Baton's last change");
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith("Baton: undone; 2 files restored.");
    // The sidebar shows the session again from the server, reverted marks included.
    expect(posted(webview, "history").length).toBeGreaterThan(0);
  });

  it("declining either question changes nothing", async () => {
    const calls: unknown[] = [];
    fake.responders.set("baton/session/revert", (p) => {
      calls.push(p);
      if ((p as { dryRun?: boolean }).dryRun) return { revertId: null, messageIds: [], files, conflicts: [], shellCommands: [], notes: [], dryRun: true };
      throw Object.assign(new Error("refused"), { code: -32011, data: { conflicts: [{ path: "a.txt", reason: "deleted" }] } });
    });
    vscode.window.showWarningMessage.mockResolvedValueOnce(undefined);
    await vscode.commands.executeCommand("baton.undoLastTurn");
    expect(calls).toHaveLength(1);
    vscode.window.showWarningMessage.mockResolvedValueOnce("Undo").mockResolvedValueOnce(undefined);
    await vscode.commands.executeCommand("baton.undoLastTurn");
    expect(calls).toHaveLength(3); // dry run, refused revert, no force
    expect(vscode.window.showInformationMessage).not.toHaveBeenCalled();
  });

  it("the sidebar's Undo on a turn reverts from that turn; a session with nothing to undo says so", async () => {
    fake.responders.set("baton/session/revert", (p) => ({
      revertId: (p as { dryRun?: boolean }).dryRun ? null : "rev",
      messageIds: ["u1"],
      files: [],
      conflicts: [],
      shellCommands: [],
      notes: [],
      dryRun: (p as { dryRun?: boolean }).dryRun === true,
    }));
    vscode.window.showWarningMessage.mockResolvedValueOnce("Undo");
    const webview = resolveSidebar(services);
    webview.receive({ type: "revert", sessionId: SESSION, messageId: "u1" });
    await tick(8);
    expect(sent("baton/session/revert")).toEqual([
      { sessionId: SESSION, messageId: "u1", dryRun: true },
      { sessionId: SESSION, messageId: "u1" },
    ]);
    expect(vscode.window.showWarningMessage.mock.calls[0]?.[0]).toBe("Baton: undo this turn and every later one?");
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith("Baton: undone; no files needed restoring.");

    fake.responders.set("baton/session/load", () => ({ sessionId: SESSION, title: "First", mode: "build", messages: [messages[4]] }));
    await vscode.commands.executeCommand("baton.undoLastTurn");
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith("Baton: this session has no turn to undo.");
  });
});

describe("editor context", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    await services.client.ensureStarted();
    fake.responders.set("baton/session/prompt", () => ({ stopReason: "end_turn" }));
  });

  const selection = {
    document: { uri: vscode.Uri.file("/workspace/src/app.py"), isUntitled: false },
    selection: { isEmpty: false, start: { line: 9, character: 4 }, end: { line: 12, character: 0 } },
  };
  const range = { start: { line: 9, character: 4 }, end: { line: 12, character: 0 } };

  it("Add Selection to Prompt attaches the selected lines; the prompt sends them, @mentions and unsaved text", async () => {
    const webview = resolveSidebar(services);
    webview.receive({ type: "ready", activeSessionId: SESSION });
    await tick(5);
    vscode.window.activeTextEditor = selection;
    await vscode.commands.executeCommand("baton.addSelectionToPrompt");
    const attach = posted(webview, "attach");
    expect(attach).toEqual([{ type: "attach", attachment: { uri: "file:///workspace/src/app.py", label: "src/app.py:10-12", range } }]);
    expect(vscode.commands.executeCommand).toHaveBeenCalledWith("baton.agent.focus");

    vscode.fakeFiles.set("file:///workspace/README.md", "# readme\n");
    vscode.fakeFiles.set("file:///workspace/notes.md", "on disk\n");
    vscode.workspace.textDocuments.push({
      uri: vscode.Uri.file("/workspace/notes.md"),
      isDirty: true,
      isUntitled: false,
      getText: () => "unsaved edit\n",
    });
    webview.receive({
      type: "prompt",
      sessionId: SESSION,
      text: "Compare @README.md with @notes.md, not @missing.txt or me@example.com",
      attachments: attach[0]!.attachment ? [attach[0]!.attachment] : [],
    });
    await tick(8);
    expect(sent("baton/session/prompt")).toEqual([
      {
        sessionId: SESSION,
        text: "Compare @README.md with @notes.md, not @missing.txt or me@example.com",
        context: [
          { uri: "file:///workspace/src/app.py", range },
          { uri: "file:///workspace/README.md" },
          { uri: "file:///workspace/notes.md", text: "unsaved edit\n" },
        ],
      },
    ]);
  });

  it("an empty selection attaches the whole file; before the view is ready the attachment waits for it", async () => {
    vscode.window.activeTextEditor = { ...selection, selection: { isEmpty: true, start: { line: 3, character: 0 }, end: { line: 3, character: 0 } } };
    await vscode.commands.executeCommand("baton.addSelectionToPrompt");
    const webview = resolveSidebar(services);
    expect(posted(webview, "attach")).toEqual([]);
    webview.receive({ type: "ready", activeSessionId: SESSION });
    await tick(8);
    expect(posted(webview, "attach")).toEqual([{ type: "attach", attachment: { uri: "file:///workspace/src/app.py", label: "src/app.py" } }]);
    expect(webview.posted.findIndex((m) => (m as { type: string }).type === "attach")).toBeGreaterThan(
      webview.posted.findIndex((m) => (m as { type: string }).type === "history"),
    );
  });

  it("@ completion lists workspace files matching what was typed", async () => {
    const webview = resolveSidebar(services);
    for (const path of ["src/app.py", "src/apple.ts", "docs/app-guide.md", "README.md"]) vscode.fakeFiles.set(`file:///workspace/${path}`, "");
    webview.receive({ type: "mentionQuery", query: "app" });
    await tick(5);
    expect(posted(webview, "mentionResults")).toEqual([
      { type: "mentionResults", query: "app", paths: ["src/app.py", "src/apple.ts", "docs/app-guide.md"] },
    ]);
  });

  it("after a turn ends the webview gets the messages' ids and reverted marks", async () => {
    const webview = resolveSidebar(services);
    services.state.setActive(SESSION);
    fake.responders.set("baton/session/load", () => ({
      sessionId: SESSION,
      title: "First",
      mode: "build",
      messages: [{ id: "u1", role: "user", createdAt: "t", parts: [{ type: "text", text: "hi" }, { type: "attachment", uri: "u", path: "p", text: "x" }], reverted: false }],
    }));
    fake.last.notificationHandlers.get("baton/session/update")?.({ sessionId: SESSION, update: { kind: "turn_ended", stopReason: "end_turn" } });
    await tick(5);
    expect(posted(webview, "messageMarks")).toEqual([
      { type: "messageMarks", sessionId: SESSION, messages: [{ id: "u1", role: "user", reverted: false, text: "hi" }] },
    ]);
  });
});
