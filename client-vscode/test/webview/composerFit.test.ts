// The composer's bar at the sidebar's narrow widths: the mode switch and the model picker
// show their whole labels; what does not fit moves into the "…" menu, which the keyboard
// opens and which runs the same actions.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openSidebarSession, posted, send, waitForPosted } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const SESSION = "s-1";
const MODEL = "gpt-5-mini-2025-08-07";

async function sidebar(width: number): Promise<Page> {
  return openSidebarSession(browser, { width, provider: "openai", model: MODEL, sessionId: SESSION });
}

/** Each visible control of the bar: its text is whole (not clipped) and it lies inside the bar. */
async function barControls(page: Page) {
  return page.evaluate(() => {
    const bar = document.querySelector<HTMLElement>(".composer-bar")!;
    const box = bar.getBoundingClientRect();
    const out: Array<{ id: string; text: string; whole: boolean; inside: boolean }> = [];
    for (const node of Array.from(bar.querySelectorAll<HTMLElement>("#mode-build, #mode-plan, #pick-model, #cancel, #send, #composer-more"))) {
      if (node.offsetParent === null) continue;
      const r = node.getBoundingClientRect();
      out.push({
        id: node.id,
        text: node.innerText.trim(),
        whole: node.scrollWidth <= node.clientWidth + 1,
        inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.width > 0,
      });
    }
    return { out, overflowing: bar.scrollWidth > bar.clientWidth + 1 };
  });
}

describe("composer at narrow widths", () => {
  for (const width of [300, 400, 600]) {
    it(`at ${width} px the mode switch and the model show whole labels; the rest is in the … menu`, async () => {
      const page = await sidebar(width);
      const { out, overflowing } = await barControls(page);
      expect(overflowing).toBe(false);
      for (const c of out) {
        expect(c, `${c.id} at ${width}px`).toMatchObject({ whole: true, inside: true });
      }
      const ids = out.map((c) => c.id);
      expect(ids).toEqual(expect.arrayContaining(["mode-build", "mode-plan", "send"]));
      expect(out.find((c) => c.id === "mode-plan")?.text).toBe("Plan");
      expect(out.find((c) => c.id === "mode-build")?.text).toBe("Build");
      const model = out.find((c) => c.id === "pick-model");
      if (model) {
        expect(model.text).toContain(MODEL);
      } else {
        // Not in the bar: the menu has it, whole.
        await page.click("#composer-more");
        expect(await page.locator("#composer-menu [role=menuitem]", { hasText: MODEL }).count()).toBe(1);
      }
      if (width >= 600) expect(ids).toEqual(expect.arrayContaining(["pick-model", "cancel"]));
      await page.close();
    });
  }

  it("at 300 px the keyboard opens the … menu, moves through it and runs an item's action", async () => {
    const page = await sidebar(300);
    const more = page.locator("#composer-more");
    await more.focus();
    await page.keyboard.press("Enter");
    const menu = page.locator("#composer-menu");
    await menu.waitFor({ state: "visible" });
    expect(await more.getAttribute("aria-expanded")).toBe("true");
    // The first item has the focus; Arrow keys move; Escape closes and gives the focus back.
    const items = menu.locator("[role=menuitem]");
    expect(await items.count()).toBeGreaterThan(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute("role"))).toBe("menuitem");
    await page.keyboard.press("Escape");
    await menu.waitFor({ state: "hidden" });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("composer-more");

    // The model item runs the picker's action, as the bar's button does.
    await page.keyboard.press("ArrowDown");
    await menu.waitFor({ state: "visible" });
    const model = items.filter({ hasText: MODEL });
    if ((await model.count()) === 1) {
      for (let i = 0; i < 5; i++) {
        if ((await page.evaluate(() => document.activeElement?.textContent ?? "")).includes(MODEL)) break;
        await page.keyboard.press("ArrowDown");
      }
      await page.keyboard.press("Enter");
      const pick = await waitForPosted(page, "pickModel");
      expect(pick).toEqual({ type: "pickModel", sessionId: SESSION });
    } else {
      // The model stayed in the bar: the Stop item is there, disabled while nothing runs.
      const stop = items.filter({ hasText: "Stop" });
      expect(await stop.getAttribute("aria-disabled")).toBe("true");
      await stop.click({ force: true });
      expect((await posted(page)).some((m) => m.type === "cancel")).toBe(false);
    }
    await menu.waitFor({ state: "hidden" });
    await page.close();
  });

  it("while a turn runs at 300 px, Stop is in the bar and Send gives way", async () => {
    const page = await sidebar(300);
    await send(page, { type: "turn", sessionId: SESSION, running: true });
    await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "true");
    const { out, overflowing } = await barControls(page);
    expect(overflowing).toBe(false);
    expect(out.map((c) => c.id)).toContain("cancel");
    for (const c of out) expect(c, c.id).toMatchObject({ whole: true, inside: true });
    await page.click("#cancel");
    expect(await waitForPosted(page, "cancel")).toEqual({ type: "cancel", sessionId: SESSION });
    await page.close();
  });
});
