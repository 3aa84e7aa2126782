import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, ORIGIN, openWebview, waitForPosted } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe("webview Content-Security-Policy", () => {
  for (const name of ["sidebar", "plan"] as const) {
    it(`${name}: runs only the nonce'd bundle; inline, nonce-less and handler scripts are blocked`, async () => {
      const page = await openWebview(browser, name, {
        extraBody: `
          <script>window.__inline = true;</script>
          <script src="${ORIGIN}/evil.js"></script>
          <img id="bad-img" src="x" onerror="window.__onerror = true">
          <a id="bad-link" href="javascript:window.__jslink = true">x</a>`,
      });
      await waitForPosted(page, "ready"); // the nonce'd bundle ran
      await page.click("#bad-link").catch(() => undefined);
      await page.waitForTimeout(200);
      const result = await page.evaluate(() => {
        const w = window as unknown as Record<string, unknown>;
        return {
          inline: w.__inline,
          evil: w.__evil,
          onerror: w.__onerror,
          jslink: w.__jslink,
          violations: w.__violations as Array<{ directive: string }>,
          csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute("content"),
        };
      });
      expect(result.inline).toBeUndefined();
      expect(result.evil).toBeUndefined();
      expect(result.onerror).toBeUndefined();
      expect(result.jslink).toBeUndefined();
      expect(result.violations.some((v) => v.directive.startsWith("script-src"))).toBe(true);
      expect(result.csp).toMatch(/default-src 'none'/);
      expect(result.csp).toMatch(/script-src 'nonce-[A-Za-z0-9]{32}'/);
      await page.close();
    });
  }
});
