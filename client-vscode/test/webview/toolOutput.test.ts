// Tool output the person can read: previews cut at line ends with "… N more lines" in
// view, a long output expanded in its own scroll box, and no text meant for the model.
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
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: SESSION, update: u });

async function sidebar(): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await page.setViewportSize({ width: 320, height: 760 });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, { type: "sessions", activeSessionId: SESSION, sessions: [{ sessionId: SESSION, title: "t", mode: "build", createdAt: "t", updatedAt: "t" }] });
  await send(page, { type: "history", sessionId: SESSION, title: "t", mode: "build", running: false, messages: [] });
  return page;
}

async function tool(page: Page, id: string, name: string, input: Record<string, unknown>, output: string): Promise<void> {
  await send(page, update({ kind: "tool_call", toolCallId: id, name, input, status: "pending" }));
  await send(page, update({ kind: "tool_call_update", toolCallId: id, status: "completed", output }));
  await page.waitForSelector(`[data-tool-call-id="${id}"][data-status=completed]`);
}

describe("tool output", () => {
  it("a preview shows whole rows cut at their end, and how many lines are hidden, in view", async () => {
    const page = await sidebar();
    const long = "x".repeat(400);
    const output = [`first ${long}`, "second", "third", ...Array.from({ length: 40 }, (_, i) => `more ${i}`)].join("\n");
    await tool(page, "c1", "bash", { command: "make" }, output);
    const card = page.locator('[data-tool-call-id="c1"]');
    const rows = card.locator(".tool-preview-line");
    expect(await rows.count()).toBe(3);
    const cut = await rows.first().evaluate((node) => ({ ellipsis: getComputedStyle(node).textOverflow, clipped: node.scrollWidth > node.clientWidth, lines: Math.round(node.getBoundingClientRect().height / parseFloat(getComputedStyle(node).lineHeight || "16")) }));
    expect(cut.ellipsis).toBe("ellipsis");
    expect(cut.clipped).toBe(true);
    const more = card.locator(".tool-preview-more");
    expect(await more.innerText()).toBe("… 40 more lines");
    expect(await more.isVisible()).toBe(true);
    const [moreBox, cardBox] = await Promise.all([more.boundingBox(), card.boundingBox()]);
    expect(moreBox!.y + moreBox!.height).toBeLessThanOrEqual(cardBox!.y + cardBox!.height + 1);
    await page.close();
  });

  it("an expanded 30,000-character output scrolls in its own box", async () => {
    const page = await sidebar();
    const output = Array.from({ length: 700 }, (_, i) => `line ${i} ${"y".repeat(40)}`).join("\n");
    expect(output.length).toBeGreaterThan(30_000);
    await tool(page, "c2", "bash", { command: "cat big.log" }, output);
    const card = page.locator('[data-tool-call-id="c2"]');
    await card.locator("summary").first().click();
    const box = card.locator(".tool-output");
    const sizes = await box.evaluate((node) => ({ scroll: node.scrollHeight, client: node.clientHeight, overflow: getComputedStyle(node).overflowY }));
    expect(sizes.overflow).toBe("auto");
    expect(sizes.scroll).toBeGreaterThan(sizes.client * 3);
    expect(sizes.client).toBeLessThan(page.viewportSize()!.height / 1.5);
    await page.close();
  });

  it("a plan edit's card shows the changed lines, not the numbering meant for the model", async () => {
    const page = await sidebar();
    const output = "Plan v3 (approved). Changed lines:\n 5| - [x] Read stats.py\n-6| - [ ] Add median()\n+6| - [x] Add median()\n 7| - [ ] Run the tests\nNext open step: Run the tests";
    await tool(page, "c3", "plan_edit", { edits: [] }, output);
    const card = page.locator('[data-tool-call-id="c3"]');
    const preview = await card.locator(".tool-preview").innerText();
    const full = await card.locator(".tool-output").textContent();
    for (const text of [preview, full ?? ""]) {
      expect(text).not.toMatch(/\d\|/);
      expect(text).not.toContain("Changed lines");
    }
    expect(full).toContain("- - [ ] Add median()\n+ - [x] Add median()");
    expect(preview.split("\n")[0]).toBe("Plan v3 (approved).");
    await page.close();
  });
});
