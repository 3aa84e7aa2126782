// A reopened session (another session picked, then this one again; or Reload Window)
// shows what the live turns showed: error cards, "Stopped", the step limit, the
// compaction's figures, in their places, and the end of the transcript in view.
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
const RATE_LIMIT = "The model provider failed: HTTP 429 rate_limit_exceeded: Rate limit reached for gpt-5";
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: SESSION, update: u });

async function sidebar(): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: SESSION,
    sessions: [{ sessionId: SESSION, title: "Reopen me", mode: "build", createdAt: "t", updatedAt: "t" }],
  });
  await send(page, { type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false, messages: [] });
  return page;
}

/** What the transcript shows, item by item: its kind, its words, whether it offers Retry. */
async function shown(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    // Undo is the review's decoration (from the host's marks, live and reopened alike).
    Array.from(document.querySelectorAll<HTMLElement>("#transcript > :not([data-kind=turn-actions])")).map((node) => {
      const title = node.querySelector(".error-title")?.textContent ?? node.textContent ?? "";
      const retry = node.querySelector("[data-error-action=retry]") ? " [Retry]" : "";
      return `${node.dataset.kind}: ${title.trim()}${retry}`;
    }),
  );
}

async function turn(page: Page, prompt: string, answer: string | undefined, end: Record<string, unknown>, messageId: string): Promise<void> {
  await send(page, { type: "userMessage", sessionId: SESSION, text: prompt });
  if (answer) await send(page, update({ kind: "agent_message_chunk", text: answer }));
  await send(page, update({ kind: "turn_ended", ...end }));
  await send(page, { type: "turn", sessionId: SESSION, running: false, ...end });
  if (answer) await send(page, { type: "forkPoint", sessionId: SESSION, messageId });
  await page.waitForFunction(() => document.getElementById("app")?.dataset.running === "false");
}

const text = (t: string) => [{ type: "text", text: t }];
const HISTORY = [
  { id: "u1", role: "user", createdAt: "t", parts: text("one") },
  { id: "a1", role: "assistant", createdAt: "t", parts: text("First answer.") },
  { id: "u2", role: "user", createdAt: "t", parts: text("two") },
  { id: "a2", role: "assistant", createdAt: "t", parts: text("Half an") },
  { id: "u3", role: "user", createdAt: "t", parts: text("three") },
  { id: "a3", role: "assistant", createdAt: "t", parts: text("Step one.") },
  {
    id: "c1",
    role: "system",
    createdAt: "t",
    parts: [{ type: "compaction", compactionId: "cmp-1", trigger: "auto", tokensBefore: 91_000, tokensAfter: 12_400 }],
  },
  { id: "u4", role: "user", createdAt: "t", parts: text("four") },
];
const TURNS = [
  { afterMessageId: "a1", stopReason: "end_turn", createdAt: "t" },
  { afterMessageId: "a2", stopReason: "cancelled", createdAt: "t" },
  { afterMessageId: "a3", stopReason: "max_steps", createdAt: "t" },
  { afterMessageId: "u4", stopReason: "error", error: RATE_LIMIT, createdAt: "t" },
];

describe("a reopened session", () => {
  it("shows each turn's end, the compaction's figures and Retry on the last failure, as live", async () => {
    const live = await sidebar();
    await turn(live, "one", "First answer.", { stopReason: "end_turn" }, "a1");
    await turn(live, "two", "Half an", { stopReason: "cancelled" }, "a2");
    await turn(live, "three", "Step one.", { stopReason: "max_steps" }, "a3");
    await send(live, update({ kind: "compaction_started", trigger: "auto", strategy: "native" }));
    await send(live, {
      ...update({
        kind: "compaction_finished",
        compaction: {
          compactionId: "cmp-1", sessionId: SESSION, trigger: "auto", strategy: "native", tokensBefore: 91_000,
          tokensAfter: 12_400, firstKeptMessageId: null, ledger: {}, createdAt: "t", notes: [], undone: false, committed: true,
        },
      }),
    });
    await turn(live, "four", undefined, { stopReason: "error", error: RATE_LIMIT }, "u4");
    const seen = await shown(live);
    expect(seen.filter((s) => !s.startsWith("assistant") && !s.startsWith("user"))).toEqual([
      "fork-point: Fork from here",
      "stop-cancelled: Stopped",
      "fork-point: Fork from here",
      "stop-max_steps: The agent stopped after its step limit. Send “continue” to let it go on.",
      "fork-point: Fork from here",
      expect.stringMatching(/^compaction: Context compacted: 91,000 → 12,400 tokens in use \(automatic/),
      expect.stringMatching(/^error: .* \[Retry\]$/),
    ]);
    await live.close();

    const reopened = await sidebar();
    await send(reopened, { type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false, messages: HISTORY, turns: TURNS });
    await reopened.waitForSelector("[data-kind=error]");
    expect(await shown(reopened)).toEqual(seen);
    await reopened.close();
  });

  it("shows the retry lines and a compaction that gained nothing where they were live (issue 50, point 9)", async () => {
    const retry = (attempt: number) => ({
      kind: "model_retry", attempt, maxRetries: 1, delaySeconds: 0, status: 429, reason: "returned HTTP 429: Rate limit reached",
    });
    const noop = {
      kind: "compaction_finished",
      compaction: {
        compactionId: "", sessionId: SESSION, trigger: "manual", strategy: "native", tokensBefore: 487, tokensAfter: 487,
        firstKeptMessageId: null, ledger: {}, createdAt: "t", notes: ["nothing to compact: the view is 487 tokens"], undone: false,
        committed: false,
      },
    };
    const live = await sidebar();
    await send(live, { type: "userMessage", sessionId: SESSION, text: "one" });
    await send(live, update(retry(1)));
    await send(live, update({ kind: "agent_message_chunk", text: "After one retry." }));
    await send(live, update({ kind: "turn_ended", stopReason: "end_turn" }));
    await send(live, { type: "turn", sessionId: SESSION, running: false, stopReason: "end_turn" });
    await send(live, { type: "forkPoint", sessionId: SESSION, messageId: "a1" });
    await send(live, { type: "userMessage", sessionId: SESSION, text: "two" });
    await send(live, update(retry(1)));
    await send(live, update({ kind: "turn_ended", stopReason: "error", error: RATE_LIMIT }));
    await send(live, { type: "turn", sessionId: SESSION, running: false, stopReason: "error", error: RATE_LIMIT });
    await send(live, update(noop));
    await live.waitForSelector("[data-kind=compaction]");
    const seen = await shown(live);
    expect(seen.filter((s) => /^(retry|compaction|error)/.test(s))).toEqual([
      "retry: Rate limited (HTTP 429): Retry 1 of 1 sent",
      "retry: Rate limited (HTTP 429): Retry 1 of 1 sent",
      expect.stringMatching(/^error: /),
      "compaction: Context compacted: 487 → 487 tokens in use",
    ]);
    await live.close();

    const reopened = await sidebar();
    await send(reopened, {
      type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false,
      messages: [
        { id: "u1", role: "user", createdAt: "t", parts: text("one") },
        { id: "a1", role: "assistant", createdAt: "t", parts: text("After one retry.") },
        { id: "u2", role: "user", createdAt: "t", parts: text("two") },
      ],
      turns: [
        { afterMessageId: "a1", stopReason: "end_turn", createdAt: "2026-12-07T10:00:01.000Z" },
        { afterMessageId: "u2", stopReason: "error", error: RATE_LIMIT, createdAt: "2026-12-07T10:00:02.500Z" },
      ],
      notices: [
        { afterMessageId: "u1", update: retry(1), createdAt: "2026-12-07T10:00:00.500Z" },
        { afterMessageId: "u2", update: retry(1), createdAt: "2026-12-07T10:00:02.000Z" },
        { afterMessageId: "u2", update: noop, createdAt: "2026-12-07T10:00:03.000Z" },
      ],
    });
    await reopened.waitForSelector("[data-kind=compaction]");
    expect(await shown(reopened)).toEqual(seen);
    expect(await reopened.locator("[data-kind=retry]").first().getAttribute("title")).toBe("returned HTTP 429: Rate limit reached");
    await reopened.close();
  });

  it("shows a compaction's score under its figures", async () => {
    const live = await sidebar();
    await send(live, {
      ...update({
        kind: "compaction_finished",
        compaction: {
          compactionId: "cmp-2", sessionId: SESSION, trigger: "manual", strategy: "native", tokensBefore: 40_000,
          tokensAfter: 6_100, firstKeptMessageId: null, ledger: {}, createdAt: "t", notes: [], undone: false, committed: true,
          score: { facts: 430, inView: 38, oneRecall: 392, viewTokens: 6_100, window: 16_384 },
        },
      }),
    });
    const marker = live.locator("[data-kind=compaction]");
    await marker.waitFor();
    const words = "38 of 430 tracked facts in view, 392 one recall away; view 6,100 of 16,384 tokens (37%)";
    expect(await marker.textContent()).toContain(words);
    await live.close();

    // Reopened, the marker has its record's score too (`baton/session/load` fills it).
    const reopened = await sidebar();
    const compaction = {
      type: "compaction", compactionId: "cmp-2", trigger: "manual", tokensBefore: 40_000, tokensAfter: 6_100,
      score: { facts: 430, inView: 38, oneRecall: 392, viewTokens: 6_100, window: 16_384 },
    };
    await send(reopened, {
      type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false,
      messages: [{ id: "c2", role: "system", createdAt: "t", parts: [compaction] }],
    });
    const again = reopened.locator("[data-kind=compaction]");
    await again.waitFor();
    expect(await again.textContent()).toContain(words);
    await reopened.close();
  });

  it("without turn ends (an older server) it still shows the messages; a failure sent again offers no Retry", async () => {
    const page = await sidebar();
    const reverted = HISTORY.map((m) => (m.id === "u4" ? { ...m, reverted: true } : m));
    await send(page, {
      type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false,
      messages: [...reverted, { id: "u5", role: "user", createdAt: "t", parts: text("four") }],
      turns: TURNS,
    });
    await page.waitForSelector("[data-kind=error]", { state: "attached" });
    // Sent again: its error card, without Retry, is folded with the attempt it ended.
    expect(await page.locator("[data-kind=error]").count()).toBe(1);
    expect(await page.locator("[data-error-action=retry]").count()).toBe(0);
    expect(await page.locator(".earlier-attempt [data-kind=error].resolved").count()).toBe(1);
    await send(page, { type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false, messages: HISTORY });
    await page.waitForFunction(() => document.querySelectorAll("[data-kind=error]").length === 0);
    expect((await shown(page)).filter((s) => s.startsWith("user"))).toHaveLength(4);
    expect(await page.locator(".earlier-attempt").count()).toBe(0);
    await page.close();
  });

  it("opens scrolled to the latest message, after the markdown has rendered, also when loaded hidden", async () => {
    const page = await sidebar();
    // After Reload Window the history can arrive while the view has no layout yet.
    await page.evaluate(() => {
      document.body.style.display = "none";
    });
    const long = Array.from({ length: 40 }, (_, i) => [
      { id: `u${i}`, role: "user", createdAt: "t", parts: text(`question ${i}`) },
      { id: `a${i}`, role: "assistant", createdAt: "t", parts: text(`## Answer ${i}\n\n${"- a point\n".repeat(8)}\n\`\`\`ts\nconst x = ${i};\n\`\`\``) },
    ]).flat();
    await send(page, { type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false, messages: long });
    await page.waitForTimeout(200);
    await page.evaluate(() => {
      document.body.style.display = "";
    });
    await page.waitForSelector("text=Answer 39");
    await page.waitForTimeout(200);
    const gap = await page.evaluate(() => {
      const root = document.getElementById("transcript")!;
      return root.scrollHeight - root.scrollTop - root.clientHeight;
    });
    expect(gap).toBeLessThan(4);
    expect(await page.locator("text=Answer 39").isVisible()).toBe(true);
    await page.close();
  });

  it("switching back to a session opens at its latest message, after reading elsewhere scrolled up", async () => {
    const page = await sidebar();
    const session = (prefix: string) =>
      Array.from({ length: 30 }, (_, i) => [
        { id: `${prefix}u${i}`, role: "user", createdAt: "t", parts: text(`${prefix} question ${i}`) },
        { id: `${prefix}a${i}`, role: "assistant", createdAt: "t", parts: text(`## ${prefix} answer ${i}\n\n${"- a point\n".repeat(6)}\n\`\`\`ts\nconst x = ${i};\n\`\`\``) },
      ]).flat();
    const gap = () =>
      page.evaluate(() => {
        const root = document.getElementById("transcript")!;
        return root.scrollHeight - root.scrollTop - root.clientHeight;
      });
    const open = async (sessionId: string, prefix: string) => {
      await send(page, { type: "history", sessionId, title: prefix, mode: "build", running: false, messages: session(prefix) });
      await page.waitForSelector(`text=${prefix} answer 29`);
      await page.waitForTimeout(300);
    };
    await open(SESSION, "First");
    // Read something earlier in it, then in another session, then come back.
    await page.locator("#transcript").hover();
    await page.mouse.wheel(0, -1500);
    await page.waitForTimeout(200);
    expect(await gap()).toBeGreaterThan(100);
    await open("s-2", "Second");
    await page.mouse.wheel(0, -800);
    await page.waitForTimeout(200);
    await open(SESSION, "First");
    expect(await gap()).toBeLessThan(4);
    expect(await page.locator("text=First answer 29").isVisible()).toBe(true);
    await page.close();
  });

  it("keeps the end in view when a shown entry grows later (a code block or an element laid out after the load)", async () => {
    const page = await sidebar();
    const long = Array.from({ length: 30 }, (_, i) => [
      { id: `u${i}`, role: "user", createdAt: "t", parts: text(`question ${i}`) },
      { id: `a${i}`, role: "assistant", createdAt: "t", parts: text(`Answer ${i}: ${"words ".repeat(30)}`) },
    ]).flat();
    await send(page, { type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false, messages: long });
    await page.waitForSelector("text=Answer 29");
    await page.waitForTimeout(100);
    // No scroll event and no new entry: the last entries only get taller.
    await page.evaluate(() => {
      for (const node of Array.from(document.querySelectorAll<HTMLElement>("#transcript > *")).slice(-3)) {
        node.style.minHeight = "400px";
      }
    });
    await page.waitForTimeout(200);
    const gap = await page.evaluate(() => {
      const root = document.getElementById("transcript")!;
      return root.scrollHeight - root.scrollTop - root.clientHeight;
    });
    expect(gap).toBeLessThan(4);
    await page.close();
  });

  it("stays where the person scrolled up to while entries below grow and stream; what they send brings the end back", async () => {
    const page = await sidebar();
    const long = Array.from({ length: 30 }, (_, i) => [
      { id: `u${i}`, role: "user", createdAt: "t", parts: text(`question ${i}`) },
      { id: `a${i}`, role: "assistant", createdAt: "t", parts: text(`Answer ${i}: ${"words ".repeat(30)}`) },
    ]).flat();
    await send(page, { type: "history", sessionId: SESSION, title: "Reopen me", mode: "build", running: false, messages: long });
    await page.waitForSelector("text=Answer 29");
    await page.waitForTimeout(100);
    await page.locator("#transcript").hover();
    await page.mouse.wheel(0, -600);
    await page.waitForTimeout(200);
    const top = await page.evaluate(() => document.getElementById("transcript")!.scrollTop);
    await page.evaluate(() => {
      const last = document.querySelector<HTMLElement>("#transcript > :last-child")!;
      last.style.minHeight = "400px";
    });
    await send(page, update({ kind: "agent_message_chunk", content: { type: "text", text: "More words. ".repeat(40) } }));
    await page.waitForTimeout(200);
    expect(await page.evaluate(() => document.getElementById("transcript")!.scrollTop)).toBe(top);
    // What the person sends brings the end back, and the answer is followed again.
    await send(page, { type: "userMessage", sessionId: SESSION, text: "one more" });
    await send(page, update({ kind: "agent_message_chunk", content: { type: "text", text: "An answer. ".repeat(40) } }));
    await page.waitForTimeout(200);
    const gap = await page.evaluate(() => {
      const root = document.getElementById("transcript")!;
      return root.scrollHeight - root.scrollTop - root.clientHeight;
    });
    expect(gap).toBeLessThan(4);
    await page.close();
  });
});
