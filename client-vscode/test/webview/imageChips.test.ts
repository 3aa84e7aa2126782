// Images in the composer: pasted, dropped or picked from the "…" menu, each shown as a
// removable thumbnail chip and sent with the prompt; refused at once when too large or
// for the local model.
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

const SESSION = "s-1";
const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";

async function sidebar(provider = "openai"): Promise<Page> {
  return openSidebarSession(browser, { width: 300, provider, model: "gpt-5", sessionId: SESSION });
}

/** Dispatches a paste (or a drop on the composer) carrying one image file. */
async function giveImage(page: Page, how: "paste" | "drop", name: string, bytes?: number): Promise<void> {
  await page.evaluate(
    ({ how, name, b64, bytes }) => {
      const raw = bytes ? new Uint8Array(bytes) : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([raw], name, { type: "image/png" }));
      if (how === "paste") {
        document.getElementById("prompt")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
      } else {
        const composer = document.querySelector(".composer")!;
        composer.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
        composer.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
      }
    },
    { how, name, b64: PNG_B64, bytes },
  );
}

const chips = (page: Page) => page.locator("#image-chips .image-chip");

describe("images in the composer", () => {
  it("a pasted and a dropped image show as thumbnail chips, one is removed, the other is sent with the prompt", async () => {
    const page = await sidebar();
    await giveImage(page, "paste", "shot.png");
    await chips(page).first().waitFor();
    await giveImage(page, "drop", "dropped.png");
    await page.waitForFunction(() => document.querySelectorAll("#image-chips .image-chip").length === 2);
    expect(await page.locator("#image-chips .image-name").allTextContents()).toEqual(["shot.png", "dropped.png"]);
    // The thumbnail is the image itself, drawn.
    const thumb = chips(page).first().locator("img.image-thumb");
    expect(await thumb.getAttribute("src")).toBe(`data:image/png;base64,${PNG_B64}`);
    expect(await thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
    // The chip fits the 300 px sidebar.
    const box = await chips(page).first().boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(300);

    await page.click("#image-chips [aria-label='Remove image shot.png']");
    await page.waitForFunction(() => document.querySelectorAll("#image-chips .image-chip").length === 1);

    await page.locator("#prompt").click();
    await page.keyboard.type("What is this?");
    await page.keyboard.press("Enter");
    const prompt = await waitForPosted(page, "prompt");
    expect(prompt).toEqual({
      type: "prompt",
      sessionId: SESSION,
      text: "What is this?",
      images: [{ mimeType: "image/png", data: PNG_B64, name: "dropped.png" }],
    });
    expect(await page.locator("#image-chips").isHidden()).toBe(true);
    expect(await page.locator("#transcript [data-kind=user] .image-sent").allTextContents()).toEqual(["Image: dropped.png"]);

    // A reopened session shows the stored image part on its prompt.
    await send(page, {
      type: "history",
      sessionId: SESSION,
      title: "Work",
      mode: "build",
      running: false,
      messages: [
        {
          id: "m1",
          role: "user",
          createdAt: "t",
          parts: [
            { type: "text", text: "What is this?" },
            { type: "image", mimeType: "image/png", name: "dropped.png", bytes: 70 },
          ],
        },
      ],
    });
    await page.locator("#transcript [data-kind=user] .image-sent").waitFor();
    expect(await page.locator("#transcript [data-kind=user] .image-sent").allTextContents()).toEqual(["Image: dropped.png"]);
    await page.close();
  });

  it("the … menu's Attach image opens the file picker from the keyboard; the picked file is a chip", async () => {
    const page = await sidebar();
    // Whether the item asks for the picker (Playwright's file-chooser hook races a keypress).
    await page.evaluate(() => {
      const input = document.getElementById("image-file") as HTMLInputElement;
      input.click = () => {
        (window as unknown as { __picker: number }).__picker = ((window as unknown as { __picker?: number }).__picker ?? 0) + 1;
      };
    });
    await page.locator("#composer-more").focus();
    await page.keyboard.press("Enter");
    const item = page.locator("#composer-menu [role=menuitem]", { hasText: "Attach image…" });
    await item.waitFor();
    for (let i = 0; i < 5; i++) {
      if ((await page.evaluate(() => document.activeElement?.textContent)) === "Attach image…") break;
      await page.keyboard.press("ArrowDown");
    }
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => (window as unknown as { __picker?: number }).__picker)).toBe(1);
    await page.locator("#composer-menu").waitFor({ state: "hidden" });
    await page.setInputFiles("#image-file", { name: "picked.png", mimeType: "image/png", buffer: Buffer.from(PNG_B64, "base64") });
    await chips(page).first().waitFor();
    expect(await page.locator("#image-chips .image-name").allTextContents()).toEqual(["picked.png"]);
    await page.close();
  });

  it("an image over 5 MiB, or any image for the local model, is refused with a reason and no chip", async () => {
    const page = await sidebar();
    await giveImage(page, "paste", "huge.png", 5 * 1024 * 1024 + 1);
    await page.locator("#image-problem").waitFor();
    expect(await page.locator("#image-problem").innerText()).toBe("huge.png is 5.0 MiB; images are limited to 5 MiB each.");
    expect(await chips(page).count()).toBe(0);
    await page.close();

    const local = await sidebar("local");
    await giveImage(local, "paste", "shot.png");
    await local.locator("#image-problem").waitFor();
    expect(await local.locator("#image-problem").innerText()).toContain("The local model does not take images");
    expect(await chips(local).count()).toBe(0);
    expect((await posted(local)).some((m) => m.type === "prompt")).toBe(false);
    await local.close();
  });
});
