// The first run follows the state: the welcome names the server OPENAI_BASE_URL points
// at, "No model is set up yet" ends when a key is saved, and the model picker works
// before the first prompt (the host starts the session in the mode shown, then picks).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openWebview, posted, send, waitForPosted } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function emptySidebar(setup: Record<string, unknown>): Promise<Page> {
  const page = await openWebview(browser, "sidebar");
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, { type: "setup", setup });
  await send(page, { type: "sessions", activeSessionId: null, sessions: [] });
  await page.locator("#welcome").waitFor({ state: "visible" });
  return page;
}

describe("the first run reads the state", () => {
  it("names the OpenAI-compatible server of OPENAI_BASE_URL when there is no key", async () => {
    const page = await emptySidebar({ hasKey: false, baseUrl: "http://localhost:11434/v1", baseUrlFrom: "environment" });
    const line = await page.locator("#welcome-model").innerText();
    expect(line).toContain("OpenAI-compatible server at http://localhost:11434/v1 (OPENAI_BASE_URL)");
    expect(line).not.toContain("No model is set up yet");
    await page.close();
  });

  it("'No model is set up yet' ends when a key is saved, and stays gone in a new session", async () => {
    const page = await emptySidebar({ hasKey: false });
    expect(await page.locator("#welcome-model").innerText()).toContain("No model is set up yet");
    await send(page, { type: "setup", setup: { hasKey: true } });
    await expect.poll(() => page.locator("#welcome-model").innerText()).toContain("OpenAI with your key");
    await send(page, { type: "sessions", activeSessionId: "s-2", sessions: [{ sessionId: "s-2", title: "New", mode: "build", createdAt: "t", updatedAt: "t" }] });
    await send(page, { type: "history", sessionId: "s-2", title: "New", mode: "build", running: false, messages: [] });
    await page.waitForFunction(() => document.getElementById("app")?.dataset.sessionId === "s-2");
    expect(await page.locator("#welcome-model").innerText()).not.toContain("No model is set up yet");
    await page.close();
  });

  it("the model picker is enabled before the first prompt and asks for a session in the mode shown", async () => {
    const page = await emptySidebar({ hasKey: true });
    const picker = page.locator("#pick-model");
    expect(await picker.getAttribute("disabled")).toBeNull();
    await page.click("#mode-plan");
    await picker.click();
    expect(await waitForPosted(page, "pickModel")).toEqual({ type: "pickModel", sessionId: null, mode: "plan" });
    expect((await posted(page)).filter((m) => m.type === "setMode")).toEqual([]);
    await page.close();
  });
});
