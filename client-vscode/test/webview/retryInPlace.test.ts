// Retry replaces the failed attempt in place: no struck-through duplicate of the prompt,
// no dimmed partial answer and no stray Fork above the prompt sent again; the earlier
// attempt is one click away.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openWebview, send, waitForPosted } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const SESSION = "s-1";
const text = (t: string) => [{ type: "text", text: t }];
const BEFORE = [
  { id: "u1", role: "user", createdAt: "t", parts: text("one") },
  { id: "a1", role: "assistant", createdAt: "t", parts: text("First answer.") },
  { id: "u2", role: "user", createdAt: "t", reverted: true, parts: text("add a cache") },
  { id: "a2", role: "assistant", createdAt: "t", reverted: true, incomplete: true, parts: text("Half an ans") },
];
const TURNS = [
  { afterMessageId: "a1", stopReason: "end_turn", createdAt: "t" },
  { afterMessageId: "a2", stopReason: "error", error: "the stream broke after partial output: peer closed", createdAt: "t" },
];

async function sidebar(): Promise<Page> {
  const page = await openWebview(browser, "sidebar");
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: SESSION,
    sessions: [{ sessionId: SESSION, title: "Retry", mode: "build", createdAt: "t", updatedAt: "t" }],
  });
  return page;
}

/** The transcript's top level: what the person sees without opening anything. */
const topLevel = (page: Page) =>
  page.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>("#transcript > *")).map((n) => n.dataset.kind ?? ""));

async function expectFolded(page: Page): Promise<void> {
  const kinds = await topLevel(page);
  const fold = kinds.indexOf("earlier-attempt");
  expect(fold).toBeGreaterThan(0);
  // The prompt sent again comes right after the fold; nothing of the failed attempt is left out.
  expect(kinds[fold + 1]).toBe("user");
  // The fork point before it is the previous turn's; none belongs to the attempt taken back.
  expect(kinds[fold - 1]).toBe("fork-point");
  expect(await page.locator(".earlier-attempt [data-kind=fork-point]").count()).toBe(0);
  expect(kinds.filter((k) => k === "error")).toEqual([]);
  expect(await page.locator("#transcript > .msg.user.reverted").count()).toBe(0);
  expect(await page.locator("#transcript > .reverted").count()).toBe(0);
  const summary = page.locator(".earlier-attempt > summary");
  expect(await summary.innerText()).toBe("Earlier attempt failed · show");
  expect(await page.locator(".earlier-attempt .msg.assistant").isVisible()).toBe(false);
  await summary.click();
  expect(await page.locator(".earlier-attempt .msg.assistant").innerText()).toContain("Half an ans");
  expect(await page.locator(".earlier-attempt [data-kind=error]").count()).toBe(1);
}

describe("retry in place", () => {
  it("live: after the host takes the failed turn back and sends the prompt again", async () => {
    const page = await sidebar();
    // What the host does on Retry: reload the history (the attempt now reverted), then the prompt.
    await send(page, { type: "history", sessionId: SESSION, title: "Retry", mode: "build", running: false, messages: BEFORE, turns: TURNS });
    await send(page, { type: "userMessage", sessionId: SESSION, text: "add a cache" });
    await page.waitForSelector(".earlier-attempt");
    await expectFolded(page);
    await page.close();
  });

  it("reopened: the earlier attempt stays folded above the prompt that replaced it", async () => {
    const page = await sidebar();
    const after = [
      ...BEFORE,
      { id: "u3", role: "user", createdAt: "t", parts: text("add a cache") },
      { id: "a3", role: "assistant", createdAt: "t", parts: text("Done: the cache is in.") },
    ];
    await send(page, { type: "history", sessionId: SESSION, title: "Retry", mode: "build", running: false, messages: after, turns: TURNS });
    await page.waitForSelector(".earlier-attempt");
    await expectFolded(page);
    expect((await topLevel(page)).at(-1)).toBe("fork-point");
    await page.close();
  });

  it("an Undo without a retry stays as it was (nothing repeats the prompt)", async () => {
    const page = await sidebar();
    await send(page, { type: "history", sessionId: SESSION, title: "Retry", mode: "build", running: false, messages: BEFORE, turns: TURNS });
    await page.waitForSelector("[data-kind=error]");
    expect(await page.locator(".earlier-attempt").count()).toBe(0);
    await page.close();
  });

  // Issue 50: a second retry left the first attempt as a struck-through "Reverted" copy.
  it("a second retry folds both earlier attempts; nothing struck through is left", async () => {
    const page = await sidebar();
    const twice = [
      ...BEFORE,
      { id: "u3", role: "user", createdAt: "t", reverted: true, parts: text("add a cache") },
      { id: "a3", role: "assistant", createdAt: "t", reverted: true, incomplete: true, parts: text("Again half") },
      { id: "u4", role: "user", createdAt: "t", parts: text("add a cache") },
      { id: "a4", role: "assistant", createdAt: "t", parts: text("Done: the cache is in.") },
    ];
    const turns = [...TURNS, { afterMessageId: "a3", stopReason: "error", error: "the stream broke after partial output: again", createdAt: "t" }];
    await send(page, { type: "history", sessionId: SESSION, title: "Retry", mode: "build", running: false, messages: twice, turns });
    await page.waitForSelector(".earlier-attempt");
    expect(await page.locator("#transcript > .msg.user.reverted, #transcript > .reverted").count()).toBe(0);
    const kinds = await topLevel(page);
    expect(kinds.filter((k) => k === "user")).toEqual(["user", "user"]);
    expect(await page.locator(".earlier-attempt").count()).toBe(2);
    await page.close();
  });
});
