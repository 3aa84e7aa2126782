// WCAG AA for the status badges: the sidebar's tool-card badges and the plan's
// status badge, rendered in Chromium under each theme kind VS Code sets on <body>,
// with the text/background contrast computed from the colours the page really uses.
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
const AA = 4.5;

/** [foreground, background, contrast ratio] of each matched element, by WCAG's relative luminance. */
async function ratios(page: Page, selector: string): Promise<Array<{ label: string; ratio: number }>> {
  return page.evaluate((sel) => {
    const parse = (c: string) => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
    const lum = ([r, g, b]: number[]) => {
      const f = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(r ?? 0) + 0.7152 * f(g ?? 0) + 0.0722 * f(b ?? 0);
    };
    return Array.from(document.querySelectorAll<HTMLElement>(sel)).map((node) => {
      const style = getComputedStyle(node);
      const [a, b] = [lum(parse(style.color)), lum(parse(style.backgroundColor))];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      return { label: `${node.closest("[data-status]")?.getAttribute("data-status") ?? node.textContent}: ${style.color} on ${style.backgroundColor}`, ratio };
    });
  }, selector);
}

describe("badge contrast (WCAG AA, 4.5:1)", () => {
  for (const theme of THEMES) {
    it(`tool-card badges and the plan status badge in ${theme}`, async () => {
      const sidebar = await openWebview(browser, "sidebar");
      await waitForPosted(sidebar, "ready");
      await sidebar.evaluate((cls) => {
        document.body.className = cls;
      }, theme);
      await send(sidebar, { type: "sessions", activeSessionId: "s", sessions: [{ sessionId: "s", title: "t", mode: "build", createdAt: "t", updatedAt: "t" }] });
      await send(sidebar, { type: "history", sessionId: "s", title: "t", mode: "build", running: false, messages: [] });
      for (const [i, status] of ["pending", "in_progress", "completed", "failed"].entries()) {
        await send(sidebar, { type: "update", sessionId: "s", update: { kind: "tool_call", toolCallId: `t${i}`, name: "bash", input: { command: "ls" }, status } });
      }
      await sidebar.waitForSelector("[data-tool-call-id=t3] .tool-status");
      const badges = await ratios(sidebar, ".tool-status");
      expect(badges).toHaveLength(4);
      for (const badge of badges) expect(badge.ratio, badge.label).toBeGreaterThanOrEqual(AA);
      await sidebar.close();

      const plan = await openWebview(browser, "plan");
      await waitForPosted(plan, "ready");
      await plan.evaluate((cls) => {
        document.body.className = cls;
      }, theme);
      for (const status of ["draft", "awaiting_approval", "approved", "done"]) {
        await send(plan, { type: "plan", sessionId: "s", title: "t", versions: [], plan: { path: "p.md", status, version: 1, content: "# P\n" } });
        await plan.waitForFunction((s) => document.getElementById("plan-app")?.dataset.status === s, status);
        const [badge] = await ratios(plan, "#plan-status");
        expect(badge?.ratio, `${status}: ${badge?.label}`).toBeGreaterThanOrEqual(AA);
      }
      await plan.close();
    });
  }
});
