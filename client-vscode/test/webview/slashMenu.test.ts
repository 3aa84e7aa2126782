// The composer's slash menu in headless Chromium: `/` opens the commands from the
// host, filtered as you type, with argument hints and descriptions; the keyboard
// picks one; a built-in is run by the host, a skill is sent as the prompt typed;
// a command message, live and loaded, shows what was typed, the expansion one click away.
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
const COMMANDS = [
  { name: "compact", description: "Compact the conversation now", source: "builtin", argumentHint: "what the summary should focus on" },
  { name: "context", description: "Show what fills the model's context window", source: "builtin" },
  { name: "deploy", description: "Deploy the service to staging", source: "skill", argumentHint: "<environment>" },
  { name: "docs", description: "Write the docs", source: "command" },
];

async function sidebar(): Promise<Page> {
  const page = await openWebview(browser, "sidebar");
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: SESSION,
    sessions: [{ sessionId: SESSION, title: "Work", mode: "build", createdAt: "t", updatedAt: "t" }],
  });
  await send(page, { type: "history", sessionId: SESSION, title: "Work", mode: "build", running: false, messages: [] });
  return page;
}

const value = (page: Page) => page.evaluate(() => (document.getElementById("prompt") as unknown as { value: string }).value);

describe("sidebar slash menu", () => {
  it("opens on /, filters as you type, and the keyboard picks and sends a skill", async () => {
    const page = await sidebar();
    await page.locator("#prompt").click();
    await page.keyboard.type("/");
    await waitForPosted(page, "commandsQuery");
    await send(page, { type: "commands", commands: COMMANDS, problems: [] });
    const menu = page.locator("#slash-menu");
    await menu.locator("[role=option]").nth(3).waitFor();
    expect(await menu.locator(".slash-name").allTextContents()).toEqual(["/compact", "/context", "/deploy", "/docs"]);
    expect(await menu.locator("[data-name=deploy] .slash-hint").innerText()).toBe("<environment>");
    expect(await menu.locator("[data-name=deploy] .slash-description").innerText()).toBe("Deploy the service to staging");

    await page.keyboard.type("d");
    await page.waitForFunction(() => document.querySelectorAll("#slash-menu [role=option]").length === 2);
    expect(await menu.locator("[aria-selected=true] .slash-name").innerText()).toBe("/deploy");
    await page.keyboard.press("ArrowDown");
    expect(await menu.locator("[aria-selected=true] .slash-name").innerText()).toBe("/docs");
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("Enter");
    await menu.waitFor({ state: "hidden" });
    expect(await value(page)).toBe("/deploy ");
    // Enter that picked did not send; the next one does, with the arguments.
    expect((await posted(page)).filter((m) => m.type === "prompt")).toEqual([]);
    await page.keyboard.type("staging");
    await page.keyboard.press("Enter");
    expect(await waitForPosted(page, "prompt")).toEqual({ type: "prompt", sessionId: SESSION, text: "/deploy staging" });
    expect(await page.locator("[data-kind=user]").last().innerText()).toBe("/deploy staging");
    // Live, the server says what it expanded: the prompt as sent becomes the command's card,
    // what the agent was sent one click away (not only after a reload).
    await send(page, {
      type: "update",
      sessionId: SESSION,
      update: {
        kind: "user_message",
        messageId: "u1",
        text: "Deploy the service to staging.",
        command: { name: "deploy", arguments: "staging", typed: "/deploy staging", source: "skill" },
      },
    });
    expect(await page.locator("[data-kind=user]").count()).toBe(1);
    const card = page.locator(".msg.command");
    expect(await card.locator(".command-typed").innerText()).toBe("/deploy staging");
    expect(await card.locator(".command-expanded-body").isVisible()).toBe(false);
    await card.locator(".command-expanded summary").click();
    expect(await card.locator(".command-expanded-body").innerText()).toBe("Deploy the service to staging.");
    await page.close();
  });

  it("Escape closes it; a built-in goes to the host, not to the model", async () => {
    const page = await sidebar();
    await page.locator("#prompt").click();
    await page.keyboard.type("/co");
    await waitForPosted(page, "commandsQuery");
    await send(page, { type: "commands", commands: COMMANDS, problems: [] });
    const menu = page.locator("#slash-menu");
    await menu.locator("[role=option]").nth(1).waitFor();
    expect(await menu.locator(".slash-name").allTextContents()).toEqual(["/compact", "/context"]);
    await page.keyboard.press("Escape");
    await menu.waitFor({ state: "hidden" });
    expect(await value(page)).toBe("/co");
    await page.keyboard.press("Backspace");
    await menu.locator("[role=option]").first().waitFor();
    await page.keyboard.press("Tab");
    expect(await value(page)).toBe("/compact ");
    await page.keyboard.type("keep the API notes");
    await page.keyboard.press("Enter");
    expect(await waitForPosted(page, "builtinCommand")).toEqual({
      type: "builtinCommand",
      sessionId: SESSION,
      name: "compact",
      arguments: "keep the API notes",
    });
    expect((await posted(page)).filter((m) => m.type === "prompt")).toEqual([]);
    // A skills update (a file added) refreshes the list without asking again.
    await send(page, {
      type: "update",
      sessionId: SESSION,
      update: { kind: "skills", commands: [...COMMANDS, { name: "release", description: "Cut a release", source: "skill" }], problems: [] },
    });
    await page.keyboard.type("/rel");
    await menu.locator("[data-name=release]").waitFor();
    await page.close();
  });

  it("a loaded command message shows what was typed, the expansion one click away", async () => {
    const page = await sidebar();
    await send(page, {
      type: "history",
      sessionId: SESSION,
      title: "Work",
      mode: "build",
      running: false,
      messages: [
        {
          id: "u1",
          role: "user",
          createdAt: "t",
          parts: [{ type: "text", text: "Deploy to staging now." }],
          command: { name: "deploy", arguments: "staging", typed: "/deploy staging", source: "skill" },
        },
        { id: "a1", role: "assistant", createdAt: "t", parts: [{ type: "text", text: "Deployed." }] },
      ],
    });
    const node = page.locator(".msg.command");
    await node.waitFor();
    expect(await node.locator(".command-typed").innerText()).toBe("/deploy staging");
    expect(await node.locator(".command-expanded-body").isVisible()).toBe(false);
    await node.locator(".command-expanded summary").click();
    expect(await node.locator(".command-expanded-body").innerText()).toBe("Deploy to staging now.");
    await page.close();
  });
});
