// Plan revisions: the blocks changed since the version last seen in the panel
// are marked (a left bar and a "Changed since v<k>" note) in every theme, and
// model-written text in a changed block stays inert under the CSP.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openWebview, SCREENSHOTS, send, waitForPosted } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const V2 = "# Plan: cache\n\nIntro paragraph.\n\n- [ ] Read store.py\n- [ ] Add an LRU\n- [ ] Tests\n";
const V3 = "# Plan: cache\n\nIntro paragraph.\n\n- [ ] Read store.py\n- [ ] Add an LRU with a size limit\n- [ ] Tests\n- [ ] Docs\n";
const V4 = "# Plan: cache\n\nA new intro.\n\n- [ ] Read store.py\n- [ ] Add an LRU with a size limit\n- [ ] Tests\n- [ ] Docs\n";
const V5 = "# Plan: cache\n\nA new intro.\n\n- [ ] Read store.py\n- [ ] Add an LRU with a size limit\n- [ ] Tests\n";

function planMessage(version: number, content: string, running = false) {
  return {
    type: "plan",
    sessionId: "s-1",
    title: "Cache work",
    plan: { path: ".baton/plans/cache.md", status: "draft", version, content },
    versions: Array.from({ length: version }, (_, i) => ({ version: i + 1, author: "agent", createdAt: "2026-12-01T10:00:00Z", sha256: String(i) })),
    running,
  };
}

async function showVersion(page: Page, version: number, content: string, running = false): Promise<void> {
  await send(page, planMessage(version, content, running));
  await page.waitForFunction((v) => document.getElementById("plan-app")?.dataset.version === String(v), version);
}

const changedTexts = (page: Page) =>
  page.locator("#plan-content .plan-changed").evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).innerText.trim()));
const note = (page: Page) =>
  page.evaluate(() => {
    const n = document.getElementById("plan-changes")!;
    return n.hidden ? null : n.textContent;
  });

async function planPage(): Promise<Page> {
  const page = await openWebview(browser, "plan", { theme: true });
  await waitForPosted(page, "ready");
  return page;
}

describe("plan revisions", () => {
  it("marks what changed since the version last shown, against that version each time", async () => {
    const page = await planPage();
    await showVersion(page, 2, V2);
    // The first version the panel shows has nothing to compare with.
    expect(await page.locator("#plan-content .plan-changed").count()).toBe(0);
    expect(await note(page)).toBeNull();

    await showVersion(page, 3, V3);
    expect(await changedTexts(page)).toEqual(["Add an LRU with a size limit", "Docs"]);
    expect(await note(page)).toBe("Changed since v2, the version you last saw here: 2 blocks marked.");
    // The same version again (the turn's state changed): the marks stay.
    await send(page, planMessage(3, V3, true));
    await page.waitForFunction(() => document.getElementById("plan-activity")?.textContent !== "");
    expect(await changedTexts(page)).toEqual(["Add an LRU with a size limit", "Docs"]);

    // The note is about the rendered plan: the History tab does not show it.
    await page.click("#tab-history");
    expect(await note(page)).toBeNull();
    await page.click("#tab-plan");
    expect(await note(page)).toContain("Changed since v2");

    // The next revision is compared with v3, the one just seen, not v2.
    await showVersion(page, 4, V4);
    expect(await changedTexts(page)).toEqual(["A new intro."]);
    expect(await note(page)).toContain("Changed since v3");
    await page.close();
  });

  it("a version that arrives while the panel is hidden is not counted as seen until the panel is in view", async () => {
    const page = await planPage();
    await showVersion(page, 3, V3);
    await page.evaluate(() => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await showVersion(page, 4, V4);
    await showVersion(page, 5, V5);
    // v4 was never in view: v5 is compared with v3, the last version seen.
    expect(await note(page)).toBe("Changed since v3, the version you last saw here: 2 blocks marked, 1 line removed.");
    // The removed last step is marked where it stood: on the step now last.
    expect(await changedTexts(page)).toEqual(["A new intro.", "Tests"]);
    await page.evaluate(() => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "visible" });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    // In view now: the marks stay for this version, and v5 is what the next one is compared with.
    expect(await note(page)).toContain("Changed since v3");
    await showVersion(page, 6, V5.replace("Tests", "Tests for eviction"));
    expect(await note(page)).toContain("Changed since v5");
    expect(await changedTexts(page)).toEqual(["Tests for eviction"]);
    // What was seen survives the webview being rebuilt (it is in the webview's state).
    expect(await page.evaluate(() => (window as unknown as { __state: { seen?: { version: number } } }).__state.seen?.version)).toBe(6);
    await page.close();
  });

  it("the host saying the panel is out of view (another tab in front) counts the same way", async () => {
    const page = await planPage();
    await showVersion(page, 3, V3);
    await send(page, { type: "inView", visible: false });
    await showVersion(page, 4, V4);
    await send(page, { type: "inView", visible: true });
    await showVersion(page, 5, V5);
    // v4 came into view when the panel did: v5 is compared with it.
    expect(await note(page)).toBe("Changed since v4, the version you last saw here: 1 block marked, 1 line removed.");
    expect(await changedTexts(page)).toEqual(["Tests"]);
    await page.close();
  });

  it("another plan file is not a revision of the one seen: nothing is marked", async () => {
    const page = await planPage();
    await showVersion(page, 3, V3);
    const other = planMessage(4, V2);
    await send(page, { ...other, plan: { ...other.plan, path: ".baton/plans/other.md" } });
    await page.waitForFunction(() => document.getElementById("plan-path")?.textContent === ".baton/plans/other.md");
    expect(await page.locator("#plan-content .plan-changed").count()).toBe(0);
    expect(await note(page)).toBeNull();
    await page.close();
  });

  it("a changed block written by the model stays inert, with no CSP violation", async () => {
    const page = await planPage();
    await showVersion(page, 1, "# Plan\n\n- [ ] one\n");
    await showVersion(page, 2, `# Plan\n\n- [ ] one\n- [ ] <img src=x onerror="window.__pwned='onerror'"> two <script>window.__pwned='script'</script>\n`);
    const changed = page.locator("#plan-content .plan-changed");
    expect(await changed.count()).toBe(1);
    expect(await changed.innerText()).toContain("<script>");
    expect(await page.locator("#plan-content script, #plan-content img, #plan-content [onerror]").count()).toBe(0);
    await page.waitForTimeout(100);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(await page.evaluate(() => (window as unknown as { __violations: unknown[] }).__violations)).toEqual([]);
    await page.close();
  });

  const THEMES: Array<[string, Record<string, string>]> = [
    ["vscode-dark", { "--vscode-editorGutter-modifiedBackground": "rgb(27, 129, 168)", "--vscode-editor-background": "rgb(31, 31, 31)" }],
    ["vscode-light", { "--vscode-editorGutter-modifiedBackground": "rgb(32, 144, 211)", "--vscode-editor-background": "rgb(255, 255, 255)", "--vscode-foreground": "rgb(59, 59, 59)" }],
    ["vscode-high-contrast", { "--vscode-contrastActiveBorder": "rgb(243, 133, 24)", "--vscode-contrastBorder": "rgb(111, 195, 223)", "--vscode-editor-background": "rgb(0, 0, 0)", "--vscode-foreground": "rgb(255, 255, 255)" }],
    ["vscode-high-contrast-light", { "--vscode-contrastActiveBorder": "rgb(0, 102, 191)", "--vscode-contrastBorder": "rgb(0, 102, 191)", "--vscode-editor-background": "rgb(255, 255, 255)", "--vscode-foreground": "rgb(41, 41, 41)" }],
  ];
  for (const [theme, vars] of THEMES) {
    it(`${theme}: a changed block has a visible left bar in the theme's own colour`, async () => {
      const page = await planPage();
      await page.evaluate(
        ([cls, v]) => {
          document.body.className = cls as string;
          for (const [k, value] of Object.entries(v as Record<string, string>)) document.body.style.setProperty(k, value);
        },
        [theme, vars] as const,
      );
      await showVersion(page, 1, V2);
      await showVersion(page, 2, V3);
      const style = await page
        .locator("#plan-content .plan-changed")
        .first()
        .evaluate((n) => {
          const s = getComputedStyle(n);
          return { width: s.borderLeftWidth, color: s.borderLeftColor, style: s.borderLeftStyle, outline: s.outlineStyle };
        });
      expect(style.width).toBe("3px");
      expect(style.style).toBe("solid");
      const expected = theme.includes("high-contrast") ? vars["--vscode-contrastActiveBorder"] : vars["--vscode-editorGutter-modifiedBackground"];
      expect(style.color).toBe(expected);
      if (theme.includes("high-contrast")) expect(style.outline).toBe("dashed");
      await mkdir(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, `plan-revision-${theme}.png`) });
      await page.close();
    });
  }
});
