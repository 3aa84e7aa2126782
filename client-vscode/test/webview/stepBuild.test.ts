// Step builds that stay (issue 50, point 3): a build's child cards, their results and the
// line that says how the build ended, live and again after the session is reopened
// (Reload Window), from the one note per step the parent keeps.
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

const PARENT = "s-parent";
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: PARENT, update: u });
const note = (id: string, body: string) => ({ id, role: "system", createdAt: "t", parts: [{ type: "text", text: `<baton:step-result>\n${body}\n</baton:step-result>` }] });

async function sidebar(messages: unknown[], running = false): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await page.setViewportSize({ width: 320, height: 800 });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, { type: "sessions", activeSessionId: PARENT, sessions: [{ sessionId: PARENT, title: "Build", mode: "build", createdAt: "t", updatedAt: "t" }] });
  await send(page, { type: "history", sessionId: PARENT, title: "Build", mode: "build", running, messages });
  return page;
}

const approved = { id: "u1", role: "user", createdAt: "t", parts: [{ type: "text", text: "build it" }] };

describe("a step-by-step build", () => {
  it("reopened: each step's card with its result, in order, and how the build ended", async () => {
    const page = await sidebar([
      approved,
      note("n1", "step 1 of 2 (Write `hello.txt`): done; child ses_c1; Wrote hello.txt with the greeting."),
      note("n2", "step 2 of 2 (Check it): done; child ses_c2; The check passes."),
    ]);
    const cards = page.locator(".child-card");
    await cards.nth(1).waitFor();
    expect(await cards.count()).toBe(2);
    expect(await cards.locator(".child-step").allInnerTexts()).toEqual(["Step 1 of 2", "Step 2 of 2"]);
    expect(await cards.locator(".child-description").allInnerTexts()).toEqual(["Write hello.txt", "Check it"]);
    expect(await cards.locator(".child-status").allInnerTexts()).toEqual(["done", "done"]);
    expect(await cards.locator(".child-summary-answer").allInnerTexts()).toEqual(["Wrote hello.txt with the greeting.", "The check passes."]);
    const ended = page.locator("[data-kind=build-ended]");
    expect(await ended.locator(".build-ended-text").innerText()).toBe("The step-by-step build ended: all 2 steps built.");
    // Right under the last step's card.
    expect(await ended.evaluate((node) => node.previousElementSibling?.getAttribute("data-child-id"))).toBe("ses_c2");
    expect(await page.locator("#transcript").innerText()).not.toContain("<baton:");
    // Undo: from one step (that step and the later ones), or the whole build.
    await cards.nth(1).locator(".child-undo").click();
    expect(await waitForPosted(page, "revert")).toEqual({ type: "revert", sessionId: PARENT, messageId: "n2" });
    await ended.locator(".build-undo").click();
    const reverts = (await posted(page)).filter((m) => m.type === "revert");
    expect(reverts.at(-1)).toEqual({ type: "revert", sessionId: PARENT, messageId: "n1" });
    await page.close();
  });

  it("a build stopped at a step says so, live and reopened", async () => {
    const page = await sidebar([approved]);
    await send(page, { type: "userMessage", sessionId: PARENT, text: "go" });
    for (const [index, status] of [[1, "done"], [2, "cancelled"]] as const) {
      await send(page, update({ kind: "child", callId: `step-${index}`, childId: `ses_c${index}`, agent: "build", description: `Step ${index}`, status: "running", tokens: 0, step: { index, total: 3 } }));
      await send(page, update({ kind: "child", callId: `step-${index}`, childId: `ses_c${index}`, agent: "build", description: `Step ${index}`, status, tokens: 10, step: { index, total: 3 } }));
    }
    await send(page, update({ kind: "turn_ended", stopReason: "cancelled" }));
    const ended = page.locator("[data-kind=build-ended]");
    await ended.waitFor();
    expect(await ended.locator(".build-ended-text").innerText()).toBe("The step-by-step build was stopped at step 2 of 3.");
    expect(await page.locator(".child-card .child-status").allInnerTexts()).toEqual(["done", "stopped"]);
    // The build ended live: the sidebar reloads the session, so its cards know their notes.
    expect(await waitForPosted(page, "selectSession")).toEqual({ type: "selectSession", sessionId: PARENT });
    await page.close();

    const reopened = await sidebar([approved, note("n1", "step 1 of 3 (One): done; child ses_c1; ok"), note("n2", "step 2 of 3 (Two): cancelled; child ses_c2; the child ended cancelled")]);
    await reopened.locator("[data-kind=build-ended]").waitFor();
    expect(await reopened.locator("[data-kind=build-ended] .build-ended-text").innerText()).toBe("The step-by-step build was stopped at step 2 of 3.");
    await reopened.close();
  });
});
