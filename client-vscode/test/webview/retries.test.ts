// Errors and retries the person can see: each retry with its reason and countdown
// (Stop works during it), error titles that say what happened, Details in view, and
// "Working…" readable at the sidebar's default width.
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

async function sidebar(width = 420): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await page.setViewportSize({ width, height: 700 });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: SESSION,
    sessions: [{ sessionId: SESSION, title: "Retries", mode: "build", createdAt: "t", updatedAt: "t" }],
  });
  await send(page, { type: "history", sessionId: SESSION, title: "Retries", mode: "build", running: false, messages: [] });
  await send(page, { type: "userMessage", sessionId: SESSION, text: "hello" });
  await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "true");
  return page;
}

const endWith = async (page: Page, end: Record<string, unknown>) => {
  await send(page, update({ kind: "turn_ended", ...end }));
  await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "false");
};

describe("retries and errors", () => {
  it("shows each retry with its reason and a countdown; Stop works during the wait", async () => {
    const page = await sidebar();
    const reason = "api.openai.com returned HTTP 429: Rate limit reached for gpt-5";
    await send(page, update({ kind: "model_retry", attempt: 1, maxRetries: 4, delaySeconds: 3, reason, status: 429 }));
    const marker = page.locator("[data-kind=retry]");
    await expect.poll(() => marker.textContent()).toMatch(/^Rate limited \(HTTP 429\): Retry 1 of 4 in 3 s…$/);
    expect(await marker.getAttribute("title")).toBe(reason);
    await expect.poll(() => marker.textContent(), { timeout: 3000 }).toMatch(/in [12] s…$/);
    expect(await page.locator("#cancel").getAttribute("disabled")).toBeNull();
    await page.click("#cancel");
    expect(await waitForPosted(page, "cancel")).toEqual({ type: "cancel", sessionId: SESSION });

    await send(page, update({ kind: "model_retry", attempt: 2, maxRetries: 4, delaySeconds: 1, reason: "HTTP 503", status: 503 }));
    await send(page, update({ kind: "agent_message_chunk", text: "Answer." }));
    const lines = await page.locator("[data-kind=retry]").allTextContents();
    expect(lines).toEqual([
      "Rate limited (HTTP 429): Retry 1 of 4 sent",
      "The provider had a server error (HTTP 503): Retry 2 of 4 sent",
    ]);
    await page.close();
  });

  it("error titles say what happened: rate limit, dropped stream, refused, too long", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ stopReason: "error", error: "api.openai.com returned HTTP 429: slow down (gave up after 4 retries)" }, /rate-limiting requests\. Baton retried 4 times\./],
      [{ stopReason: "error", error: "the stream broke after partial output: peer closed connection without sending complete message body" }, /connection to the model server dropped mid-answer/],
      [{ stopReason: "error", error: "api.openai.com returned HTTP 400: context_length_exceeded: This model's maximum context length is 128000 tokens" }, /too long for the model's context window/],
      [{ stopReason: "error", error: "api.openai.com returned HTTP 400: Your request was flagged by our content_filter" }, /refused this request/],
      [{ stopReason: "error", error: "api.openai.com returned HTTP 502: Bad Gateway (gave up after 1 retry)" }, /server had an error\. Baton retried 1 time\./],
    ];
    for (const [end, title] of cases) {
      const page = await sidebar();
      await endWith(page, end);
      expect(await page.locator(".error-title").last().textContent()).toMatch(title);
      await page.close();
    }
    const page = await sidebar();
    await endWith(page, { stopReason: "refusal" });
    expect(await page.locator("[data-kind=stop-refusal]").textContent()).toBe("The model refused to answer this request.");
    await page.close();
  });

  it("an OpenAI-compatible server's failures are titled by the cause the server names", async () => {
    // The report: each of these read "The model server is not fully configured."
    const server = "openai-compatible (http://localhost:11434/v1)";
    const cases: Array<[Record<string, unknown>, string, string[]]> = [
      [
        { error: `${server} returned HTTP 429: slow down (rate_limit_exceeded) (gave up after 4 retries)`, cause: "rate_limit" },
        "The model server is rate-limiting requests. Baton retried 4 times. Wait a moment, then retry.",
        ["Retry", "Show log"],
      ],
      [
        { error: `the stream broke after partial output: ${server}: connection failed: RemoteProtocolError: peer closed connection`, cause: "connection_dropped" },
        "The connection to the model server dropped mid-answer. The partial answer is kept; retry to ask again.",
        ["Retry", "Show log"],
      ],
      [
        { error: `the stream broke after partial output: ${server} failed: backend fell over (server_error)`, cause: "server_error" },
        "The model server had an error. Retry in a moment.",
        ["Retry", "Show log"],
      ],
      [
        { error: `${server} returned HTTP 404: model 'qwen9' not found`, cause: "model_not_found" },
        "The model server does not have this model.",
        ["Retry", "Choose a model", "Use another server"],
      ],
      [
        { error: `${server} returned HTTP 401: invalid key`, cause: "key_refused" },
        "The model server refused the API key.",
        ["Retry", "Set OpenAI key", "Use another server"],
      ],
      [
        { error: 'provider "openai-compatible" needs a base URL: set the `baseUrl` key', cause: "not_configured" },
        "The model server is not fully configured.",
        ["Retry", "Use another server", "Set OpenAI key", "Use a local model"],
      ],
    ];
    for (const [end, title, buttons] of cases) {
      const page = await sidebar();
      await endWith(page, { stopReason: "error", ...end });
      const card = page.locator(".error-card").last();
      expect(await card.locator(".error-title").textContent()).toBe(title);
      expect(await card.locator("button").allInnerTexts()).toEqual(buttons);
      await page.close();
    }
    // A failed prompt's answer (the JSON-RPC error's data.cause, passed on by the host) too.
    const page = await sidebar();
    await send(page, { type: "turn", sessionId: SESSION, running: false, stopReason: "error", error: `${server} returned HTTP 429: slow down`, cause: "rate_limit" });
    expect(await page.locator(".error-title").last().textContent()).toMatch(/^The model server is rate-limiting requests\./);
    await page.close();
  });

  it("Details opens in view, above the composer", async () => {
    const page = await sidebar();
    for (let i = 0; i < 30; i++) await send(page, update({ kind: "agent_message_chunk", text: `Line ${i}\n\n` }));
    const raw = Array.from({ length: 12 }, (_, i) => `detail line ${i}`).join("\n");
    await endWith(page, { stopReason: "error", error: `api.openai.com returned HTTP 500: boom\n${raw}` });
    await page.click(".error-details > summary");
    await page.waitForTimeout(300);
    const [pre, transcript] = await Promise.all([
      page.locator(".error-details pre").boundingBox(),
      page.locator("#transcript").boundingBox(),
    ]);
    expect(pre && transcript).toBeTruthy();
    expect(pre!.y + pre!.height).toBeLessThanOrEqual(transcript!.y + transcript!.height + 1);
    await page.close();
  });

  it("'Working…' is readable at the default sidebar width", async () => {
    const page = await sidebar(300);
    const status = page.locator("#turn-status");
    expect(await status.textContent()).toBe("Working…");
    const box = await status.boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(40);
    const fits = await status.evaluate((node) => node.scrollWidth <= node.clientWidth);
    expect(fits).toBe(true);
    await endWith(page, { stopReason: "end_turn" });
    expect(await status.isVisible()).toBe(false);
    expect((await posted(page)).some((m) => m.type === "cancel")).toBe(false);
    await page.close();
  });
});
