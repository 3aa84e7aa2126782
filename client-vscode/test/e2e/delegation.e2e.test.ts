// Delegation in real VS Code (code-server) with the real server and the scripted fake
// model: the model's `task` call starts an `explore` child; the child's card shows
// under the call, live (running, the tool it uses); its transcript opens read-only;
// Stop cancels that child only, and the parent goes on with a `cancelled` result.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SCREENSHOTS } from "../webview/harness";
import { runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";

describe.skipIf(skip)("Delegation in real VS Code (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame | undefined;

  beforeAll(async () => {
    page = await openWorkbench(bench, { files: { "one.txt": "1\n", "two.txt": "2\n" } });
  }, 180_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-delegation.png", failed, sidebar });
  });

  it("a child's card under its task call shows it running; Stop cancels the child and the parent gets cancelled", async () => {
    await runCommand(page, "Baton: Focus the Prompt Box");
    const frame = await webviewFrame(page, "#app", 120_000);
    sidebar = frame;
    await frame.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
    await typeInto(page, frame, "#prompt", "PLEASE DELEGATE a slow count");
    await frame.locator("#send").click();

    // The task call, and the child's card right under it, running, with the tool it uses.
    const call = frame.locator(".tool-card[data-tool=task]");
    await call.waitFor({ timeout: 90_000 });
    expect(await call.locator(".tool-title").innerText()).toBe("Delegate to explore: Count the files slowly");
    const card = frame.locator(".tool-card[data-tool=task] + .child-card");
    await card.waitFor({ timeout: 60_000 });
    expect(await card.locator(".child-agent").innerText()).toBe("explore");
    expect(await card.locator(".child-description").innerText()).toBe("Count the files slowly");
    expect(await card.getAttribute("data-status")).toBe("running");
    await frame.waitForFunction(
      () => document.querySelector(".child-card .child-tool")?.textContent === "Using glob",
      undefined,
      { timeout: 60_000 },
    );
    expect(await card.locator(".child-status").innerText()).toBe("running");
    // The child's stream is stalled: it stays running, and so does the parent's turn.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await card.getAttribute("data-status")).toBe("running");
    expect(await frame.locator("#app").getAttribute("data-running")).toBe("true");
    const childId = await card.getAttribute("data-child-id");
    expect(childId).toBeTruthy();

    // Its transcript opens read-only in an editor: the task it was given, the tool it used.
    await card.locator(".child-open").click();
    await page.locator(".monaco-editor .view-lines", { hasText: "Child session: explore: Count the files slowly" }).first().waitFor({ timeout: 30_000 });
    await page.locator(".monaco-editor .view-lines", { hasText: "SLOW CHILD: count the files in the workspace." }).first().waitFor({ timeout: 30_000 });
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "vscode-child-running.png") });

    // Stop on the card: that child only.
    await card.locator(".child-stop").click();
    await frame.waitForFunction(() => document.querySelector(".child-card")?.getAttribute("data-status") === "cancelled", undefined, {
      timeout: 60_000,
    });
    expect(await card.locator(".child-status").innerText()).toBe("stopped");
    expect(await card.locator(".child-stop").isVisible()).toBe(false);
    // The parent goes on: its model reads a `cancelled` result and answers.
    await frame.locator("[data-kind=assistant]", { hasText: "The child's result says: cancelled." }).waitFor({ timeout: 60_000 });
    await frame.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    expect(await frame.locator(".marker.stop-cancelled").count()).toBe(0);
    expect(await call.getAttribute("data-status")).toBe("completed");
    // The child is not a session of the picker: its card is how it is reached.
    expect(await frame.locator(`#session-select option[value="${childId}"]`).count()).toBe(0);
  }, 300_000);
});
