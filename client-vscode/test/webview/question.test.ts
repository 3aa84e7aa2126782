// The question card (issue 49): the agent's question with its options, answered by a
// click or a number key; several ticked and sent with Enter; own words; Escape skips.
// The model's words go in as text.
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

const QUESTION = {
  type: "question",
  requestId: "question-1",
  sessionId: "s-1",
  question: "Which store <b>now</b>?",
  options: [
    { label: "SQLite", description: "one file" },
    { label: "Postgres" },
    { label: "Both" },
  ],
  multiple: false,
  allowText: false,
};

async function sidebar(): Promise<Page> {
  return openSidebarSession(browser, { width: 320, provider: "openai", model: "gpt-5" });
}

describe("question card", () => {
  it("shows the question as text and answers with the clicked option", async () => {
    const page = await sidebar();
    await send(page, QUESTION);
    const card = page.locator(".question");
    await expect(card.locator(".question-text").textContent()).resolves.toBe("Which store <b>now</b>?");
    await expect(card.locator("b").count()).resolves.toBe(0);
    await expect(card.locator(".question-description").textContent()).resolves.toBe("one file");
    await card.getByRole("button", { name: /Postgres/ }).click();
    const answer = await waitForPosted(page, "questionAnswer");
    expect(answer).toEqual({ type: "questionAnswer", requestId: "question-1", labels: ["Postgres"] });
    await send(page, { type: "questionClosed", requestId: "question-1" });
    await expect(page.locator(".question").count()).resolves.toBe(0);
    await page.close();
  });

  it("answers by number key", async () => {
    const page = await sidebar();
    await send(page, QUESTION);
    await page.keyboard.press("3");
    const answer = await waitForPosted(page, "questionAnswer");
    expect(answer.labels).toEqual(["Both"]);
    await page.close();
  });

  it("ticks several with numbers and sends them, with the person's own words, on Enter", async () => {
    const page = await sidebar();
    await send(page, { ...QUESTION, multiple: true, allowText: true });
    await page.keyboard.press("1");
    await page.keyboard.press("2");
    await page.keyboard.press("2");
    await page.keyboard.press("3");
    expect((await posted(page)).some((m) => m.type === "questionAnswer")).toBe(false);
    await page.locator(".question-own-words").fill("and a cache");
    await page.keyboard.press("Enter");
    const answer = await waitForPosted(page, "questionAnswer");
    expect(answer).toEqual({ type: "questionAnswer", requestId: "question-1", labels: ["SQLite", "Both"], text: "and a cache" });
    await page.close();
  });

  it("Escape skips the question", async () => {
    const page = await sidebar();
    await send(page, QUESTION);
    await page.keyboard.press("Escape");
    const answer = await waitForPosted(page, "questionAnswer");
    expect(answer).toEqual({ type: "questionAnswer", requestId: "question-1", labels: [], dismissed: true });
    await page.close();
  });
});
