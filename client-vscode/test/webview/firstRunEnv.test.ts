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

  it("offers the server's models in the welcome; one click makes it the workspace's model", async () => {
    const server = { hasKey: false, baseUrl: "http://localhost:11434/v1", baseUrlFrom: "environment" };
    const page = await emptySidebar(server);
    // Before the list arrives: the server needs a model, and the picker is one click away.
    expect(await page.locator("#welcome-model").innerText()).toContain("It needs a model");
    await send(page, { type: "setup", setup: { ...server, serverModels: ["qwen2.5-coder:7b", "llama3.1:8b"] } });
    await expect.poll(() => page.locator("#welcome-model").innerText()).toContain("Choose its model for this workspace:");
    const buttons = page.locator("#welcome-models button");
    expect(await buttons.allInnerTexts()).toEqual(["qwen2.5-coder:7b", "llama3.1:8b"]);
    await buttons.first().click();
    expect(await waitForPosted(page, "useModel")).toEqual({ type: "useModel", model: "qwen2.5-coder:7b" });
    // Chosen: the welcome says which model every session uses, and offers no list.
    await send(page, { type: "setup", setup: { ...server, model: "qwen2.5-coder:7b" } });
    await expect.poll(() => page.locator("#welcome-model").innerText()).toBe(
      "Baton will use qwen2.5-coder:7b on the OpenAI-compatible server at http://localhost:11434/v1 (OPENAI_BASE_URL).",
    );
    expect(await page.locator("#welcome-models").isHidden()).toBe(true);
    await page.close();
  });

  it("a long list shows the first models and the picker for the rest", async () => {
    const models = Array.from({ length: 12 }, (_, i) => `model-${i}`);
    const page = await emptySidebar({ hasKey: false, baseUrl: "http://127.0.0.1:1234/v1", baseUrlFrom: "setting", serverModels: models });
    const buttons = page.locator("#welcome-models button");
    expect(await buttons.count()).toBe(9);
    await buttons.last().click();
    expect(await waitForPosted(page, "action")).toEqual({ type: "action", action: "chooseModel" });
    await page.close();
  });
});
