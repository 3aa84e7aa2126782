// Themes: the context meter reads empty at 0% in dark, light and high contrast (and
// hides until there is a session); high contrast shows which mode is selected.
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

const THEMES = ["vscode-dark", "vscode-light", "vscode-high-contrast", "vscode-high-contrast-light"];

async function sidebar(theme: string): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await waitForPosted(page, "ready");
  await page.evaluate((cls) => {
    document.body.className = cls;
    // High contrast themes give buttons no fill.
    if (cls.includes("high-contrast")) document.body.style.setProperty("--vscode-button-background", "transparent");
  }, theme);
  await send(page, { type: "server", status: "running" });
  return page;
}

const meterFill = (page: Page) =>
  page.evaluate(() => {
    const meter = document.getElementById("context-meter")!;
    const fill = meter.querySelector<HTMLElement>(".meter-fill")!;
    return { track: getComputedStyle(meter).backgroundColor, fill: fill.getBoundingClientRect().width, width: meter.getBoundingClientRect().width };
  });

describe("themes", () => {
  for (const theme of THEMES) {
    it(`${theme}: the meter hides before a session, reads empty at 0% and half at 50%`, async () => {
      const page = await sidebar(theme);
      await send(page, { type: "sessions", activeSessionId: null, sessions: [] });
      await page.waitForTimeout(100);
      expect(await page.locator("#context").isHidden()).toBe(true);
      await send(page, { type: "sessions", activeSessionId: "s", sessions: [{ sessionId: "s", title: "t", mode: "build", createdAt: "t", updatedAt: "t" }] });
      await send(page, { type: "history", sessionId: "s", title: "t", mode: "build", running: false, messages: [] });
      await send(page, { type: "sessionInfo", sessionId: "s", info: { context: { tokens: 0, contextWindow: 400_000 } } });
      await page.locator("#context").waitFor({ state: "visible" });
      const empty = await meterFill(page);
      expect(empty.fill).toBe(0);
      expect(empty.track).toBe("rgba(0, 0, 0, 0)");
      await send(page, { type: "sessionInfo", sessionId: "s", info: { context: { tokens: 200_000, contextWindow: 400_000 } } });
      await expect.poll(async () => (await meterFill(page)).fill).toBeGreaterThan(0);
      const half = await meterFill(page);
      expect(half.fill / half.width).toBeGreaterThan(0.4);
      expect(half.fill / half.width).toBeLessThan(0.55);
      await page.close();
    });
  }

  for (const theme of ["vscode-high-contrast", "vscode-high-contrast-light"]) {
    it(`${theme}: the selected mode is marked`, async () => {
      const page = await sidebar(theme);
      await send(page, { type: "sessions", activeSessionId: null, sessions: [] });
      const look = (id: string) =>
        page.locator(id).evaluate((node) => {
          const s = getComputedStyle(node);
          return `${s.outlineStyle} ${s.outlineWidth} ${s.fontWeight} ${s.backgroundColor}`;
        });
      expect(await look("#mode-build")).not.toBe(await look("#mode-plan"));
      await page.click("#mode-plan");
      expect(await page.locator("#mode-plan").getAttribute("aria-checked")).toBe("true");
      expect(await look("#mode-plan")).not.toBe(await look("#mode-build"));
      expect(await look("#mode-plan")).toMatch(/^solid 2px 600/);
      await page.close();
    });
  }
});
