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

  // Issue 50: "Reject scrolls out of view once the card shows 'you edited' or 'Asked by the build child'".
  for (const [width, height] of [[300, 520], [300, 900], [520, 600]] as const) {
    it(`at ${width}×${height} px with an edited child card: every choice stays in view`, async () => {
      const page = await openWebview(browser, "sidebar", { theme: true });
      await page.setViewportSize({ width, height });
      await waitForPosted(page, "ready");
      await send(page, { type: "server", status: "running" });
      await send(page, { type: "sessions", activeSessionId: SESSION, sessions: [{ sessionId: SESSION, title: "t", mode: "build", createdAt: "t", updatedAt: "t" }] });
      await send(page, { type: "history", sessionId: SESSION, title: "t", mode: "build", running: true, messages: [] });
      await send(page, {
        type: "permission",
        requestId: "r2",
        sessionId: "child-1",
        parentId: SESSION,
        agent: "build",
        toolCall: { toolCallId: "c2", name: "write", input: { path: "src/a/very/long/path/to/the/module/that/the/child/writes/cache_invalidation_policy.py", content: "x" } },
        options: [
          { optionId: "allow_once", kind: "allow_once", name: "Allow" },
          { optionId: "allow_always", kind: "allow_always", name: "Allow", scope: "path" },
          { optionId: "allow_all", kind: "allow_always", name: "Allow", scope: "category" },
          { optionId: "reject_once", kind: "reject_once", name: "Reject" },
        ],
        reason: "src/ is listed in permissions.protect: Baton asks before every change there, even with writes allowed. ".repeat(3),
        diff: DIFF,
      });
      await page.waitForSelector(".permission-asker");
      await send(page, { type: "permissionEdited", toolCallId: "c2", edited: true });
      await page.waitForSelector(".permission-edited");
      for (const kind of ["allow_once", "reject_once"]) {
        expect(await inViewport(page, `.permission-option.${kind}`), kind).toBe(true);
        // Not only inside the window: on top, where a click lands.
        const hit = await page.locator(`.permission-option.${kind}`).evaluate((node) => {
          const box = node.getBoundingClientRect();
          const at = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
          return at !== null && node.contains(at);
        });
        expect(hit, kind).toBe(true);
      }
      await page.locator(".permission-option.reject_once").click();
      expect(await waitForPosted(page, "permissionAnswer")).toEqual({ type: "permissionAnswer", requestId: "r2", optionId: "reject_once" });
      await page.close();
    });
  }
});
