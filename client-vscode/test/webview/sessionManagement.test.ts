// The sidebar's session management in headless Chromium: newest-first list, fork
// points between turns, the model picker, context meter (totals in its tooltip) and
// plan line. Rename/fork/export/delete are view-title commands (the host's).
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

const SESSIONS = [
  { sessionId: "s-old", title: "Fix flaky test", mode: "plan", createdAt: "2026-11-01T10:00:00Z", updatedAt: "2026-11-01T10:00:00Z" },
  { sessionId: "s-new", title: "Add a response cache", mode: "build", createdAt: "2026-11-02T10:00:00Z", updatedAt: "2026-11-30T09:00:00Z" },
  { sessionId: "s-mid", title: "Cache eviction bug", mode: "build", createdAt: "2026-11-03T10:00:00Z", updatedAt: "2026-11-20T09:00:00Z" },
];

const text = (t: string) => [{ type: "text", text: t }];

async function openSession(theme = false): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, { type: "sessions", activeSessionId: "s-new", sessions: SESSIONS });
  await send(page, {
    type: "history",
    sessionId: "s-new",
    title: "Add a response cache",
    mode: "build",
    running: false,
    messages: [
      { id: "u1", role: "user", createdAt: "t", parts: text("Add an LRU cache to store.py") },
      { id: "a1", role: "assistant", createdAt: "t", parts: [{ type: "tool_call", toolCallId: "t1", name: "read", input: { path: "store.py" }, status: "completed", output: "…" }] },
      { id: "a2", role: "assistant", createdAt: "t", parts: text("Added `LRUCache` with a size of 128.") },
      { id: "u2", role: "user", createdAt: "t", parts: text("Now add tests") },
      { id: "a3", role: "assistant", createdAt: "t", parts: text("Added `tests/test_cache.py`; all 12 pass.") },
    ],
  });
  await send(page, {
    type: "sessionInfo",
    sessionId: "s-new",
    info: {
      provider: "openai",
      model: "gpt-5.1",
      tokens: { input: 48210, cached: 36000, output: 2315, requests: 6 },
      context: { tokens: 51200, contextWindow: 400000 },
      plan: { path: ".baton/plans/2026-11-30-response-cache.md", status: "approved", version: 3, done: 2, total: 5 },
    },
  });
  await page.waitForSelector("#plan-line:not([hidden])");
  return page;
}

describe("sidebar session management", () => {
  it("lists sessions newest first", async () => {
    const page = await openSession();
    expect(await page.locator("#session-select option").allInnerTexts()).toEqual([
      "Add a response cache",
      "Cache eviction bug",
      "Fix flaky test",
    ]);
    await page.selectOption("#session-select", "s-mid");
    expect(await waitForPosted(page, "selectSession")).toEqual({ type: "selectSession", sessionId: "s-mid" });
    await page.close();
  });

  it("posts the model picker, the context menu and the plan for the active session", async () => {
    const page = await openSession();
    for (const [button, type] of [
      ["#pick-model", "pickModel"],
      ["#context", "contextMenu"],
    ] as const) {
      await page.click(button);
      expect(await waitForPosted(page, type)).toEqual({ type, sessionId: "s-new" });
    }
    await page.click("#plan-line");
    expect(await waitForPosted(page, "showPlan")).toEqual({ type: "showPlan", sessionId: "s-new" });
    await page.close();
  });

  it("offers a fork point after each turn's answer", async () => {
    const page = await openSession();
    const points = page.locator("[data-kind=fork-point]");
    expect(await points.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.messageId))).toEqual(["a2", "a3"]);
    await points.first().locator("button").click();
    expect(await waitForPosted(page, "forkSession")).toEqual({ type: "forkSession", sessionId: "s-new", messageId: "a2" });
    await page.close();
  });

  it("adds a fork point after a live turn, once", async () => {
    const page = await openSession();
    await send(page, { type: "update", sessionId: "s-new", update: { kind: "agent_message_chunk", text: "More." } });
    await send(page, { type: "update", sessionId: "s-new", update: { kind: "turn_ended", stopReason: "end_turn" } });
    await send(page, { type: "forkPoint", sessionId: "s-new", messageId: "a4" });
    await send(page, { type: "forkPoint", sessionId: "s-new", messageId: "a4" });
    await send(page, { type: "forkPoint", sessionId: "s-old", messageId: "x9" });
    await page.waitForSelector("[data-kind=fork-point][data-message-id=a4]");
    const ids = await page.locator("[data-kind=fork-point]").evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.messageId));
    expect(ids).toEqual(["a2", "a3", "a4"]);
    await page.close();
  });

  it("shows one set of numbers: context in use now of the window; session totals only in the tooltip", async () => {
    const page = await openSession();
    expect(await page.locator("#pick-model").innerText()).toBe("gpt-5.1 ▾");
    expect(await page.locator("#context-label").innerText()).toBe("51k / 400k");
    expect(Number(await page.locator("#context-meter").getAttribute("data-fraction"))).toBeCloseTo(0.128, 3);
    const tooltip = (await page.locator("#context").getAttribute("title")) ?? "";
    expect(tooltip).toContain("Context in use now: 51,200 of 400,000 tokens (13% of the model's window).");
    expect(tooltip).toContain("Session totals over 6 requests: input 48,210 (cached 36,000), output 2,315.");
    // No turn runs: the build is not going on ("approved, building" only while it does).
    expect(await page.locator("#plan-line").innerText()).toBe("Plan: approved · 2/5 done");
    await send(page, { type: "update", sessionId: "s-new", update: { kind: "agent_message_chunk", text: "Building step 3." } });
    await expect.poll(() => page.locator("#plan-line").innerText()).toBe("Plan: approved, building · 2/5 done");
    await send(page, { type: "update", sessionId: "s-new", update: { kind: "turn_ended", stopReason: "end_turn" } });
    await expect.poll(() => page.locator("#plan-line").innerText()).toBe("Plan: approved · 2/5 done");
    // Cache figures from baton/session/context show when the server reports them.
    await send(page, {
      type: "sessionInfo",
      sessionId: "s-new",
      info: { model: "gpt-5.1", context: { tokens: 51200, contextWindow: 400000, cachedTokens: 30000, cacheHitRate: 0.75 } },
    });
    await page.waitForFunction(() => (document.getElementById("context")?.title ?? "").includes("Prompt cache"));
    expect(await page.locator("#context").getAttribute("title")).toContain("Prompt cache: 30,000 tokens, 75% of this session's input was a cache hit.");
    // Info for another session is ignored; a session without a plan hides the line.
    await send(page, { type: "sessionInfo", sessionId: "s-old", info: { model: "other" } });
    await send(page, { type: "sessionInfo", sessionId: "s-new", info: { model: "gpt-4.1", plan: null } });
    await page.waitForFunction(() => document.getElementById("pick-model")?.textContent === "gpt-4.1 ▾");
    expect(await page.locator("#plan-line").isHidden()).toBe(true);
    await page.close();
  });

  it("clears the view when the active session is deleted", async () => {
    const page = await openSession();
    await send(page, { type: "sessions", activeSessionId: null, sessions: SESSIONS.filter((s) => s.sessionId !== "s-new") });
    await page.waitForFunction(() => document.getElementById("app")?.dataset.sessionId === "");
    expect(await page.locator("#transcript > *").count()).toBe(0);
    expect(await page.locator("#context").isHidden()).toBe(true);
    // With no session the picker chooses the next session's model (it starts one).
    expect(await page.locator("#pick-model").getAttribute("title")).toContain("a new session");
    // The welcome state is back, and Send still works (it starts a new session).
    expect(await page.locator("#welcome").isVisible()).toBe(true);
    expect((await posted(page)).filter((m) => m.type === "deleteSession")).toEqual([]);
    await page.close();
  });

  it("reports an MCP server that failed or is restarting", async () => {
    const page = await openSession();
    const update = (u: Record<string, unknown>) => send(page, { type: "update", sessionId: "s-new", update: u });
    await update({ kind: "mcp_server", server: "github", status: "failed", tools: [], error: "github-mcp: command not found" });
    await update({ kind: "mcp_server", server: "docs", status: "restarting", tools: ["docs__search"] });
    await update({ kind: "mcp_server", server: "docs", status: "ready", tools: ["docs__search"] });
    await page.waitForSelector("[data-kind=mcp-restarting]");
    expect(await page.locator("[data-kind=mcp-failed]").innerText()).toBe("MCP server github is unavailable: github-mcp: command not found");
    expect(await page.locator("[data-kind=mcp-restarting]").innerText()).toBe("MCP server docs stopped; restarting it");
    await page.close();
  });

  it("screenshot for the README", async () => {
    const page = await openSession(true);
    await page.waitForTimeout(150);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "sidebar-sessions.png") });
    await page.close();
  });
});
