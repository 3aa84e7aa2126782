// The transcript shows people's words (issue 50, point 5): a child's result as its card's
// summary and its task call's body in words, never Baton's `<baton:task-result>`
// framing; a child the person stopped reads "stopped" on the call and on the card; a
// step's `code` without raw backticks; a write the person edited without "your proposal".
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

const PARENT = "s-parent";
const CHILD = "s-child-1";
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: PARENT, update: u });
const child = (fields: Record<string, unknown>) => ({
  kind: "child", callId: "call-task-1", childId: CHILD, agent: "build", description: "Add `parse_args` to `cli.py`",
  status: "running", currentTool: null, tokens: 0, step: { index: 1, total: 2 }, ...fields,
});

function result(status: string, final: string): string {
  return [
    `<baton:task-result agent="build" child="${CHILD}" status="${status}">`,
    `status: ${status}`,
    `child session: ${CHILD}`,
    "tokens: 4,210",
    "files changed:",
    "- created `src/cli.py`",
    "- modified `README.md`",
    "commands run (exit codes, oldest first):",
    "- `pytest -q` → 0",
    final ? "final message:" : "final message: none",
    ...(final ? final.split("\n").map((l) => `  ${l}`) : []),
    "</baton:task-result>",
  ].join("\n");
}

async function sidebar(): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await page.setViewportSize({ width: 320, height: 800 });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, { type: "sessions", activeSessionId: PARENT, sessions: [{ sessionId: PARENT, title: "Build", mode: "build", createdAt: "t", updatedAt: "t" }] });
  await send(page, { type: "history", sessionId: PARENT, title: "Build", mode: "build", running: false, messages: [] });
  await send(page, { type: "userMessage", sessionId: PARENT, text: "build it" });
  await send(page, update({ kind: "tool_call", toolCallId: "call-task-1", name: "task", input: { agent: "build", description: "Add `parse_args` to `cli.py`", prompt: "p" }, status: "pending" }));
  await send(page, update({ kind: "tool_call_update", toolCallId: "call-task-1", status: "in_progress" }));
  await send(page, update(child({})));
  await page.locator(".child-card").waitFor();
  return page;
}

describe("a child's result in people's words", () => {
  it("the task call and the child's card say the result; no framing anywhere", async () => {
    const page = await sidebar();
    // The step's label: code as code, no backticks.
    const description = page.locator(".child-card .child-description");
    expect(await description.innerText()).toBe("Add parse_args to cli.py");
    expect(await description.locator("code").allInnerTexts()).toEqual(["parse_args", "cli.py"]);
    await send(page, update(child({ status: "done", tokens: 4210 })));
    await send(page, update({ kind: "tool_call_update", toolCallId: "call-task-1", status: "completed", output: result("done", "Added parse_args.\nTests pass.") }));
    const text = await page.locator("#transcript").innerText();
    expect(text).not.toContain("<baton:");
    expect(text).not.toContain("task-result");
    const summary = page.locator(".child-card .child-summary");
    expect(await summary.locator(".child-summary-facts").innerText()).toBe("2 files changed · 1 command run");
    expect(await summary.locator(".child-summary-answer").innerText()).toBe("Added parse_args.\nTests pass.");
    expect(await page.locator(".tool-card[data-tool=task] .tool-status").innerText()).toBe("done");
    const body = await page.locator(".tool-card[data-tool=task] .tool-output").textContent();
    expect(body).toBe("The build child finished.\nFiles changed:\n  created src/cli.py\n  modified README.md\nCommands run:\n  pytest -q → 0\n\nAdded parse_args.\nTests pass.");
    await page.close();
  });

  it("a child the person stopped reads 'stopped' on its task call and on its card, live and reopened", async () => {
    const page = await sidebar();
    await send(page, update(child({ status: "cancelled" })));
    await send(page, update({ kind: "tool_call_update", toolCallId: "call-task-1", status: "completed", output: result("cancelled", "") }));
    expect(await page.locator(".tool-card[data-tool=task] .tool-status").innerText()).toBe("stopped");
    expect(await page.locator(".child-card .child-status").innerText()).toBe("stopped");
    expect(await page.locator(".tool-card[data-tool=task] .tool-output").textContent()).toMatch(/^The build child was stopped\./);
    // Reopened: the same words from the stored result.
    await send(page, {
      type: "history", sessionId: PARENT, title: "Build", mode: "build", running: false,
      messages: [
        { id: "u1", role: "user", createdAt: "t", parts: [{ type: "text", text: "build it" }] },
        { id: "a1", role: "assistant", createdAt: "t", parts: [{ type: "tool_call", toolCallId: "call-task-1", name: "task", input: { agent: "build", description: "Add `parse_args`" }, status: "completed", output: result("cancelled", "") }] },
      ],
    });
    await page.locator(".child-card").waitFor();
    expect(await page.locator(".tool-card[data-tool=task] .tool-status").innerText()).toBe("stopped");
    expect(await page.locator(".child-card .child-status").innerText()).toBe("stopped");
    expect(await page.locator(".child-card .child-summary-facts").innerText()).toBe("2 files changed · 1 command run");
    expect(await page.locator("#transcript").innerText()).not.toContain("<baton:");
    await page.close();
  });

  it("a write the person edited reads 'with your edits', never 'your proposal'", async () => {
    const page = await sidebar();
    const output =
      "Wrote src/cli.py (12 lines) with the person's version: they changed your proposal before accepting it, so the file does not hold exactly what you proposed. " +
      "The differences (--- your proposal, +++ what src/cli.py now holds):\n--- proposed/src/cli.py\n+++ written/src/cli.py\n@@ -1 +1 @@\n-a\n+b\n" +
      "Take the file as it is now; do not re-apply what the person removed or changed.";
    await send(page, update({ kind: "tool_call", toolCallId: "w1", name: "write", input: { path: "src/cli.py", content: "a" }, status: "in_progress" }));
    await send(page, update({ kind: "tool_call_update", toolCallId: "w1", status: "completed", output }));
    const body = await page.locator(".tool-card[data-tool=write] .tool-output").textContent();
    expect(body).toContain("Wrote src/cli.py (12 lines) with your edits. The differences (--- the agent's proposal, +++ what src/cli.py now holds):");
    expect(body).not.toContain("your proposal");
    expect(body).not.toContain("do not re-apply");
    await page.close();
  });

  it("the child's transcript shows under its card in the sidebar's own rendering, and follows it live", async () => {
    const page = await sidebar();
    const card = page.locator(".child-card");
    await card.locator(".child-show").click();
    expect(await waitForPosted(page, "childHistory")).toEqual({ type: "childHistory", sessionId: CHILD });
    await send(page, {
      type: "childHistory",
      sessionId: CHILD,
      messages: [
        { id: "c1", role: "user", createdAt: "t", parts: [{ type: "text", text: "Add parse_args to cli.py" }] },
        { id: "c2", role: "assistant", createdAt: "t", parts: [{ type: "text", text: "Reading **cli.py** first." }, { type: "tool_call", toolCallId: "r1", name: "read", input: { path: "cli.py" }, status: "completed", output: "def main(): ..." }] },
      ],
    });
    const box = card.locator(".child-transcript");
    await box.locator("[data-kind=assistant]").first().waitFor();
    // Rendered as the sidebar renders: markdown, tool cards.
    expect(await box.locator("[data-kind=assistant] strong").innerText()).toBe("cli.py");
    expect(await box.locator(".tool-card[data-tool=read]").count()).toBe(1);
    // Live: the child's own stream lands under its card, not in the parent's transcript.
    await send(page, { type: "update", sessionId: CHILD, update: { kind: "agent_message_chunk", text: "Now writing the parser." } });
    await expect.poll(() => box.innerText()).toContain("Now writing the parser.");
    const outside = await page.evaluate(() =>
      Array.from(document.querySelectorAll("#transcript > [data-kind=assistant]")).map((n) => n.textContent ?? ""),
    );
    expect(outside.join(" ")).not.toContain("Now writing the parser.");
    await card.locator(".child-show").click();
    expect(await box.isHidden()).toBe(true);
    await page.close();
  });
});
