// The sidebar as a person meets it every day, in real VS Code (code-server) with the real
// server and the scripted fake model (issue 39): the composer at a 300 px sidebar (point 7);
// a revised plan marks what changed in the one panel the plan has, titled with its session,
// and the sidebar's plan line is current once the build ends (point 9); and after Reload
// Window the transcript shows what it showed live, the compaction's figures included,
// scrolled to the latest (point 1); and a build's write opens its diff beside the plan,
// not over it, and a proposal the person edits before accepting is written as they left it
// (point 2).
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dragSideBar, runCommand, typeInto, webviewFrame } from "./codeServer";
import { POLITE_FILES } from "./politeWorkspace";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";
const NARROW = 300;

describe.skipIf(skip)("The sidebar every day in real VS Code (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame;

  beforeAll(async () => {
    page = await openWorkbench(bench, { files: POLITE_FILES });
  }, 180_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-everyday.png", failed, sidebar });
  });

  async function openSidebar(): Promise<Frame> {
    await runCommand(page, "Baton: Focus the Prompt Box");
    const frame = await webviewFrame(page, "#app", 120_000);
    await frame.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
    return frame;
  }

  async function prompt(text: string): Promise<void> {
    await typeInto(page, sidebar, "#prompt", text);
    await sidebar.locator("#send").click();
  }

  it("at a 300 px side bar the composer shows Build, Plan and Send whole and keeps the rest in the … menu", async () => {
    sidebar = await openSidebar();
    const width = await dragSideBar(page, NARROW);
    expect(Math.abs(width - NARROW), `side bar ${width} px`).toBeLessThanOrEqual(12);
    await sidebar.waitForFunction((w) => document.documentElement.clientWidth <= w, NARROW, { timeout: 10_000 });
    const controls = await sidebar.evaluate(() => {
      const bar = document.querySelector<HTMLElement>(".composer-bar")!;
      const edge = bar.getBoundingClientRect();
      return {
        overflowing: bar.scrollWidth > bar.clientWidth + 1,
        shown: Array.from(bar.querySelectorAll<HTMLElement>("#mode-build, #mode-plan, #pick-model, #composer-more, #send"))
          .filter((node) => node.offsetParent !== null)
          .map((node) => {
            const r = node.getBoundingClientRect();
            return {
              id: node.id,
              text: node.innerText.trim(),
              whole: node.scrollWidth <= node.clientWidth + 1,
              inside: r.left >= edge.left - 0.5 && r.right <= edge.right + 0.5,
            };
          }),
      };
    });
    expect(controls.overflowing).toBe(false);
    for (const control of controls.shown) expect(control, control.id).toMatchObject({ whole: true, inside: true });
    const byId = Object.fromEntries(controls.shown.map((c) => [c.id, c.text]));
    expect(byId["mode-build"]).toBe("Build");
    expect(byId["mode-plan"]).toBe("Plan");
    expect(byId["send"]).toBe("Send");
    // What the bar has no room for is one click away.
    await sidebar.locator("#composer-more").click();
    const items = sidebar.locator("#composer-menu [role=menuitem]");
    await items.first().waitFor({ state: "visible", timeout: 10_000 });
    expect(await items.count()).toBeGreaterThan(0);
    await page.keyboard.press("Escape");
    await sidebar.locator("#composer-menu").waitFor({ state: "hidden", timeout: 10_000 });
  }, 300_000);

  it("a revised plan marks its new step in the plan's one panel, titled with its session; after the build the plan line says approved, not building", async () => {
    await sidebar.locator("#mode-plan").click();
    await sidebar.waitForSelector('#app[data-mode="plan"]', { timeout: 30_000 });
    await prompt("PLEASE PLAN a greeting");
    let plan = await webviewFrame(page, "#plan-app", 90_000);
    await plan.waitForSelector('#plan-app[data-status="awaiting_approval"]', { timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    // The first version is new to the panel: nothing is marked as changed.
    expect(await plan.locator("#plan-content .plan-changed").count()).toBe(0);
    const session = (await sidebar.locator("#session-select option:checked").innerText()).trim();
    const tabs = page.locator(".tabs-container .tab", { hasText: "Plan:" });
    expect(await tabs.count()).toBe(1);
    expect(await tabs.first().innerText()).toContain(session);

    await plan.locator("#request-changes-toggle").click();
    await typeInto(page, plan, "#feedback", "PLEASE REVISE: it should also say it aloud");
    await plan.locator("#send-feedback").click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "The revised plan is ready for your review." }).waitFor({ timeout: 90_000 });
    plan = await webviewFrame(page, "#plan-app", 30_000);
    await plan.waitForFunction(() => document.querySelectorAll("li.step").length === 3, undefined, { timeout: 60_000 });
    // Against the version the person saw, only the added step is marked.
    const changed = plan.locator("#plan-content .plan-changed");
    await changed.first().waitFor({ timeout: 30_000 });
    expect((await changed.allInnerTexts()).map((t) => t.trim())).toEqual(["Say it aloud"]);
    // Still one panel for the plan, not a second column with the same title.
    expect(await page.locator(".tabs-container .tab", { hasText: "Plan:" }).count()).toBe(1);

    await plan.waitForFunction(() => !document.getElementById("approve")?.hasAttribute("disabled"), undefined, { timeout: 60_000 });
    await plan.locator("#approve").click();
    await sidebar.waitForSelector('#app[data-mode="build"]', { timeout: 60_000 });
    await sidebar.locator("[data-kind=assistant]", { hasText: "Building from the approved plan." }).waitFor({ timeout: 90_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    await sidebar.waitForFunction(() => (document.getElementById("plan-line")?.textContent ?? "").includes("1/3 done"), undefined, { timeout: 30_000 });
    const line = await sidebar.locator("#plan-line").innerText();
    expect(line).toContain("approved");
    expect(line).not.toContain("building");
  }, 300_000);

  it("after Reload Window the transcript shows what it showed live, the compaction's figures too, scrolled to the latest", async () => {
    await prompt("SHOW CODE for a greeting");
    await sidebar.locator("[data-kind=assistant]", { hasText: "Call it as" }).waitFor({ timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
    await runCommand(page, "Baton: Compact Session");
    const marker = sidebar.locator(".marker.compaction");
    await marker.first().waitFor({ timeout: 90_000 });
    await prompt("Say hello once more");
    await sidebar.locator("[data-kind=assistant]", { hasText: "Hello from the fake model." }).last().waitFor({ timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });

    const shown = () =>
      sidebar.evaluate(() => {
        const root = document.getElementById("transcript")!;
        return {
          items: Array.from(root.querySelectorAll<HTMLElement>("[data-kind=user], [data-kind=assistant], .marker.compaction")).map(
            (node) => `${node.dataset.kind ?? "compaction"}: ${node.innerText.trim().replace(/\s+/g, " ")}`,
          ),
          atEnd: root.scrollHeight - root.scrollTop - root.clientHeight < 24,
          geometry: [root.scrollHeight, root.scrollTop, root.clientHeight],
        };
      });
    const live = await shown();
    expect(live.items.at(-1)).toContain("Hello from the fake model.");
    expect(live.items.filter((item) => item.startsWith("compaction:"))[0]).toMatch(/Context compacted: [\d,]+ → [\d,]+ tokens in use/);

    await runCommand(page, "Developer: Reload Window");
    await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    // The old frame is gone with the window: wait for the new sidebar's transcript to fill.
    await page.waitForTimeout(2_000);
    sidebar = await openSidebar();
    await sidebar.waitForFunction(
      (n) => document.querySelectorAll("#transcript [data-kind=user], #transcript [data-kind=assistant]").length >= n,
      live.items.filter((item) => !item.startsWith("compaction:")).length,
      { timeout: 60_000 },
    );
    await page.waitForTimeout(500);
    const reopened = await shown();
    expect(reopened.items).toEqual(live.items);
    expect(reopened.atEnd, JSON.stringify(reopened.geometry)).toBe(true);
  }, 300_000);

  it("during a plan's build the write's diff opens beside the plan panel, which stays in view", async () => {
    await runCommand(page, "Baton: New Session");
    await sidebar.waitForFunction(() => document.getElementById("plan-line")?.hidden === true, undefined, { timeout: 30_000 });
    await sidebar.locator("#mode-plan").click();
    await sidebar.waitForSelector('#app[data-mode="plan"]', { timeout: 30_000 });
    await prompt("Make greet() say hello politely, and check it with the tests");
    const plan = await webviewFrame(page, "#plan-app", 90_000);
    await plan.waitForSelector('#plan-app[data-status="awaiting_approval"]', { timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    // Approve from the plan panel: its group is the active one when the build's edit asks.
    await plan.locator("#approve").click();
    await page.locator(".tabs-container .tab", { hasText: "Baton wants to" }).first().waitFor({ timeout: 60_000 });
    await sidebar.locator(".permission[data-tool=edit]").waitFor({ timeout: 60_000 });
    const groups = await page.evaluate(() =>
      Array.from(document.querySelectorAll(".editor-group-container")).map((group) => group.querySelector(".tab.active")?.textContent ?? ""),
    );
    const planGroup = groups.findIndex((active) => active.includes("Plan:") && active.includes("polite"));
    const diffGroup = groups.findIndex((active) => active.includes("Baton wants to"));
    expect(planGroup, JSON.stringify(groups)).toBeGreaterThanOrEqual(0);
    expect(diffGroup, JSON.stringify(groups)).toBeGreaterThanOrEqual(0);
    expect(diffGroup).not.toBe(planGroup);
    expect(await plan.locator("#plan-content").isVisible()).toBe(true);
    // Let the build finish: the edit, then the test command.
    await sidebar.locator(".permission[data-tool=edit] button.permission-option").first().click();
    await sidebar.locator(".permission[data-tool=bash]").waitFor({ timeout: 60_000 });
    await sidebar.locator(".permission[data-tool=bash] button.permission-option").first().click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "says hello politely" }).waitFor({ timeout: 60_000 });
  }, 300_000);
  it("a proposal the person edits in the diff editor is written as they left it", async () => {
    const readme = path.join(bench.server!.workspace, "README.md");
    await runCommand(page, "Baton: New Session");
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
    await prompt("PLEASE WRITE the readme");
    const card = sidebar.locator(".permission[data-tool=write]");
    await card.waitFor({ timeout: 60_000 });
    await page.locator(".tabs-container .tab", { hasText: "Baton wants to overwrite README.md" }).first().waitFor({ timeout: 60_000 });
    // The diff's right side is the proposal: the person types a line at its end.
    await page.locator(".monaco-diff-editor .editor.modified .view-lines").first().click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("Edited by the person.", { delay: 5 });
    // The card says so, and its allow choice now writes their version.
    await card.locator(".permission-edited").waitFor({ timeout: 30_000 });
    const allow = card.locator("button[data-option-kind=allow_once]");
    expect(await allow.locator(".permission-label").innerText()).toBe("Accept with your edits");
    await allow.click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "README.md is rewritten." }).last().waitFor({ timeout: 60_000 });
    expect(await readFile(readme, "utf8")).toBe("# e2e workspace\n\nRewritten by the agent.\nEdited by the person.");
  }, 240_000);
});
