// The write prompt keeps to its place: a long diff scrolls inside the card, and the
// choices, the latest message and the composer stay in view.
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
const DIFF = ["--- a/src/cache.py", "+++ b/src/cache.py", "@@ -1,3 +1,300 @@", ...Array.from({ length: 300 }, (_, i) => `+line ${i} of the new cache module`)].join("\n");

async function sidebar(height: number): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await page.setViewportSize({ width: 320, height });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, { type: "sessions", activeSessionId: SESSION, sessions: [{ sessionId: SESSION, title: "t", mode: "build", createdAt: "t", updatedAt: "t" }] });
  await send(page, {
    type: "history", sessionId: SESSION, title: "t", mode: "build", running: false,
    messages: [
      { id: "u1", role: "user", createdAt: "t", parts: [{ type: "text", text: "write the cache" }] },
      { id: "a1", role: "assistant", createdAt: "t", parts: [{ type: "text", text: "Writing src/cache.py now." }] },
    ],
  });
  await send(page, {
    type: "permission",
    requestId: "r1",
    toolCall: { toolCallId: "c1", name: "write", input: { path: "src/cache.py", content: "x" } },
    options: [
      { optionId: "allow_once", kind: "allow_once", name: "Allow" },
      { optionId: "allow_always", kind: "allow_always", name: "Allow writes this session" },
      { optionId: "reject_once", kind: "reject_once", name: "Reject" },
    ],
    diff: DIFF,
  });
  await page.waitForSelector(".permission-diff");
  return page;
}

const inViewport = async (page: Page, selector: string) => {
  const box = await page.locator(selector).last().boundingBox();
  const height = page.viewportSize()!.height;
  return box !== null && box.y >= 0 && box.y + box.height <= height + 1;
};

describe("the write prompt", () => {
  for (const height of [600, 900]) {
    it(`at ${height} px: the diff scrolls inside the card; Reject, the transcript and the composer stay in view`, async () => {
      const page = await sidebar(height);
      const diff = page.locator(".permission-diff");
      const scrolls = await diff.evaluate((node) => node.scrollHeight > node.clientHeight + 10);
      expect(scrolls).toBe(true);
      expect(await inViewport(page, ".permission-option.reject_once")).toBe(true);
      expect(await inViewport(page, ".permission-option.allow_once")).toBe(true);
      expect(await inViewport(page, "#prompt")).toBe(true);
      expect(await inViewport(page, "#send")).toBe(true);
      const transcript = await page.locator("#transcript").boundingBox();
      expect(transcript!.height).toBeGreaterThan(30);
      // The whole diff is there, one scroll away.
      await diff.evaluate((node) => { node.scrollTop = node.scrollHeight; });
      expect(await diff.innerText()).toContain("+line 299 of the new cache module");
      await page.close();
    });
  }
});
