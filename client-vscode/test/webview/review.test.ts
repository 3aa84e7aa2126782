// The sidebar's review and undo controls in headless Chromium: Undo per turn,
// reverted turns, Diff on completed changes and on permission prompts,
// attachment chips, and @file completion in the prompt box.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openWebview, posted, SCREENSHOTS, send, waitForPosted } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const SESSION = "s-1";
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: SESSION, update: u });

const HISTORY = [
  {
    id: "u1",
    role: "user",
    createdAt: "t",
    parts: [
      { type: "text", text: "Tidy the cache" },
      { type: "attachment", uri: "file:///w/src/app.py", path: "src/app.py", startLine: 10, endLine: 12, source: "disk", text: "x" },
    ],
  },
  {
    id: "a1",
    role: "assistant",
    createdAt: "t",
    parts: [
      { type: "text", text: "Done." },
      { type: "tool_call", toolCallId: "call_w", name: "write", input: { path: "cache.py", content: "x" }, status: "completed", output: "wrote cache.py" },
      { type: "tool_call", toolCallId: "call_r", name: "read", input: { path: "cache.py" }, status: "completed", output: "x" },
    ],
  },
  { id: "u2", role: "user", createdAt: "t", reverted: true, parts: [{ type: "text", text: "Now break it" }] },
  { id: "a2", role: "assistant", createdAt: "t", reverted: true, parts: [{ type: "text", text: "Broken." }] },
];

async function sidebar(theme = false): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: SESSION,
    sessions: [{ sessionId: SESSION, title: "Cache work", mode: "build", createdAt: "t", updatedAt: "t" }],
  });
  await send(page, { type: "history", sessionId: SESSION, title: "Cache work", mode: "build", running: false, messages: HISTORY });
  await page.waitForSelector("[data-kind=turn-actions]");
  return page;
}

describe("sidebar review and undo", () => {
  it("puts Undo on every turn, marks reverted turns, and shows a prompt's attachments", async () => {
    const page = await sidebar();
    const first = page.locator("[data-kind=turn-actions][data-message-id=u1]");
    expect(await first.locator(".undo-turn").innerText()).toBe("Undo");
    const second = page.locator("[data-kind=turn-actions][data-message-id=u2]");
    expect(await second.locator(".undo-turn").count()).toBe(0);
    expect(await second.locator(".reverted-badge").innerText()).toBe("Reverted");
    // The reverted turn (its prompt and answer) is dimmed; the first is not.
    const users = page.locator("[data-kind=user]");
    expect(await users.nth(0).getAttribute("class")).not.toContain("reverted");
    expect(await users.nth(1).getAttribute("class")).toContain("reverted");
    expect(await page.locator("[data-kind=assistant]").nth(1).getAttribute("class")).toContain("reverted");
    expect(await users.nth(0).locator(".chip").innerText()).toBe("@src/app.py:10-12");

    await first.locator(".undo-turn").click();
    expect(await waitForPosted(page, "revert")).toEqual({ type: "revert", sessionId: SESSION, messageId: "u1" });
    await page.close();
  });

  it("a completed write or edit card has Diff (not reads); it opens the change without toggling the card", async () => {
    const page = await sidebar();
    const write = page.locator("[data-tool-call-id=call_w]");
    await write.locator(".view-change").waitFor();
    expect(await page.locator("[data-tool-call-id=call_r] .view-change").count()).toBe(0);
    await write.locator(".view-change").click();
    expect(await waitForPosted(page, "openChange")).toEqual({ type: "openChange", sessionId: SESSION, toolCallId: "call_w" });
    expect(await write.getAttribute("open")).toBeNull();

    // Live: an edit gets Diff once it completed, and the new turn its Undo once the host sends ids.
    await page.locator("#prompt").click();
    await page.keyboard.type("Rename the cache");
    await page.click("#send");
    await send(page, update({ kind: "tool_call", toolCallId: "call_e", name: "edit", input: { path: "cache.py" }, status: "pending" }));
    await send(page, update({ kind: "tool_call_update", toolCallId: "call_e", status: "in_progress" }));
    expect(await page.locator("[data-tool-call-id=call_e] .view-change").count()).toBe(0);
    await send(page, update({ kind: "tool_call_update", toolCallId: "call_e", status: "completed", output: "edited" }));
    await page.locator("[data-tool-call-id=call_e] .view-change").waitFor();
    await send(page, update({ kind: "turn_ended", stopReason: "end_turn" }));
    await send(page, {
      type: "messageMarks",
      sessionId: SESSION,
      messages: [
        { id: "u1", role: "user", reverted: false, text: "Tidy the cache" },
        { id: "a1", role: "assistant", reverted: false },
        { id: "u2", role: "user", reverted: true, text: "Now break it" },
        { id: "a2", role: "assistant", reverted: true },
        { id: "u3", role: "user", reverted: false, text: "Rename the cache" },
        { id: "a3", role: "assistant", reverted: false },
      ],
    });
    const third = page.locator("[data-kind=turn-actions][data-message-id=u3]");
    await third.waitFor();
    expect(await page.locator("[data-kind=user]").nth(2).getAttribute("class")).not.toContain("reverted");
    await third.locator(".undo-turn").click();
    expect(await waitForPosted(page, "revert")).toEqual({ type: "revert", sessionId: SESSION, messageId: "u3" });
    await page.close();
  });

  it("attachments become chips, can be removed, and go with the prompt", async () => {
    const page = await sidebar();
    const range = { start: { line: 9, character: 0 }, end: { line: 12, character: 0 } };
    await send(page, { type: "attach", attachment: { uri: "file:///w/src/app.py", label: "src/app.py:10-12", range } });
    await send(page, { type: "attach", attachment: { uri: "file:///w/README.md", label: "README.md" } });
    await send(page, { type: "attach", attachment: { uri: "file:///w/README.md", label: "README.md" } }); // once only
    const chips = page.locator("#attachments .chip");
    await chips.nth(1).waitFor();
    expect(await chips.allTextContents()).toEqual(["@src/app.py:10-12×", "@README.md×"]);
    const saved = await page.evaluate(() => (window as unknown as { __state: { attachments?: unknown[] } }).__state);
    expect(saved.attachments).toHaveLength(2);

    await chips.nth(1).locator(".chip-remove").click();
    expect(await chips.count()).toBe(1);
    await page.locator("#prompt").click();
    await page.keyboard.type("Explain this");
    await page.keyboard.press("Control+Enter");
    expect(await waitForPosted(page, "prompt")).toEqual({
      type: "prompt",
      sessionId: SESSION,
      text: "Explain this",
      attachments: [{ uri: "file:///w/src/app.py", label: "src/app.py:10-12", range }],
    });
    expect(await page.locator("#attachments").isHidden()).toBe(true);
    expect(await page.locator("[data-kind=user]").last().locator(".chip").innerText()).toBe("@src/app.py:10-12");
    await page.close();
  });

  it("@ in the prompt box completes workspace files from the host", async () => {
    const page = await sidebar();
    await page.locator("#prompt").click();
    await page.keyboard.type("Compare @ap");
    // One query per keystroke after "@": wait for the last one.
    await page.waitForFunction(() =>
      (window as unknown as { __posted: Array<{ type: string; query?: string }> }).__posted.some((m) => m.query === "ap"),
    );
    await send(page, { type: "mentionResults", query: "ap", paths: ["src/app.py", "src/apple.ts"] });
    const list = page.locator("#mentions");
    await list.locator("[role=option]").nth(1).waitFor();
    expect(await list.locator("[aria-selected=true]").innerText()).toBe("src/app.py");
    await page.keyboard.press("ArrowDown");
    expect(await list.locator("[aria-selected=true]").innerText()).toBe("src/apple.ts");
    await page.keyboard.press("Enter");
    await list.waitFor({ state: "hidden" });
    await page.keyboard.type("and more");
    const value = await page.evaluate(() => (document.getElementById("prompt") as unknown as { value: string }).value);
    expect(value).toBe("Compare @src/apple.ts and more");
    expect((await posted(page)).filter((m) => m.type === "prompt")).toEqual([]);
    // Stale answers (for an earlier query) are ignored; Escape closes the list.
    await page.keyboard.type(" @RE");
    await waitForPosted(page, "mentionQuery");
    await send(page, { type: "mentionResults", query: "ap", paths: ["src/app.py"] });
    await page.waitForTimeout(100);
    expect(await list.isHidden()).toBe(true);
    await send(page, { type: "mentionResults", query: "RE", paths: ["README.md"] });
    await list.locator("[role=option]").waitFor();
    await page.keyboard.press("Escape");
    await list.waitFor({ state: "hidden" });
    await page.close();
  });

  it("a permission prompt for a write offers Open diff", async () => {
    const page = await sidebar();
    await send(page, {
      type: "permission",
      requestId: "perm-3",
      sessionId: SESSION,
      toolCall: { toolCallId: "call_p", name: "write", input: { path: "cache.py", content: "y" } },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "reject", kind: "reject_once" },
      ],
      diff: "--- a/cache.py\n+++ b/cache.py\n@@ -1 +1 @@\n-x\n+y\n",
    });
    const card = page.locator("[data-request-id=perm-3]");
    await card.locator(".open-diff").click();
    expect(await waitForPosted(page, "showPendingChange")).toEqual({ type: "showPendingChange", toolCallId: "call_p" });
    await page.close();
  });

  it("a write the person edited in the diff editor says so: Accept with your edits, and back when edited back", async () => {
    const page = await sidebar();
    await send(page, {
      type: "permission",
      requestId: "perm-4",
      sessionId: SESSION,
      toolCall: { toolCallId: "call_e", name: "write", input: { path: "cache.py", content: "y" } },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "always", kind: "allow_always", scope: "path" },
        { optionId: "reject", kind: "reject_once" },
      ],
      diff: "--- a/cache.py\n+++ b/cache.py\n@@ -1 +1 @@\n-x\n+y\n",
    });
    const card = page.locator("[data-request-id=perm-4]");
    const allow = card.locator(".permission-option.allow_once .permission-label");
    expect(await allow.innerText()).toBe("Allow once");
    // Another call's edits, and a malformed message, change nothing here.
    await send(page, { type: "permissionEdited", toolCallId: "call_other", edited: true });
    await send(page, { type: "permissionEdited", toolCallId: "call_e", edited: "yes" });
    await page.waitForTimeout(50);
    expect(await card.getAttribute("data-edited")).toBeNull();

    await send(page, { type: "permissionEdited", toolCallId: "call_e", edited: true });
    await card.locator(".permission-edited").waitFor();
    expect(await card.getAttribute("data-edited")).toBe("true");
    expect(await allow.innerText()).toBe("Accept with your edits");
    expect(await card.locator(".permission-edited").innerText()).toContain("allowing writes your version");
    expect(await card.locator(".permission-option.allow_always").getAttribute("title")).toMatch(/writes your edited version$/);
    // The diff shown stays the agent's, bounded as before.
    expect(await card.locator(".permission-diff").innerText()).toContain("+y");

    await send(page, { type: "permissionEdited", toolCallId: "call_e", edited: false });
    await card.locator(".permission-edited").waitFor({ state: "detached" });
    expect(await allow.innerText()).toBe("Allow once");
    expect(await card.locator(".permission-option.allow_always").getAttribute("title")).not.toMatch(/edited/);

    // Edited again and accepted: the answer is the allow option (the host adds the text).
    await send(page, { type: "permissionEdited", toolCallId: "call_e", edited: true });
    await card.locator(".permission-edited").waitFor();
    await card.locator(".permission-option.allow_once").click();
    expect(await waitForPosted(page, "permissionAnswer")).toEqual({ type: "permissionAnswer", requestId: "perm-4", optionId: "allow" });
    await page.close();
  });

  it("drops malformed review messages", async () => {
    const page = await sidebar();
    await send(page, { type: "attach", attachment: { uri: 5 } });
    await send(page, { type: "attach", attachment: { uri: "file:///x", label: "x", range: { start: {} } } });
    await send(page, { type: "mentionResults", query: "a", paths: [1] });
    await send(page, { type: "messageMarks", sessionId: SESSION, messages: [{}] });
    await page.waitForTimeout(100);
    expect(await page.locator("#attachments .chip").count()).toBe(0);
    await page.close();
  });

  it("screenshot for the README", async () => {
    const page = await sidebar(true);
    await send(page, { type: "attach", attachment: { uri: "file:///w/src/store.py", label: "src/store.py:40-58" } });
    await send(page, {
      type: "permission",
      requestId: "perm-9",
      sessionId: SESSION,
      toolCall: { toolCallId: "call_s", name: "edit", input: { path: "src/store.py" } },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "always", kind: "allow_always" },
        { optionId: "reject", kind: "reject_once" },
      ],
      diff: "--- a/src/store.py\n+++ b/src/store.py\n@@ -40,3 +40,3 @@\n def get(self, key):\n-    return self._data[key]\n+    return self._data.get(key)\n",
    });
    await page.waitForSelector("[data-request-id=perm-9]");
    await page.waitForTimeout(150);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "review.png") });
    await page.close();
  });
});
