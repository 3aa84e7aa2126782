// Slash commands in real VS Code (code-server) with the real server and the
// scripted fake model: the workspace's skill is offered in the composer's `/`
// menu with its description and argument hint; picked with the keyboard and sent
// with an argument, the model receives the skill's body with the argument in it,
// and the transcript shows what the person typed, the expansion one click away.
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";
const SKILL = [
  "---",
  "name: greet-world",
  "description: Greet someone warmly, by name",
  "argument-hint: <name>",
  "---",
  "Greet $ARGUMENTS warmly, then stop.",
  "",
].join("\n");

describe.skipIf(skip)("Slash commands in real VS Code (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame | undefined;

  beforeAll(async () => {
    page = await openWorkbench(bench, { files: { ".baton/skills/greet-world/SKILL.md": SKILL } });
  }, 180_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-skills.png", failed, sidebar });
  });

  it("types / in the composer, picks the skill from the menu and sends it", async () => {
    await runCommand(page, "Baton: Focus the Prompt Box");
    const frame = await webviewFrame(page, "#app", 120_000);
    sidebar = frame;
    await frame.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });

    await typeInto(page, frame, "#prompt", "/gr");
    const menu = frame.locator("#slash-menu");
    const item = menu.locator("[data-name=greet-world]");
    await item.waitFor({ state: "visible", timeout: 30_000 });
    expect(await item.locator(".slash-hint").innerText()).toBe("<name>");
    expect(await item.locator(".slash-description").innerText()).toBe("Greet someone warmly, by name");
    expect(await menu.locator("[aria-selected=true]").getAttribute("data-name")).toBe("greet-world");
    await page.keyboard.press("Enter");
    await menu.waitFor({ state: "hidden", timeout: 10_000 });
    await frame.waitForFunction(() => (document.querySelector("#prompt") as (Element & { value?: string }) | null)?.value === "/greet-world ");
    await page.keyboard.type("Ada", { delay: 5 });
    await frame.waitForFunction(() => (document.querySelector("#prompt") as (Element & { value?: string }) | null)?.value === "/greet-world Ada");
    await page.keyboard.press("Enter");

    // The answer streams in: wait for the turn to end before reading it, or a prefix is read.
    const answer = frame.locator("[data-kind=assistant]", { hasText: "Skill greet-world said:" });
    await answer.waitFor({ timeout: 90_000 });
    await frame.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    expect(await answer.innerText()).toContain("Skill greet-world said: Greet Ada warmly, then stop.");
    // Live, before any reload: one message, as typed, with what the agent was sent one click away.
    const sent = frame.locator(".msg.command");
    expect(await frame.locator("[data-kind=user]").count()).toBe(1);
    expect(await sent.locator(".command-typed").innerText()).toBe("/greet-world Ada");
    await sent.locator(".command-expanded summary").click();
    expect(await sent.locator(".command-expanded-body").innerText()).toContain("Greet Ada warmly, then stop.");
  }, 300_000);
});
