// Line-by-line plan review in the plan webview (headless Chromium): select text,
// add a comment / replacement / deletion, edit and remove them, and Request
// changes posts the overall comment and every annotation as one message.
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

// Line numbers (1-based) are what the annotations must carry.
const PLAN = [
  "# Plan: cache", // 1
  "", // 2
  "Intro paragraph line one", // 3
  "continues here.", // 4
  "", // 5
  "- [ ] Add the store", // 6
  "- [ ] Wire it in", // 7
  "  - [ ] nested detail", // 8
  "- [ ] Docs", // 9
  "", // 10
  "```text", // 11
  "x = 1", // 12
  "y = 2", // 13
  "```", // 14
  "",
].join("\n");

function planMessage(content: string, overrides: Record<string, unknown> = {}, running = false) {
  return {
    type: "plan",
    sessionId: "s-1",
    title: "Cache",
    plan: { path: ".baton/plans/cache.md", status: "awaiting_approval", version: 3, content, ...overrides },
    versions: [{ version: 3, author: "agent", createdAt: "2026-11-30T09:10:00Z", sha256: "c" }],
    running,
  };
}

async function readyPlan(content = PLAN, theme = false): Promise<Page> {
  const page = await openWebview(browser, "plan", { theme });
  await waitForPosted(page, "ready");
  await send(page, planMessage(content));
  await page.waitForSelector("#plan-content h1");
  return page;
}

/** Selects `text` (the `nth` occurrence) inside `selector` as a person would, ending with a mouseup. */
async function select(page: Page, selector: string, text: string, until?: { selector: string; text: string }): Promise<void> {
  await page.evaluate(
    ({ selector, text, until }) => {
      const find = (sel: string, wanted: string): [Text, number] => {
        const root = document.querySelector(sel);
        if (!root) throw new Error(`no ${sel}`);
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const at = (n.textContent ?? "").indexOf(wanted);
          if (at >= 0) return [n as Text, at];
        }
        throw new Error(`no "${wanted}" in ${sel}`);
      };
      const [startNode, startAt] = find(selector, text);
      const range = document.createRange();
      range.setStart(startNode, startAt);
      if (until) {
        const [endNode, endAt] = find(until.selector, until.text);
        range.setEnd(endNode, endAt + until.text.length);
      } else {
        range.setEnd(startNode, startAt + text.length);
      }
      const selection = window.getSelection()!;
      selection.removeAllRanges();
      selection.addRange(range);
      document.getElementById("plan-content")!.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
    },
    { selector, text, until },
  );
  await page.waitForSelector("#selection-tools:not([hidden])");
}

async function annotate(page: Page, kind: "comment" | "replace" | "delete", words?: string): Promise<void> {
  const before = await page.locator("#annotation-list li").count();
  await page.click(`#selection-tools button[data-kind=${kind}]`);
  await page.waitForSelector("#annotation-editor:not([hidden])");
  if (words !== undefined) {
    await page.locator("#annotation-text").click();
    await page.keyboard.press("Control+A");
    await page.keyboard.type(words);
  }
  await page.click("#annotation-save");
  await page.waitForFunction((n) => document.querySelectorAll("#annotation-list li").length === n, before + 1);
}

const items = (page: Page) =>
  page.locator("#annotation-list li").evaluateAll((lis) =>
    lis.map((li) => ({
      kind: (li as HTMLElement).dataset.kind,
      lines: li.querySelector(".annotation-lines")?.textContent,
      quote: li.querySelector(".annotation-quote")?.textContent,
      text: li.querySelector(".annotation-text")?.textContent ?? null,
    })),
  );

describe("plan review: line-by-line annotations", () => {
  it("selections become comments, replacements and deletions on the right source lines; Request changes sends them all in one message", async () => {
    const page = await readyPlan();
    expect(await page.locator("#review").isHidden()).toBe(true);

    // A list item with a sub-list: its own line only (7), not the nested item's (8).
    await select(page, "#plan-content", "Wire it in");
    expect(await page.locator("#selection-tools").getAttribute("data-lines")).toBe("7-7");
    await annotate(page, "comment", "Behind a flag?");

    // The second line of a wrapped paragraph: that line alone. Replace starts from the quote.
    await select(page, "#plan-content", "continues here");
    await page.click("#selection-tools button[data-kind=replace]");
    await page.waitForSelector("#annotation-editor:not([hidden])");
    expect(await page.locator("#annotation-text").evaluate((t) => (t as HTMLElement & { value: string }).value)).toBe("continues here");
    expect(await page.locator("#annotation-kind").innerText()).toBe("Replace · Line 4");
    await page.locator("#annotation-text").click();
    await page.keyboard.press("Control+A");
    await page.keyboard.type("goes on in a second paragraph.");
    await page.click("#annotation-save");
    await page.waitForFunction(() => document.querySelectorAll("#annotation-list li").length === 2);

    // Across several items: from the first one's line to the last one's. A deletion needs no words.
    await select(page, "#plan-content", "Add the store", { selector: "#plan-content", text: "Docs" });
    expect(await page.locator("#selection-tools").getAttribute("data-lines")).toBe("6-9");
    await annotate(page, "delete");

    // One line inside a code block.
    await select(page, "#plan-content pre", "y = 2");
    expect(await page.locator("#selection-tools").getAttribute("data-lines")).toBe("13-13");
    await annotate(page, "comment", "Why two?");

    expect(await items(page)).toEqual([
      { kind: "replace", lines: "Line 4", quote: "continues here", text: "goes on in a second paragraph." },
      { kind: "delete", lines: "Lines 6–9", quote: expect.stringContaining("Add the store"), text: null },
      { kind: "comment", lines: "Line 7", quote: "Wire it in", text: "Behind a flag?" },
      { kind: "comment", lines: "Line 13", quote: "y = 2", text: "Why two?" },
    ]);
    expect(await page.locator("#review-count").innerText()).toBe("4 annotations");
    expect(await page.locator("#request-changes-toggle").innerText()).toBe("Request changes (4)");
    // The annotated blocks are marked in the plan.
    expect(await page.locator("#plan-content .annotated").count()).toBeGreaterThanOrEqual(3);

    // Edit one, remove another.
    await page.locator("#annotation-list li[data-kind=comment]", { hasText: "Behind a flag?" }).locator("button[data-action=edit]").click();
    await page.waitForSelector("#annotation-editor:not([hidden])");
    await page.locator("#annotation-text").click();
    await page.keyboard.press("Control+A");
    await page.keyboard.type("Behind a `cache=` flag, off by default.");
    await page.click("#annotation-save");
    await page.locator("#annotation-list li", { hasText: "Why two?" }).locator("button[data-action=remove]").click();
    await page.waitForFunction(() => document.querySelectorAll("#annotation-list li").length === 3);

    // Request changes: the overall comment with the three annotations, one message.
    await page.click("#request-changes-toggle");
    expect(await page.locator("#feedback-annotations").innerText()).toBe("With 3 annotations on the plan's lines.");
    await page.locator("#feedback").click();
    await page.keyboard.type("Smaller steps overall");
    await page.click("#send-feedback");
    const sent = await waitForPosted(page, "requestChanges");
    expect(sent).toEqual({
      type: "requestChanges",
      feedback: "Smaller steps overall",
      annotations: [
        { kind: "replace", startLine: 4, endLine: 4, quote: "continues here", text: "goes on in a second paragraph." },
        { kind: "delete", startLine: 6, endLine: 9, quote: expect.stringContaining("Docs") },
        { kind: "comment", startLine: 7, endLine: 7, quote: "Wire it in", text: "Behind a `cache=` flag, off by default." },
      ],
    });
    expect((await posted(page)).filter((m) => m.type === "requestChanges")).toHaveLength(1);
    // Each quote is the plan's own text on its lines (the server refuses one that is not).
    const squash = (t: string) => t.split(/\s+/).filter(Boolean).join(" ");
    for (const a of sent.annotations as Array<{ startLine: number; endLine: number; quote: string }>) {
      expect(squash(PLAN.split("\n").slice(a.startLine - 1, a.endLine).join("\n"))).toContain(squash(a.quote));
    }
    // Until the host says the review arrived, the annotations stay; then they go.
    expect(await page.locator("#annotation-list li").count()).toBe(3);
    await send(page, { type: "reviewSent" });
    await page.waitForFunction(() => document.getElementById("review")?.hidden === true);
    expect(await page.locator("#plan-content .annotated").count()).toBe(0);
    await page.close();
  });

  it("a triple click on the plan's last step selects it (the range runs past the content) and annotates its line", async () => {
    const page = await readyPlan("# Plan: greet\n\n- [ ] Write `hello.txt`\n- [ ] Check it\n");
    await page.locator("li.step", { hasText: "Check it" }).click({ clickCount: 3 });
    await page.waitForSelector("#selection-tools:not([hidden])");
    expect(await page.locator("#selection-tools").getAttribute("data-lines")).toBe("4-4");
    await annotate(page, "comment", "Check what?");
    await page.locator("li.step", { hasText: "Write hello.txt" }).click({ clickCount: 3 });
    await page.waitForSelector("#selection-tools:not([hidden])");
    await annotate(page, "delete");
    expect(await items(page)).toEqual([
      { kind: "delete", lines: "Line 3", quote: "Write `hello.txt`", text: null },
      { kind: "comment", lines: "Line 4", quote: "Check it", text: "Check what?" },
    ]);
    await page.close();
  });

  it("annotations alone can be sent; Escape or Cancel drops a draft; a comment needs words", async () => {
    const page = await readyPlan();
    await select(page, "#plan-content", "Docs");
    await page.click("#selection-tools button[data-kind=comment]");
    await page.click("#annotation-save"); // empty: not saved, the editor stays
    expect(await page.locator("#annotation-editor").isVisible()).toBe(true);
    expect(await page.locator("#annotation-list li").count()).toBe(0);
    await page.locator("#annotation-text").click();
    await page.keyboard.press("Escape");
    await page.waitForSelector("#annotation-editor", { state: "hidden" });
    await select(page, "#plan-content", "Docs");
    await annotate(page, "comment", "Which docs?");
    await page.click("#review-send");
    await page.waitForSelector("#feedback-box:not([hidden])");
    await page.click("#send-feedback");
    expect(await waitForPosted(page, "requestChanges")).toEqual({
      type: "requestChanges",
      feedback: "",
      annotations: [{ kind: "comment", startLine: 9, endLine: 9, quote: "Docs", text: "Which docs?" }],
    });
    await page.close();
  });

  it("annotations follow their lines into a new version; lines that are gone are stale and hold Send back until removed", async () => {
    const page = await readyPlan();
    await select(page, "#plan-content", "Docs");
    await annotate(page, "comment", "Which docs?");
    await select(page, "#plan-content", "Add the store");
    await annotate(page, "delete");
    // The file changed: a line above both, and the store step rewritten.
    const next = PLAN.replace("# Plan: cache\n", "# Plan: cache\n\nA new first line.\n").replace("Add the store", "Add the LRU store");
    await send(page, planMessage(next, { version: 4 }));
    await page.waitForFunction(() => document.getElementById("plan-app")?.dataset.version === "4");
    expect(await items(page)).toEqual([
      { kind: "delete", lines: "Line 6 (gone)", quote: "Add the store", text: null },
      { kind: "comment", lines: "Line 11", quote: "Docs", text: "Which docs?" },
    ]);
    await page.click("#request-changes-toggle");
    await page.locator("#feedback").click();
    await page.keyboard.type("and this");
    expect(await page.locator("#send-feedback").getAttribute("disabled")).not.toBeNull();
    expect(await page.locator("#review-hint").innerText()).toContain("no longer in the plan");
    await page.locator("#annotation-list li.stale button[data-action=remove]").click();
    await page.waitForFunction(() => !document.getElementById("send-feedback")?.hasAttribute("disabled"));
    await page.click("#send-feedback");
    expect(await waitForPosted(page, "requestChanges")).toEqual({
      type: "requestChanges",
      feedback: "and this",
      annotations: [{ kind: "comment", startLine: 11, endLine: 11, quote: "Docs", text: "Which docs?" }],
    });
    await page.close();
  });

  it("a plan that changes while an annotation is being written: the annotation lands on its lines in the new version", async () => {
    const page = await readyPlan();
    await select(page, "#plan-content", "Docs");
    await page.click("#selection-tools button[data-kind=comment]");
    await page.waitForSelector("#annotation-editor:not([hidden])");
    // The person's own edit in the file: two lines above.
    await send(page, planMessage(PLAN.replace("# Plan: cache\n", "# Plan: cache\n\nNew.\n"), { version: 4 }));
    await page.waitForFunction(() => document.getElementById("plan-app")?.dataset.version === "4");
    await page.locator("#annotation-text").click();
    await page.keyboard.type("Which docs?");
    await page.click("#annotation-save");
    await page.waitForFunction(() => document.querySelectorAll("#annotation-list li").length === 1);
    expect(await items(page)).toEqual([{ kind: "comment", lines: "Line 11", quote: "Docs", text: "Which docs?" }]);
    await page.close();
  });

  it("offers no annotation tools while a turn runs or once the plan is approved; approval drops the annotations", async () => {
    const page = await readyPlan();
    await send(page, planMessage(PLAN, {}, true));
    await page.waitForFunction(() => document.getElementById("approve")?.hasAttribute("disabled"));
    await page.evaluate(() => {
      const h1 = document.querySelector("#plan-content h1")!;
      const range = document.createRange();
      range.selectNodeContents(h1);
      window.getSelection()!.addRange(range);
      document.getElementById("plan-content")!.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
    });
    expect(await page.locator("#selection-tools").isHidden()).toBe(true);
    await send(page, planMessage(PLAN, { status: "draft", version: 4 }));
    await select(page, "#plan-content", "Docs");
    await annotate(page, "comment", "Which docs?");
    // A turn that starts while the person writes an annotation leaves what they wrote.
    await select(page, "#plan-content", "Add the store");
    await page.click("#selection-tools button[data-kind=comment]");
    await page.locator("#annotation-text").click();
    await page.keyboard.type("Half a thought");
    await send(page, planMessage(PLAN, { status: "draft", version: 4 }, true));
    await page.waitForFunction(() => document.getElementById("approve")?.hasAttribute("disabled"));
    expect(await page.locator("#annotation-editor").isVisible()).toBe(true);
    expect(await page.locator("#annotation-text").evaluate((t) => (t as HTMLElement & { value: string }).value)).toBe("Half a thought");
    // Approved: the review is over, its annotations go with it.
    await send(page, planMessage(PLAN, { status: "approved", version: 5 }));
    await page.waitForFunction(() => document.getElementById("plan-app")?.dataset.status === "approved");
    expect(await page.locator("#review").isHidden()).toBe(true);
    expect(await page.locator("#annotation-list li").count()).toBe(0);
    await page.evaluate(() => document.getElementById("plan-content")!.dispatchEvent(new MouseEvent("mouseup", { bubbles: true })));
    expect(await page.locator("#selection-tools").isHidden()).toBe(true);
    await page.close();
  });

  it("a quote from model-written markup is shown as text in the list, never as HTML", async () => {
    const page = await readyPlan("# Plan\n\n- [ ] Add <img src=x onerror=\"window.__pwned=1\"> here\n");
    await select(page, "#plan-content", "<img src=x");
    await annotate(page, "comment", "<b>no</b>");
    expect(await page.locator("#annotation-list img, #annotation-list b").count()).toBe(0);
    expect(await page.locator("#annotation-list .annotation-quote").innerText()).toBe("<img src=x");
    expect(await page.locator("#annotation-list .annotation-text").innerText()).toBe("<b>no</b>");
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.close();
  });

  it("Approve and build in a fresh context is the primary button; Approve keeps the planning context", async () => {
    const page = await readyPlan();
    expect(await page.locator("#approve-fresh").getAttribute("secondary")).toBeNull();
    expect(await page.locator("#approve").getAttribute("secondary")).not.toBeNull();
    await page.click("#approve-fresh");
    expect(await waitForPosted(page, "approve")).toEqual({ type: "approve", fresh: true });
    await page.click("#approve");
    const approvals = (await posted(page)).filter((m) => m.type === "approve");
    expect(approvals).toEqual([
      { type: "approve", fresh: true },
      { type: "approve", fresh: false },
    ]);
    await page.close();
  });

  it("screenshot: a plan under review with annotations", async () => {
    const page = await readyPlan(PLAN, true);
    await select(page, "#plan-content", "Wire it in");
    await annotate(page, "comment", "Behind a flag, off by default.");
    await select(page, "#plan-content", "Docs");
    await annotate(page, "delete");
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "plan-review.png") });
    await page.close();
  });
});
