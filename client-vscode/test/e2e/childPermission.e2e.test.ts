// A child's permission card at a 300 px side bar, in real VS Code (code-server), issue 50
// point 4: once it says "Asked by the build child" and "you edited" (the person typed in
// the diff editor's proposal), Reject is still in view and on top, and it works.
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dragSideBar, runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";
const NARROW = 300;

describe.skipIf(skip)("A child's permission card at 300 px (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame;
  let failed = false;

  beforeAll(async () => {
    page = await openWorkbench(bench);
    await runCommand(page, "Baton: Focus the Prompt Box");
    sidebar = await webviewFrame(page, "#app", 120_000);
    await sidebar.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
  }, 300_000);

  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-child-permission-300px.png", failed, sidebar });
  });

  it("Reject stays in view on an edited child card", async () => {
    const width = await dragSideBar(page, NARROW);
    expect(Math.abs(width - NARROW), `side bar ${width} px`).toBeLessThanOrEqual(12);
    await typeInto(page, sidebar, "#prompt", "HAND A WRITE to a child");
    await sidebar.locator("#send").click();
    const card = sidebar.locator(".permission[data-tool=write]");
    await card.locator(".permission-asker").waitFor({ timeout: 90_000 });
    await page.locator(".tabs-container .tab", { hasText: "README.md" }).first().waitFor({ timeout: 60_000 });
    await page.locator(".monaco-diff-editor .editor.modified .view-lines").first().click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("Edited by the person.", { delay: 5 });
    await card.locator(".permission-edited").waitFor({ timeout: 30_000 });
    const reject = card.locator("button[data-option-kind=reject_once]");
    const onTop = await reject.evaluate((node) => {
      const box = node.getBoundingClientRect();
      const at = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      return { inView: box.top >= 0 && box.bottom <= window.innerHeight + 1 && box.right <= window.innerWidth + 1, onTop: at !== null && node.contains(at) };
    });
    expect(onTop).toEqual({ inView: true, onTop: true });
    await reject.click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "Handed over." }).waitFor({ timeout: 90_000 });
  }, 300_000);
});
