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

async function readySidebar(theme = false): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme });
  expect(await waitForPosted(page, "ready")).toEqual({ type: "ready", activeSessionId: null });
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: SESSION,
    sessions: [
      { sessionId: SESSION, title: "Add a response cache", mode: "build", createdAt: "t", updatedAt: "t" },
      { sessionId: "s-2", title: "Fix flaky test", mode: "plan", createdAt: "t", updatedAt: "t" },
    ],
  });
  await send(page, {
    type: "history",
    sessionId: SESSION,
    title: "Add a response cache",
    mode: "build",
    running: false,
    messages: [
      { id: "m1", role: "user", createdAt: "t", compacted: true, parts: [{ type: "text", text: "Old question" }] },
      { id: "m2", role: "assistant", createdAt: "t", compacted: true, parts: [{ type: "text", text: "Earlier **answer**" }] },
      {
        id: "m3",
        role: "user",
        createdAt: "t",
        compacted: false,
        origin: "pre_compact",
        parts: [
          { type: "pre_compact", hook: "notes", prompt: "Save your notes.", trigger: "manual", status: "started" },
          { type: "text", text: "Save your notes." },
        ],
      },
      {
        id: "m4",
        role: "system",
        createdAt: "t",
        compacted: false,
        parts: [{ type: "pre_compact", hook: "notes", prompt: "Save your notes.", trigger: "manual", status: "failed", error: "timed out after 300 s" }],
      },
      { id: "m5", role: "system", createdAt: "t", compacted: false, parts: [{ type: "compaction", compactionId: "c-1" }] },
    ],
  });
  await page.waitForSelector("[data-kind=assistant]");
  return page;
}

const update = (u: Record<string, unknown>, sessionId = SESSION) => ({ type: "update", sessionId, update: u });

describe("sidebar webview", () => {
  it("loads history, sends a prompt, and renders the streamed answer and tool cards", async () => {
    const page = await readySidebar();
    expect(await page.locator("#session-select option").allInnerTexts()).toEqual(["Add a response cache", "Fix flaky test"]);
    expect(await page.locator(".msg.user.compacted").count()).toBe(1);
    // Baton's own entries in the history (system messages) show as markers, in order.
    expect(await page.locator(".marker").allInnerTexts()).toEqual([
      "Pre-compact round by notes before compacting",
      "Pre-compact round by notes failed: timed out after 300 s",
      "Context compacted here (older messages are summarised for the agent)",
    ]);
    // Baton's own prompt to the model is a collapsed chip, never the person's bubble.
    expect(await page.locator(".msg.user").allInnerTexts()).toEqual(["Old question"]);
    const chip = page.locator(".baton-prompt[data-origin=pre_compact]");
    expect(await chip.locator("summary").innerText()).toContain("Baton asked the agent to note its work before compacting");
    expect(await chip.locator(".baton-prompt-body").isVisible()).toBe(false);
    await chip.locator("summary").click();
    expect(await chip.locator(".baton-prompt-body").innerText()).toBe("Save your notes.");
    expect(await page.locator("#welcome").isHidden()).toBe(true);

    await page.locator("#prompt").click();
    await page.keyboard.type("Add tests for the cache");
    await page.keyboard.press("Enter");
    expect(await waitForPosted(page, "prompt")).toEqual({ type: "prompt", sessionId: SESSION, text: "Add tests for the cache" });
    expect(await page.locator("#app").getAttribute("data-running")).toBe("true");
    expect(await page.locator("#cancel").getAttribute("disabled")).toBeNull();

    await send(page, update({ kind: "agent_message_chunk", text: "I'll **read** " }));
    await send(page, update({ kind: "agent_message_chunk", text: "the store first." }));
    await send(page, update({ kind: "tool_call", toolCallId: "t1", name: "read", input: { path: "store.py" }, status: "pending" }));
    await send(page, update({ kind: "tool_call_update", toolCallId: "t1", status: "completed", output: "class Store: ..." }));
    await send(page, update({ kind: "agent_message_chunk", text: "Done <script>window.__x=1</script>" }));
    await send(page, update({ kind: "agent_message_chunk", text: "ignored" }, "other-session"));
    // Streamed markdown renders on the next animation frame.
    await page.waitForFunction(() => {
      const blocks = document.querySelectorAll("[data-kind=assistant]");
      return blocks.length === 3 && (blocks[2]?.textContent ?? "").includes("Done");
    });
    const answers = await page.locator("[data-kind=assistant]").allInnerTexts();
    expect(answers[1]).toBe("I'll read the store first.");
    expect(await page.locator("[data-kind=assistant] strong").nth(1).innerText()).toBe("read");
    expect(answers[2]).toContain("Done <script>");
    expect(answers.join(" ")).not.toContain("ignored");
    const card = page.locator("[data-tool-call-id=t1]");
    expect(await card.getAttribute("data-status")).toBe("completed");
    expect(await card.getAttribute("data-tool")).toBe("read");
    expect(await card.locator(".tool-title").innerText()).toBe("Read store.py");
    expect(await card.locator(".tool-status").innerText()).toBe("done");
    expect(await card.locator(".tool-output").textContent()).toBe("class Store: ...");
    // Collapsed: a preview of the output; the full output when the card is opened.
    expect(await card.locator(".tool-output").isVisible()).toBe(false);
    expect(await card.locator(".tool-preview").innerText()).toBe("class Store: ...");
    await card.locator("summary").first().click();
    await page.waitForFunction(() => document.querySelector("[data-tool-call-id=t1]")?.hasAttribute("open"));

    await page.click("#cancel");
    expect(await waitForPosted(page, "cancel")).toEqual({ type: "cancel", sessionId: SESSION });
    await send(page, { type: "turn", sessionId: SESSION, running: false, stopReason: "cancelled" });
    await page.waitForSelector("[data-kind=stop-cancelled]");
    expect(await page.locator("[data-kind=stop-cancelled]").innerText()).toBe("Stopped");
    expect(await page.locator("#app").getAttribute("data-running")).toBe("false");
    expect(await page.evaluate(() => (window as unknown as { __x?: number }).__x)).toBeUndefined();
    await page.close();
  });

  it("answers permission prompts with the chosen option; each choice says what it grants", async () => {
    const page = await readySidebar();
    // The call's card says it waits for the person while the prompt is open (the server
    // reports it in progress before the tool asks), and "running" once answered.
    await send(page, update({ kind: "tool_call", toolCallId: "t2", name: "bash", input: { command: "pytest -q" }, status: "pending" }));
    await send(page, update({ kind: "tool_call_update", toolCallId: "t2", status: "in_progress" }));
    const toolCard = page.locator("[data-tool-call-id=t2]");
    expect(await toolCard.locator(".tool-status").innerText()).toBe("running");
    await send(page, {
      type: "permission",
      requestId: "perm-1",
      sessionId: SESSION,
      toolCall: { toolCallId: "t2", name: "bash", input: { command: "pytest -q" } },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "cmd", kind: "allow_always", scope: "command", name: "Always allow `pytest -q` in this session" },
        { optionId: "always", kind: "allow_always", scope: "category", name: "Always allow every command in this session" },
        { optionId: "reject", kind: "reject_once" },
      ],
    });
    const prompt = page.locator("[data-request-id=perm-1]");
    await prompt.waitFor();
    // The tool in words, the command in full, and what each "always" grants spelled out.
    expect(await prompt.locator(".permission-title").innerText()).toBe("Run this command?");
    expect(await prompt.locator("pre").innerText()).toBe("pytest -q");
    expect(await toolCard.locator(".tool-status").innerText()).toBe("needs you");
    expect(await prompt.locator("button.permission-option .permission-label").allInnerTexts()).toEqual([
      "Allow once",
      "Always allow this command in this session",
      "Always allow every command in this session",
      "Reject",
    ]);
    expect(await prompt.locator("button.permission-option .permission-key").allInnerTexts()).toEqual(["1", "2", "3", "4"]);
    expect(await prompt.locator("[data-scope=command]").getAttribute("title")).toBe(
      "Exactly this command (pytest -q) runs without asking for the rest of this session; other commands still ask",
    );
    expect(await prompt.locator("[data-scope=category]").getAttribute("title")).toBe(
      "Every shell command the agent runs in this session runs without asking",
    );
    await prompt.locator("[data-scope=command]").click();
    expect(await waitForPosted(page, "permissionAnswer")).toEqual({ type: "permissionAnswer", requestId: "perm-1", optionId: "cmd" });
    await send(page, { type: "permissionClosed", requestId: "perm-1" });
    await prompt.waitFor({ state: "detached" });
    expect(await toolCard.locator(".tool-status").innerText()).toBe("running");
    await send(page, update({ kind: "tool_call_update", toolCallId: "t2", status: "completed", output: "1 passed" }));
    expect(await toolCard.locator(".tool-status").innerText()).toBe("done");
    await page.close();
  });

  it("permission keyboard: Enter allows once (focused), a number picks, Escape rejects; writes name the file; a protected path says why", async () => {
    const page = await readySidebar();
    const writeOptions = [
      { optionId: "allow", kind: "allow_once" },
      { optionId: "path", kind: "allow_always", scope: "path", name: "Always allow changes to src/app.py in this session" },
      { optionId: "always", kind: "allow_always", scope: "category", name: "Always allow every file change in this session" },
      { optionId: "reject", kind: "reject_once" },
    ];
    await send(page, { type: "permission", requestId: "perm-2", sessionId: SESSION, toolCall: { toolCallId: "t4", name: "edit", input: { path: "src/app.py" } }, options: writeOptions });
    const edit = page.locator("[data-request-id=perm-2]");
    await edit.waitFor();
    expect(await edit.locator(".permission-title").innerText()).toBe("Edit src/app.py?");
    expect(await edit.locator("[data-scope=path] .permission-label").innerText()).toBe("Always allow changes to app.py in this session");
    expect(await edit.locator("[data-scope=path]").getAttribute("title")).toContain("Writes and edits to src/app.py happen without asking");
    expect(await edit.locator("[data-scope=category] .permission-label").innerText()).toBe("Always allow every file change in this session");
    await page.waitForFunction(() => document.activeElement?.getAttribute("data-option-kind") === "allow_once");
    await page.keyboard.press("Enter");
    expect(await waitForPosted(page, "permissionAnswer")).toEqual({ type: "permissionAnswer", requestId: "perm-2", optionId: "allow" });

    const answerOf = async (requestId: string) => {
      await page.waitForFunction(
        (id) => (window as unknown as { __posted: Array<{ type: string; requestId?: string }> }).__posted.some((m) => m.requestId === id),
        requestId,
      );
      return (await posted(page)).filter((m) => m.type === "permissionAnswer").at(-1);
    };
    await send(page, { type: "permission", requestId: "perm-3", sessionId: SESSION, toolCall: { toolCallId: "t5", name: "bash", input: { command: "rm -rf build" } }, options: writeOptions });
    await page.locator("[data-request-id=perm-3]").waitFor();
    await page.waitForFunction(() => document.activeElement?.closest("[data-request-id=perm-3]") !== null);
    await page.keyboard.press("Escape");
    expect(await answerOf("perm-3")).toEqual({ type: "permissionAnswer", requestId: "perm-3", optionId: "reject" });

    await send(page, { type: "permission", requestId: "perm-4", sessionId: SESSION, toolCall: { toolCallId: "t6", name: "write", input: { path: "notes.md" } }, options: writeOptions });
    await page.waitForFunction(() => document.activeElement?.closest("[data-request-id=perm-4]") !== null);
    await page.keyboard.press("2");
    expect(await answerOf("perm-4")).toEqual({ type: "permissionAnswer", requestId: "perm-4", optionId: "path" });

    // A protected path: no "always" choice, and the reason in words.
    await send(page, {
      type: "permission",
      requestId: "perm-5",
      sessionId: SESSION,
      toolCall: { toolCallId: "t7", name: "write", input: { path: ".vscode/tasks.json" } },
      options: [writeOptions[0], writeOptions[3]],
      reason: ".vscode/tasks.json is inside .vscode/, which decides what Baton, git or the editor runs; changes there always ask, even after Always allow",
    });
    const protectedPrompt = page.locator("[data-request-id=perm-5]");
    await protectedPrompt.waitFor();
    expect(await protectedPrompt.locator(".permission-reason").innerText()).toContain("inside .vscode/");
    expect(await protectedPrompt.locator(".permission-label").allInnerTexts()).toEqual(["Allow once", "Reject"]);

    // An older server's "always" without a scope still says it covers the category.
    await send(page, {
      type: "permission",
      requestId: "perm-6",
      sessionId: SESSION,
      toolCall: { toolCallId: "t8", name: "bash", input: { command: "ls" } },
      options: [{ optionId: "always", kind: "allow_always" }],
    });
    expect(await page.locator("[data-request-id=perm-6] .permission-label").innerText()).toBe("Always allow every command in this session");
    await page.close();
  });

  it("a permission card shows the whole command and diff: wrapped, inside the card, control characters marked", async () => {
    const page = await readySidebar();
    const options = [
      { optionId: "allow", kind: "allow_once" },
      { optionId: "reject", kind: "reject_once" },
    ];
    const command = "echo ok" + " ".repeat(520) + "; touch X\r\x1b[2Kecho harmless \u202eTAIL" + "z".repeat(300);
    await send(page, { type: "permission", requestId: "perm-9", sessionId: SESSION, toolCall: { toolCallId: "t9", name: "bash", input: { command } }, options });
    const card = page.locator("[data-request-id=perm-9]");
    await card.waitFor();
    const detail = card.locator(".permission-detail");
    expect(await detail.innerText()).toBe("echo ok[… 520 spaces …]; touch X\\r\\x1b[2Kecho harmless \\u202eTAIL" + "z".repeat(300));
    expect(await detail.locator(".ctl").allInnerTexts()).toEqual(["[… 520 spaces …]", "\\r", "\\x1b", "\\u202e"]);
    // The tail is inside the card's box, not scrolled or clipped out of sight.
    const box = await detail.boundingBox();
    const tail = await detail.evaluate((node) => {
      const range = document.createRange();
      const text = node.lastChild as Text;
      range.setStart(text, text.length - 1);
      range.setEnd(text, text.length);
      const rect = range.getBoundingClientRect();
      return { right: rect.right, scrollWidth: node.scrollWidth, clientWidth: node.clientWidth };
    });
    expect(box).not.toBeNull();
    expect(tail.right).toBeLessThanOrEqual((box?.x ?? 0) + (box?.width ?? 0) + 1);
    expect(tail.scrollWidth).toBeLessThanOrEqual(tail.clientWidth + 1);

    const diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-\x1b]52;c;ZXZpbA==\x07\n+plain\n";
    await send(page, { type: "permission", requestId: "perm-10", sessionId: SESSION, toolCall: { toolCallId: "t10", name: "write", input: { path: "f", content: "plain\n" } }, options, diff });
    const write = page.locator("[data-request-id=perm-10]");
    await write.waitFor();
    expect(await write.locator(".permission-diff").innerText()).toContain("-\\x1b]52;c;ZXZpbA==\\x07");
    await page.close();
  });

  it("a running command's card shows its output live (last lines), then the result (first lines)", async () => {
    const page = await readySidebar();
    await send(page, update({ kind: "tool_call", toolCallId: "live1", name: "bash", input: { command: "npm test" }, status: "pending" }));
    await send(page, update({ kind: "tool_call_update", toolCallId: "live1", status: "in_progress" }));
    const card = page.locator("[data-tool-call-id=live1]");
    await card.waitFor();
    expect(await card.locator(".tool-title").innerText()).toBe("Run npm test");
    await send(page, update({ kind: "tool_call_update", toolCallId: "live1", status: "in_progress", output: "> test\nok 1\nok 2\nok 3\n" }));
    await page.waitForFunction(() => document.querySelector("[data-tool-call-id=live1]")?.hasAttribute("data-live"));
    expect(await card.locator(".tool-preview").innerText()).toBe("ok 1\nok 2\nok 3");
    expect(await card.locator(".tool-status").innerText()).toBe("running");
    await send(page, update({ kind: "tool_call_update", toolCallId: "live1", status: "completed", output: "> test\nok 1\nok 2\nok 3\n[exit code 0]" }));
    await page.waitForFunction(() => !document.querySelector("[data-tool-call-id=live1]")?.hasAttribute("data-live"));
    expect(await card.locator(".tool-preview").innerText()).toBe("> test\nok 1\nok 2\n… 2 more lines");
    expect(await card.locator(".tool-status").innerText()).toBe("done");
    await page.close();
  });

  it("switches mode, sessions and creates sessions through the host; shows compaction markers", async () => {
    const page = await readySidebar();
    await page.click("#mode-plan");
    expect(await waitForPosted(page, "setMode")).toEqual({ type: "setMode", sessionId: SESSION, mode: "plan" });
    await send(page, { type: "mode", sessionId: SESSION, mode: "plan" });
    await page.waitForFunction(() => document.getElementById("app")?.dataset.mode === "plan");
    expect(await page.locator("#mode-plan").getAttribute("aria-checked")).toBe("true");
    expect(await page.locator("#mode-build").getAttribute("aria-checked")).toBe("false");

    await page.selectOption("#session-select", "s-2");
    expect(await waitForPosted(page, "selectSession")).toEqual({ type: "selectSession", sessionId: "s-2" });

    await send(page, update({ kind: "compaction_started", trigger: "manual", strategy: "native" }));
    await page.waitForSelector(".marker.compaction-started");
    await send(page, update({
      kind: "compaction_finished",
      compaction: { compactionId: "c-2", sessionId: SESSION, trigger: "manual", strategy: "native", tokensBefore: 12000, tokensAfter: 3000, firstKeptMessageId: null, ledger: {}, createdAt: "t" },
    }));
    await page.waitForSelector(".marker.compaction >> text=12,000 → 3,000 tokens in use");
    // The "Compacting…" marker is gone once the compaction ended.
    expect(await page.locator(".marker.compaction-started").count()).toBe(0);
    await page.close();
  });

  it("keeps its active session and draft in webview state (survives a reload)", async () => {
    const page = await readySidebar();
    await page.locator("#prompt").click();
    await page.keyboard.type("half-typed");
    const state = await page.evaluate(() => (window as unknown as { __state: unknown }).__state);
    expect(state).toEqual({ activeSessionId: SESSION, draft: "half-typed", mode: "build" });
    await page.close();
  });

  it("Restricted Mode: a banner lists what is ignored, with VS Code's Manage Workspace Trust; trusted, it goes", async () => {
    const page = await readySidebar();
    expect(await page.locator("#trust-banner").isHidden()).toBe(true);
    const ignored = [".baton/config.toml: hooks.toolAfter (runs commands)", ".baton/plugins/x.py (plugin code)"];
    const message = "This workspace is not trusted, so Baton ignores 2 of its settings or plugins.";
    await send(page, { type: "trust", trust: { trusted: false, source: "editor", ignored, message } });
    const banner = page.locator("#trust-banner");
    await banner.waitFor({ state: "visible" });
    expect(await banner.locator(".trust-title").innerText()).toBe("Restricted Mode: this folder is not trusted");
    expect(await banner.locator("#trust-ignored li").allInnerTexts()).toEqual(ignored);
    expect(await banner.getAttribute("title")).toBe(message);
    await banner.locator("#trust-manage").click();
    expect(await waitForPosted(page, "action")).toEqual({ type: "action", action: "manageTrust" });
    // A malformed answer is dropped; the banner stays as it was.
    await send(page, { type: "trust", trust: { trusted: "no", ignored } });
    await send(page, { type: "trust", trust: { trusted: false, source: "none", ignored: [1] } });
    await page.waitForTimeout(100);
    expect(await banner.locator("#trust-ignored li").count()).toBe(2);
    await send(page, { type: "trust", trust: { trusted: true, source: "editor", ignored: [] } });
    await banner.waitFor({ state: "hidden" });
    expect(await page.locator("#app").getAttribute("data-trusted")).toBe("true");
    // Untrusted with nothing of the folder lost: nothing to say.
    await send(page, { type: "trust", trust: { trusted: false, source: "none", ignored: [] } });
    await page.waitForTimeout(100);
    expect(await banner.isHidden()).toBe(true);
    await page.close();
  });

  it("a protected path's permission prompt says why it asks", async () => {
    const page = await readySidebar();
    const reason = ".baton/config.toml is inside .baton/, which decides what Baton, git or the editor runs; changes there always ask, even after Always allow";
    await send(page, {
      type: "permission",
      requestId: "perm-9",
      sessionId: SESSION,
      toolCall: { toolCallId: "t9", name: "write", input: { path: ".baton/config.toml", content: "x" } },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "reject", kind: "reject_once" },
      ],
      diff: "--- a/.baton/config.toml\n+++ b/.baton/config.toml\n+x\n",
      reason,
    });
    const prompt = page.locator("[data-request-id=perm-9]");
    await prompt.waitFor();
    expect(await prompt.locator(".permission-reason").innerText()).toBe(reason);
    expect(await prompt.locator("button.permission-option .permission-label").allInnerTexts()).toEqual(["Allow once", "Reject"]);
    await page.close();
  });

  it("drops malformed host messages", async () => {
    const page = await readySidebar();
    const before = await page.locator("#transcript > *").count();
    await send(page, { type: "update", sessionId: SESSION, update: { text: "no kind" } });
    await send(page, { type: "permission", requestId: 5 });
    await send(page, { type: "eval", code: "window.__y = 1" });
    await page.waitForTimeout(100);
    expect(await page.locator("#transcript > *").count()).toBe(before);
    expect(await page.locator("#permissions > *").count()).toBe(0);
    expect((await posted(page)).filter((m) => m.type !== "ready")).toEqual([]);
    await page.close();
  });

  it("screenshot for the README", async () => {
    const page = await readySidebar(true);
    await send(page, update({ kind: "agent_message_chunk", text: "I'll add an LRU cache in `store.py`, then run the tests." }));
    await send(page, update({ kind: "tool_call", toolCallId: "t1", name: "edit", input: { path: "store.py" }, status: "pending" }));
    await send(page, update({ kind: "tool_call_update", toolCallId: "t1", status: "completed", output: "ok" }));
    await send(page, {
      type: "permission",
      requestId: "perm-9",
      sessionId: SESSION,
      toolCall: { toolCallId: "t3", name: "bash", input: { command: "pytest -q tests/test_store.py" } },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "cmd", kind: "allow_always", scope: "command" },
        { optionId: "always", kind: "allow_always", scope: "category" },
        { optionId: "reject", kind: "reject_once" },
      ],
    });
    await page.waitForSelector("[data-request-id=perm-9]");
    await page.waitForTimeout(150);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "sidebar.png") });
    await page.close();
  });
});

describe("sidebar turns started by the server", () => {
  it("shows a server-started turn as running until turn_ended, and reports its end once", async () => {
    const page = await readySidebar();
    await send(page, update({ kind: "user_message", messageId: "m9", text: "The plan is approved. Build it.", origin: "approval" }));
    await page.waitForSelector(".baton-prompt[data-origin=approval]");
    expect(await page.locator(".msg.user", { hasText: "The plan is approved" }).count()).toBe(0);
    await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "true");
    // Send queues while the agent works (issue 50: it was disabled, nothing could be said).
    expect(await page.locator("#send").getAttribute("disabled")).toBeNull();
    expect(await page.locator("#send").innerText()).toBe("Queue");
    await send(page, update({ kind: "agent_message_chunk", text: "Building." }));
    await send(page, update({ kind: "turn_ended", stopReason: "max_steps" }));
    await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "false");
    await send(page, { type: "turn", sessionId: SESSION, running: false, stopReason: "max_steps" });
    await page.waitForTimeout(100);
    expect(await page.locator("[data-kind=stop-max_steps]").count()).toBe(1);
    await page.close();
  });
});
