// Child sessions in the sidebar and the plan panel (headless Chromium): a card under
// each `task` call that follows the child's live status, Stop that cancels that child
// only, a link to its transcript, permission prompts that say which child asks,
// children kept out of the session picker, "step k of n" during a plan built step by
// step, and the plan panel's "Approve and build step by step".
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

const PARENT = "s-parent";
const CHILD = "s-child-1";
const update = (u: Record<string, unknown>, sessionId = PARENT) => ({ type: "update", sessionId, update: u });
const child = (fields: Record<string, unknown>) => ({
  kind: "child",
  callId: "call-task-1",
  childId: CHILD,
  agent: "explore",
  description: "Find the TODOs",
  status: "running",
  currentTool: null,
  tokens: 0,
  step: null,
  ...fields,
});

async function readySidebar(): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: PARENT,
    sessions: [
      { sessionId: PARENT, title: "Tidy the TODOs", mode: "build", createdAt: "t1", updatedAt: "t3", parentId: null, agent: null },
      { sessionId: CHILD, title: "Find the TODOs", mode: "build", createdAt: "t2", updatedAt: "t4", parentId: PARENT, agent: "explore" },
      { sessionId: "s-other", title: "Another session", mode: "plan", createdAt: "t0", updatedAt: "t0" },
    ],
  });
  await send(page, { type: "history", sessionId: PARENT, title: "Tidy the TODOs", mode: "build", running: false, messages: [] });
  await send(page, { type: "userMessage", sessionId: PARENT, text: "Find the TODOs and tidy them" });
  await send(page, update({ kind: "tool_call", toolCallId: "call-task-1", name: "task", input: { agent: "explore", description: "Find the TODOs", prompt: "grep for TODO" }, status: "pending" }));
  await send(page, update({ kind: "tool_call_update", toolCallId: "call-task-1", status: "in_progress" }));
  return page;
}

describe("child sessions in the sidebar", () => {
  it("shows a child's card under its task call, live, with Stop for that child and a link to its transcript", async () => {
    const page = await readySidebar();
    expect(await page.locator(".tool-card[data-tool=task] .tool-title").innerText()).toBe("Delegate to explore: Find the TODOs");
    await send(page, update(child({})));
    const card = page.locator(`.child-card[data-child-id="${CHILD}"]`);
    await card.waitFor();
    // Right under the task call's card.
    expect(await page.evaluate(() => document.querySelector(".tool-card[data-tool=task]")?.nextElementSibling?.className)).toBe("child-card");
    expect(await card.locator(".child-agent").innerText()).toBe("explore");
    expect(await card.locator(".child-description").innerText()).toBe("Find the TODOs");
    expect(await card.locator(".child-status").innerText()).toBe("running");
    expect(await card.locator(".child-tool").isVisible()).toBe(false);

    // The child's own stream (its session id) never lands in the parent's transcript.
    await send(page, update({ kind: "agent_message_chunk", text: "child text that is not the parent's" }, CHILD));
    await send(page, update(child({ currentTool: "grep", tokens: 1234 })));
    expect(await card.locator(".child-tool").innerText()).toBe("Using grep");
    expect(await card.locator(".child-tokens").innerText()).toBe("1,234 tokens");
    // Between the parent's child updates the card follows the child's own stream.
    await send(page, update({ kind: "usage", tokens: 900, contextWindow: 100000, inputTokens: 600, cachedTokens: 0, outputTokens: 40 }, CHILD));
    expect(await card.locator(".child-tokens").innerText()).toBe("1,874 tokens");
    await send(page, update({ kind: "tool_call", toolCallId: "c-t2", name: "read", input: { path: "a.py" }, status: "pending" }, CHILD));
    expect(await card.locator(".child-tool").innerText()).toBe("Using read");
    await send(page, update(child({ currentTool: "read", tokens: 1900 })));
    expect(await card.locator(".child-tokens").innerText()).toBe("1,900 tokens");
    expect(await page.locator("#transcript").innerText()).not.toContain("child text");
    expect(await page.locator(".child-card").count()).toBe(1);

    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "sidebar-child-running.png") });

    await card.locator(".child-open").click();
    expect(await waitForPosted(page, "openChild")).toEqual({ type: "openChild", sessionId: CHILD });
    await card.locator(".child-stop").click();
    // Stop cancels the child's session, not the parent's turn.
    expect(await waitForPosted(page, "cancel")).toEqual({ type: "cancel", sessionId: CHILD });
    await send(page, update(child({ status: "cancelled", tokens: 1500 })));
    expect(await card.locator(".child-status").innerText()).toBe("stopped");
    expect(await card.getAttribute("data-status")).toBe("cancelled");
    expect(await card.locator(".child-stop").isVisible()).toBe(false);
    expect(await card.locator(".child-tool").isVisible()).toBe(false);
    // The link stays: the partial work can still be read.
    expect(await card.locator(".child-open").isVisible()).toBe(true);
    await page.close();
  });

  it("keeps children out of the session picker and puts the cards back when the parent is shown again", async () => {
    const page = await readySidebar();
    expect(await page.locator("#session-select option").allInnerTexts()).toEqual(["Tidy the TODOs", "Another session"]);
    await send(page, update(child({ status: "done", tokens: 900 })));
    await page.locator(".child-card").waitFor();
    // Another session, then the parent again from its stored history.
    await send(page, { type: "history", sessionId: "s-other", title: "Another session", mode: "plan", running: false, messages: [] });
    expect(await page.locator(".child-card").count()).toBe(0);
    // An update of a parent not in view changes nothing on screen.
    await send(page, update(child({ childId: "s-child-2", description: "Read the docs" })));
    expect(await page.locator(".child-card").count()).toBe(0);
    await send(page, {
      type: "history",
      sessionId: PARENT,
      title: "Tidy the TODOs",
      mode: "build",
      running: false,
      messages: [
        {
          id: "m2",
          role: "assistant",
          createdAt: "t",
          parts: [{ type: "tool_call", toolCallId: "call-task-1", name: "task", input: { agent: "explore", description: "Find the TODOs" }, status: "completed", output: "done" }],
        },
      ],
    });
    expect(await page.locator(".child-card").count()).toBe(2);
    expect(await page.locator(`.child-card[data-child-id="${CHILD}"] .child-status`).innerText()).toBe("done");
    expect(await page.locator(`.child-card[data-child-id="s-child-2"] .child-status`).innerText()).toBe("running");
    await page.close();
  });

  it("says which child asks for permission, and the child's card waits for the person meanwhile", async () => {
    const page = await readySidebar();
    await send(page, update(child({ currentTool: "bash", tokens: 10 })));
    await send(page, {
      type: "permission",
      requestId: "perm-c",
      sessionId: CHILD,
      parentId: PARENT,
      agent: "explore",
      toolCall: { toolCallId: "child-call-1", name: "bash", input: { command: "grep -rn TODO ." } },
      options: [
        { optionId: "allow_once", kind: "allow_once" },
        { optionId: "reject_once", kind: "reject_once" },
      ],
    });
    const prompt = page.locator(".permission[data-request-id=perm-c]");
    await prompt.waitFor();
    expect(await prompt.locator(".permission-asker").innerText()).toBe("Asked by the explore child: Find the TODOs");
    expect(await prompt.getAttribute("aria-label")).toContain("asked by the explore child: Find the TODOs");
    const status = page.locator(`.child-card[data-child-id="${CHILD}"] .child-status`);
    expect(await status.innerText()).toBe("needs you");
    await prompt.locator("button.permission-option.allow_once").click();
    expect(await waitForPosted(page, "permissionAnswer")).toEqual({ type: "permissionAnswer", requestId: "perm-c", optionId: "allow_once" });
    await send(page, { type: "permissionClosed", requestId: "perm-c" });
    expect(await status.innerText()).toBe("running");
    // A session's own request has no asker line.
    await send(page, {
      type: "permission",
      requestId: "perm-p",
      sessionId: PARENT,
      toolCall: { toolCallId: "own", name: "bash", input: { command: "ls" } },
      options: [{ optionId: "allow_once", kind: "allow_once" }],
    });
    await page.locator(".permission[data-request-id=perm-p]").waitFor();
    expect(await page.locator(".permission[data-request-id=perm-p] .permission-asker").count()).toBe(0);
    await page.close();
  });

  it("shows step k of n while Baton builds a plan step by step, and drops malformed child updates", async () => {
    const page = await readySidebar();
    // The prompt's turn is over; then Baton builds the approved plan step by step.
    await send(page, { type: "turn", sessionId: PARENT, running: false, stopReason: "end_turn" });
    expect(await page.locator("#app").getAttribute("data-running")).toBe("false");
    await send(page, update(child({ callId: "step-2", childId: "s-step-2", agent: "build", description: "Wire the cache in", step: { index: 2, total: 6 } })));
    const card = page.locator(`.child-card[data-child-id="s-step-2"]`);
    await card.waitFor();
    expect(await card.locator(".child-step").innerText()).toBe("Step 2 of 6");
    expect(await page.locator("#turn-status").innerText()).toBe("Building step 2 of 6…");
    // Baton's own build is the session's turn: the composer's Stop can end it.
    expect(await page.locator("#app").getAttribute("data-running")).toBe("true");
    expect(await page.locator("#cancel").getAttribute("disabled")).toBeNull();
    await send(page, update(child({ callId: "step-2", childId: "s-step-2", agent: "build", description: "Wire the cache in", status: "done", step: { index: 2, total: 6 } })));
    expect(await page.locator("#turn-status").innerText()).not.toContain("step");
    // Malformed: no card, nothing thrown.
    await send(page, update({ kind: "child", callId: "x", childId: "bad", agent: "explore", description: "d", status: "exploding", tokens: 1 }));
    await send(page, update({ kind: "child", callId: "x", childId: "bad2", agent: "explore", description: "d", status: "running", tokens: -3 }));
    await send(page, update({ kind: "child", callId: "x", childId: "bad3", agent: "explore", description: "d", status: "running", tokens: 1, step: { index: 7, total: 6 } }));
    expect(await page.locator(".child-card[data-child-id^=bad]").count()).toBe(0);
    expect((await posted(page)).filter((m) => m.type === "cancel")).toEqual([]);
    await page.close();
  });
});

describe("child sessions in a stored history", () => {
  it("puts a card under each task call of an earlier turn, from the result that names the child", async () => {
    const page = await openWebview(browser, "sidebar");
    await waitForPosted(page, "ready");
    await send(page, { type: "server", status: "running" });
    const result = '<baton:task-result agent="explore" child="s-old-child" status="max_steps">\nstatus: max_steps\nchild session: s-old-child\ntokens: 12,345\n\nfinal message:\nPartial.\n</baton:task-result>';
    await send(page, {
      type: "history",
      sessionId: PARENT,
      title: "Tidy the TODOs",
      mode: "build",
      running: false,
      messages: [
        { id: "u1", role: "user", createdAt: "t", parts: [{ type: "text", text: "Look around" }] },
        {
          id: "a1",
          role: "assistant",
          createdAt: "t",
          parts: [
            { type: "tool_call", toolCallId: "old-call", name: "task", input: { agent: "explore", description: "Map the modules" }, status: "completed", output: result },
            // A result that names no child (a refused call) gets no card.
            { type: "tool_call", toolCallId: "bad-call", name: "task", input: { agent: "nobody", description: "x" }, status: "failed", output: "unknown agent nobody" },
          ],
        },
      ],
    });
    const card = page.locator('.child-card[data-child-id="s-old-child"]');
    await card.waitFor();
    expect(await page.locator(".child-card").count()).toBe(1);
    expect(await card.getAttribute("data-call-id")).toBe("old-call");
    expect(await card.locator(".child-description").innerText()).toBe("Map the modules");
    expect(await card.locator(".child-status").innerText()).toBe("stopped at its step limit");
    expect(await card.locator(".child-tokens").innerText()).toBe("12,345 tokens");
    expect(await card.locator(".child-stop").isVisible()).toBe(false);
    await card.locator(".child-open").click();
    expect(await waitForPosted(page, "openChild")).toEqual({ type: "openChild", sessionId: "s-old-child" });
    await page.close();
  });
});

describe("plan panel: build step by step", () => {
  const PLAN = "# Plan: cache\n\n- [ ] Add the store\n- [ ] Wire it in\n";
  it("offers Approve and build step by step next to the fresh-context approval, and shows the step being built", async () => {
    const page = await openWebview(browser, "plan");
    await waitForPosted(page, "ready");
    const plan = (status: string) => ({
      type: "plan",
      sessionId: "s-1",
      title: "Cache",
      plan: { path: ".baton/plans/cache.md", status, version: 2, content: PLAN },
      versions: [],
      running: false,
    });
    await send(page, plan("awaiting_approval"));
    await page.waitForSelector("#plan-content h1");
    const buttons = await page.locator(".plan-header .toolbar vscode-button").allInnerTexts();
    expect(buttons.slice(0, 3)).toEqual(["Approve and build in a fresh context", "Approve and build step by step", "Approve"]);
    await page.locator("#approve-steps").click();
    expect(await waitForPosted(page, "approve")).toEqual({ type: "approve", fresh: false, steps: true });
    await send(page, plan("approved"));
    expect(await page.locator("#approve-steps").getAttribute("disabled")).not.toBeNull();
    await send(page, { type: "step", step: { index: 1, total: 2, description: "Add the store" } });
    expect(await page.locator("#plan-activity").innerText()).toBe("Building step 1 of 2: Add the store");
    await send(page, { type: "step", step: null });
    expect(await page.locator("#plan-activity").innerText()).toBe("");
    await page.close();
  });
});
