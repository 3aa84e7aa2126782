// Each assistant message is its own block in the transcript. Streamed chunks carry no
// message id, so the sidebar ends a message where the server says one ended: a model
// step's usage report, a note Baton added (the look-first nudge), the end of a turn, and
// the start of another.
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

const SESSION = "s-1";
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: SESSION, update: u });
const usage = { kind: "usage", tokens: 1200, contextWindow: 32768, inputTokens: 1100, cachedTokens: 0, outputTokens: 100 };

async function emptySession(): Promise<Page> {
  const page = await openWebview(browser, "sidebar");
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: SESSION,
    sessions: [{ sessionId: SESSION, title: "Greeting", mode: "build", createdAt: "t", updatedAt: "t" }],
  });
  await send(page, { type: "history", sessionId: SESSION, title: "Greeting", mode: "build", running: false, messages: [] });
  await page.waitForFunction(() => document.getElementById("app")?.dataset.sessionId === "s-1");
  return page;
}

async function prompt(page: Page, text: string): Promise<void> {
  await page.locator("#prompt").click();
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "true");
}

/** The assistant blocks' texts once `count` of them rendered (markdown renders on the next frame). */
async function answers(page: Page, count: number): Promise<string[]> {
  await page
    .waitForFunction(
      (n) => {
        const blocks = Array.from(document.querySelectorAll("[data-kind=assistant]"));
        return blocks.length >= n && blocks.every((b) => (b.textContent ?? "").trim() !== "");
      },
      count,
      { timeout: 5000 },
    )
    .catch(() => undefined);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(undefined))));
  return page.locator("[data-kind=assistant]").allInnerTexts();
}

describe("assistant messages in the sidebar", () => {
  it("a second answer after Baton's look-first note is a new message, with the note between them", async () => {
    const page = await emptySession();
    await prompt(page, "What does greet() return?");
    await send(page, update({ kind: "agent_message_chunk", text: "It returns " }));
    await send(page, update({ kind: "agent_message_chunk", text: "a greeting." }));
    await send(page, update(usage));
    await send(page, update({ kind: "note", messageId: "m3", text: "[Baton: you answered without looking.]", reason: "no_tool" }));
    await send(page, update({ kind: "agent_message_chunk", text: "Having read `greet.py`: " }));
    await send(page, update({ kind: "agent_message_chunk", text: "it returns `Hello, name!`." }));
    await send(page, update(usage));
    await send(page, update({ kind: "turn_ended", stopReason: "end_turn" }));
    expect(await answers(page, 2)).toEqual(["It returns a greeting.", "Having read greet.py: it returns Hello, name!."]);
    const kinds = await page.locator("#transcript > *").evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.kind));
    expect(kinds).toEqual(["user", "assistant", "note", "assistant"]);
    expect(await page.locator("[data-kind=note]").innerText()).toBe("Baton asked the agent to look at the code before answering");
    await page.close();
  });

  it("the note alone (no usage reported) also ends the message", async () => {
    const page = await emptySession();
    await prompt(page, "Where is greet defined?");
    await send(page, update({ kind: "agent_message_chunk", text: "In utils." }));
    await send(page, update({ kind: "note", messageId: "m3", text: "[Baton: look first.]", reason: "no_tool" }));
    await send(page, update({ kind: "agent_message_chunk", text: "In greet.py." }));
    expect(await answers(page, 2)).toEqual(["In utils.", "In greet.py."]);
    await page.close();
  });

  it("each model step's text is its own message (a step ends with its usage report)", async () => {
    const page = await emptySession();
    await prompt(page, "Say hello");
    await send(page, update({ kind: "agent_message_chunk", text: "First step." }));
    await send(page, update(usage));
    await send(page, update({ kind: "agent_message_chunk", text: "Second step." }));
    expect(await answers(page, 2)).toEqual(["First step.", "Second step."]);
    await page.close();
  });

  it("a turn the server runs after an answer (no prompt bubble between) is a new message", async () => {
    const page = await emptySession();
    await send(page, update({ kind: "agent_message_chunk", text: "Answer one." }));
    await send(page, update({ kind: "turn_ended", stopReason: "end_turn" }));
    await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "false");
    await send(page, { type: "turn", sessionId: SESSION, running: true });
    await send(page, update({ kind: "agent_message_chunk", text: "Answer two." }));
    expect(await answers(page, 2)).toEqual(["Answer one.", "Answer two."]);
    await page.close();
  });

  it("a later prompt's answer is a new message", async () => {
    const page = await emptySession();
    await prompt(page, "Say hello");
    await send(page, update({ kind: "agent_message_chunk", text: "Hello from the fake model." }));
    await send(page, update({ kind: "turn_ended", stopReason: "end_turn" }));
    await send(page, { type: "turn", sessionId: SESSION, running: false, stopReason: "end_turn" });
    await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "false");
    await prompt(page, "Say hello again");
    await send(page, update({ kind: "agent_message_chunk", text: "Hello from the fake model." }));
    expect(await answers(page, 2)).toEqual(["Hello from the fake model.", "Hello from the fake model."]);
    expect(await page.locator(".msg.user").allInnerTexts()).toEqual(["Say hello", "Say hello again"]);
    await page.close();
  });
});

describe("the transcript's end stays in view", () => {
  it("a permission prompt taking room below the transcript does not hide the latest messages", async () => {
    const page = await emptySession();
    await prompt(page, "Make greet() polite");
    for (let i = 0; i < 30; i++) {
      await send(page, update({ kind: "tool_call", toolCallId: `r${i}`, name: "read", input: { path: `f${i}.py` }, status: "pending" }));
    }
    await send(page, update({ kind: "agent_message_chunk", text: "Now the tests." }));
    await send(page, update({ kind: "tool_call", toolCallId: "b1", name: "bash", input: { command: "pytest -q" }, status: "pending" }));
    const gap = () =>
      page.evaluate(() => {
        const t = document.getElementById("transcript")!;
        return t.scrollHeight - t.scrollTop - t.clientHeight;
      });
    await page.waitForFunction(() => document.querySelector("[data-tool-call-id=b1]") !== null);
    expect(await gap()).toBeLessThan(2);
    await send(page, {
      type: "permission",
      requestId: "p1",
      sessionId: SESSION,
      toolCall: { toolCallId: "b1", name: "bash", input: { command: "pytest -q" } },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "reject", kind: "reject_once" },
      ],
    });
    await page.waitForSelector("[data-request-id=p1]");
    await page.waitForFunction(() => {
      const t = document.getElementById("transcript")!;
      return t.scrollHeight - t.scrollTop - t.clientHeight < 2;
    }, undefined, { timeout: 3000 }).catch(() => undefined);
    expect(await gap()).toBeLessThan(2);
    expect(await page.locator("[data-tool-call-id=b1]").isVisible()).toBe(true);

    // Scrolled up to read: a new prompt card does not pull the view down.
    await page.locator("#transcript").evaluate((t) => (t.scrollTop = 0));
    await page.waitForTimeout(100);
    await send(page, { type: "permissionClosed", requestId: "p1" });
    await page.waitForTimeout(200);
    expect(await page.locator("#transcript").evaluate((t) => t.scrollTop)).toBe(0);
    await page.close();
  });
});
