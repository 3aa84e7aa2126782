// Keyboard: the transcript is one Tab stop between the header and the composer; the
// arrow keys move inside it.
import type { Browser } from "playwright-core";
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
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: SESSION, update: u });

describe("focus order", () => {
  it("Tab goes from the transcript to the composer, past every card; arrows walk the cards", async () => {
    const page = await openWebview(browser, "sidebar");
    await waitForPosted(page, "ready");
    await send(page, { type: "server", status: "running" });
    await send(page, { type: "sessions", activeSessionId: SESSION, sessions: [{ sessionId: SESSION, title: "t", mode: "build", createdAt: "t", updatedAt: "t" }] });
    await send(page, {
      type: "history", sessionId: SESSION, title: "t", mode: "build", running: false,
      messages: [
        { id: "u1", role: "user", createdAt: "t", parts: [{ type: "text", text: "go" }] },
        { id: "a1", role: "assistant", createdAt: "t", parts: [{ type: "text", text: "```ts\nconst a = 1;\n```" }] },
      ],
    });
    for (let i = 0; i < 8; i++) {
      await send(page, update({ kind: "tool_call", toolCallId: `c${i}`, name: "read", input: { path: `f${i}.py` }, status: "pending" }));
      await send(page, update({ kind: "tool_call_update", toolCallId: `c${i}`, status: "completed", output: "ok" }));
    }
    await page.waitForSelector('[data-tool-call-id="c7"][data-status=completed]');
    await page.focus("#transcript");
    await page.keyboard.press("Tab");
    const inComposer = await page.evaluate(() => {
      let node: Element | null = document.activeElement;
      while (node?.shadowRoot?.activeElement) node = node.shadowRoot.activeElement;
      return Boolean(document.activeElement?.closest(".composer")) || Boolean(node?.closest(".composer"));
    });
    expect(inComposer).toBe(true);

    await page.focus("#transcript");
    await page.keyboard.press("ArrowDown");
    const first = await page.evaluate(() => document.activeElement?.closest("[data-kind]")?.getAttribute("data-kind"));
    expect(first).toBeTruthy();
    await page.keyboard.press("End");
    const last = await page.evaluate(() => document.activeElement?.closest("[data-tool-call-id]")?.getAttribute("data-tool-call-id") ?? document.activeElement?.textContent);
    expect(last).toBeTruthy();
    // Enter still opens the focused card.
    await page.focus('[data-tool-call-id="c3"] > summary');
    await page.keyboard.press("Enter");
    expect(await page.locator('[data-tool-call-id="c3"]').getAttribute("open")).not.toBeNull();
    await page.close();
  });
});
