// Messages while the agent works (issue 50, point 6), the sidebar's side: Enter queues
// instead of doing nothing, the queue shows what waits and when it reaches the agent
// (the person's choice), ✕ takes one back, a delivered message reads as the person's
// own, and the queue stays after Stop until the server says it was delivered.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openWebview, posted, send, waitForPosted } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const SESSION = "s-1";
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: SESSION, update: u });

async function working(width = 300): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await page.setViewportSize({ width, height: 700 });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, { type: "sessions", activeSessionId: SESSION, sessions: [{ sessionId: SESSION, title: "Work", mode: "build", createdAt: "t", updatedAt: "t" }] });
  await send(page, { type: "history", sessionId: SESSION, title: "Work", mode: "build", running: false, messages: [] });
  await page.locator("#prompt").click();
  await page.keyboard.type("Fix the tests");
  await page.keyboard.press("Enter");
  await waitForPosted(page, "prompt");
  await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "true");
  return page;
}

describe("messages while the agent works", () => {
  it("Enter queues what is typed, shown as queued, delivered at the next step by default", async () => {
    const page = await working();
    expect(await page.locator("#send").innerText()).toBe("Queue");
    expect(await page.locator("#queue").isVisible()).toBe(true);
    await page.locator("#prompt").click();
    await page.keyboard.type("Use pytest -x");
    await page.keyboard.press("Enter");
    expect(await waitForPosted(page, "queue")).toEqual({ type: "queue", sessionId: SESSION, text: "Use pytest -x", delivery: "steer" });
    expect(await page.locator("#prompt").evaluate((n) => (n as HTMLTextAreaElement).value)).toBe("");
    // The server says what waits.
    await send(page, update({ kind: "queue", queued: [{ id: "q1", text: "Use pytest -x", delivery: "steer" }] }));
    const item = page.locator(".queued-item");
    expect(await item.locator(".queued-text").innerText()).toBe("Use pytest -x");
    expect(await item.locator(".queued-when").innerText()).toBe("queued · next step");
    // Delivered at the next step: out of the queue, into the transcript as the person's words.
    await send(page, update({ kind: "queue", queued: [] }));
    await send(page, update({ kind: "user_message", messageId: "m2", text: "Use pytest -x", queued: "steer" }));
    expect(await page.locator(".queued-item").count()).toBe(0);
    const shown = page.locator(".msg.user[data-queued=steer]");
    expect(await shown.innerText()).toContain("Use pytest -x");
    expect(await page.locator(".baton-prompt").count()).toBe(0); // not "Baton's instruction"
    await page.close();
  });

  it("after the turn, the person's choice; ✕ takes one back; Stop keeps the queue", async () => {
    const page = await working();
    await page.selectOption("#queue-delivery", "after_turn");
    await page.locator("#prompt").click();
    await page.keyboard.type("Then update the changelog");
    await page.click("#send");
    expect(await waitForPosted(page, "queue")).toEqual({ type: "queue", sessionId: SESSION, text: "Then update the changelog", delivery: "after_turn" });
    await send(page, update({ kind: "queue", queued: [{ id: "q1", text: "Then update the changelog", delivery: "after_turn" }, { id: "q2", text: "and bump the version", delivery: "after_turn" }] }));
    expect(await page.locator(".queued-when").allInnerTexts()).toEqual(["queued · after the turn", "queued · after the turn"]);
    await page.locator('.queued-item[data-queued-id="q2"] .queued-remove').click();
    expect(await waitForPosted(page, "unqueue")).toEqual({ type: "unqueue", sessionId: SESSION, id: "q2" });
    await send(page, update({ kind: "queue", queued: [{ id: "q1", text: "Then update the changelog", delivery: "after_turn" }] }));
    // Stop: the turn ends, what waits stays in view.
    await page.click("#cancel");
    await waitForPosted(page, "cancel");
    await send(page, update({ kind: "turn_ended", stopReason: "cancelled" }));
    await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "false");
    expect(await page.locator(".queued-text").allInnerTexts()).toEqual(["Then update the changelog"]);
    expect(await page.locator("#queue").isVisible()).toBe(true);
    expect((await posted(page)).filter((m) => m.type === "prompt").length).toBe(1);
    await page.close();
  });

  it("at 300 px the composer keeps Stop and Queue in view while the agent works", async () => {
    const page = await working(300);
    for (const id of ["#cancel", "#send"]) {
      const box = await page.locator(id).boundingBox();
      expect(box, id).not.toBeNull();
      expect(box!.x + box!.width).toBeLessThanOrEqual(301);
    }
    await page.close();
  });
});
