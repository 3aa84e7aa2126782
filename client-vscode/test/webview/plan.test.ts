import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openWebview, posted, SCREENSHOTS, send, waitForPosted } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const HOSTILE_PLAN = `# Plan: add a cache

1. Read \`store.py\`
2. Add an LRU <script>window.__pwned = "script"</script>
3. <img src=x onerror="window.__pwned = 'onerror'"> done

[docs](javascript:window.__pwned='link')
[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)
![img](javascript:window.__pwned='img')

<iframe src="https://evil.example/"></iframe>
<a href="javascript:window.__pwned='raw-a'">raw link</a>
<svg onload="window.__pwned='svg'"></svg>
<details open ontoggle="window.__pwned='toggle'">x</details>

\`\`\`python
print("<b>not bold</b>")
\`\`\`

<https://example.com/safe>
`;

function planMessage(content: string, overrides: Record<string, unknown> = {}) {
  return {
    type: "plan",
    sessionId: "s-1",
    title: "Add a cache",
    plan: { path: ".baton/plans/s-1.md", status: "awaiting_approval", version: 3, content, ...overrides },
    versions: [
      { version: 1, author: "agent", createdAt: "2026-11-30T09:00:00Z", sha256: "a" },
      { version: 2, author: "user", createdAt: "2026-11-30T09:05:00Z", sha256: "b" },
      { version: 3, author: "agent", createdAt: "2026-11-30T09:10:00Z", sha256: "c" },
    ],
  };
}

async function readyPlan(content = HOSTILE_PLAN, theme = false): Promise<Page> {
  const page = await openWebview(browser, "plan", { theme });
  await waitForPosted(page, "ready");
  await send(page, planMessage(content));
  await page.waitForSelector("#plan-content h1");
  return page;
}

describe("plan webview", () => {
  it("renders model-written markdown inert: no script, handler, iframe or javascript: link survives", async () => {
    const page = await readyPlan();
    const content = page.locator("#plan-content");
    expect(await content.locator("script, iframe, svg, img[onerror], [onload], [ontoggle], [onerror]").count()).toBe(0);
    const hrefs = await content.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
    expect(hrefs.filter((h) => /^\s*(javascript|data):/i.test(h))).toEqual([]);
    expect(hrefs).toContain("https://example.com/safe");
    // Raw HTML is shown as text, not interpreted.
    expect(await content.innerText()).toContain('<script>window.__pwned = "script"</script>');
    expect(await content.innerText()).toContain('<b>not bold</b>');
    for (const link of await content.locator("a").all()) {
      if ((await link.getAttribute("href"))?.startsWith("https:")) continue;
      await link.click().catch(() => undefined);
    }
    await page.waitForTimeout(200);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    await page.close();
  });

  it("shows status and version, and Approve / Request changes / Open plan file post to the host", async () => {
    const page = await readyPlan("# Plan\n\n- step one\n- step two\n");
    expect(await page.locator("#plan-status").innerText()).toBe("Awaiting approval");
    expect(await page.locator("#plan-version").innerText()).toBe("v3");
    expect(await page.locator("#plan-content li").count()).toBe(2);

    await page.click("#approve");
    expect(await waitForPosted(page, "approve")).toEqual({ type: "approve", fresh: false });

    await page.click("#request-changes-toggle");
    await page.locator("#feedback").click();
    await page.keyboard.type("Split step two into tests first");
    await page.click("#send-feedback");
    expect(await waitForPosted(page, "requestChanges")).toEqual({ type: "requestChanges", feedback: "Split step two into tests first", annotations: [] });

    await page.click("#open-file");
    expect(await waitForPosted(page, "openFile")).toEqual({ type: "openFile" });
    await page.close();
  });

  it("live-updates when the host sends a new version, and disables Approve once approved", async () => {
    const page = await readyPlan("# Plan v3\n");
    await send(page, planMessage("# Plan v4\n\nNew step", { version: 4, status: "approved" }));
    await page.waitForFunction(() => document.querySelector("#plan-content h1")?.textContent === "Plan v4");
    expect(await page.locator("#plan-version").innerText()).toBe("v4");
    expect(await page.locator("#approve").getAttribute("disabled")).not.toBeNull();
    expect(await page.locator("#plan-app").getAttribute("data-status")).toBe("approved");
    await page.close();
  });

  it("steps are read-only checkboxes and state icons with progress; a tick and an undo move them", async () => {
    const steps = "# Plan: cache\n\n- [x] Add the store\n- [~] Wire it in\n- [!] Benchmark: blocked, no staging access\n- [ ] Tests\n- [ ] Docs\n\n```md\n- [ ] not a step\n```\n";
    const page = await readyPlan(steps);
    await page.waitForSelector("li.step");
    expect(await page.locator("li.step").evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.state))).toEqual([
      "done",
      "in_progress",
      "blocked",
      "open",
      "open",
    ]);
    expect(await page.locator("li.step").first().innerText()).toBe("Add the store");
    expect(await page.locator("#plan-content").innerText()).not.toContain("[x]");
    const boxes = page.locator("li.step input.step-box");
    expect(await boxes.evaluateAll((bs) => bs.map((b) => [(b as HTMLInputElement).checked, (b as HTMLInputElement).disabled]))).toEqual([
      [true, true],
      [false, true],
      [false, true],
    ]);
    expect(await page.locator("li.step .step-icon").evaluateAll((xs) => xs.map((x) => x.getAttribute("aria-label")))).toEqual(["In progress", "Blocked"]);
    expect(await page.locator("#plan-progress-label").innerText()).toBe("1/5 done");
    // A tick (a new version from the file) moves the progress; an undo (the file back) moves it back.
    await send(page, planMessage(steps.replace("- [~] Wire", "- [x] Wire"), { version: 4, status: "approved" }));
    await page.waitForFunction(() => document.getElementById("plan-progress-label")?.textContent === "2/5 done");
    await send(page, planMessage(steps, { version: 5, status: "approved" }));
    await page.waitForFunction(() => document.getElementById("plan-progress-label")?.textContent === "1/5 done");
    await page.close();
  });

  it("notices go when the plan moves on; buttons apply only to a reviewable plan with no turn running", async () => {
    const page = await readyPlan("# Plan\n\n- [ ] one\n");
    await send(page, { type: "notice", level: "info", message: "Feedback sent; the agent is revising the plan." });
    await page.waitForSelector("#notice:not([hidden])");
    // The agent's turn runs: no approving or requesting changes meanwhile.
    await send(page, { ...planMessage("# Plan\n\n- [ ] one\n"), running: true });
    await page.waitForFunction(() => document.getElementById("approve")?.hasAttribute("disabled"));
    expect(await page.locator("#request-changes-toggle").getAttribute("disabled")).not.toBeNull();
    expect(await page.locator("#notice").isVisible()).toBe(true); // same status and version: still true
    await send(page, { ...planMessage("# Plan\n\n- [ ] one\n- [ ] two\n", { version: 4, status: "awaiting_approval" }), running: false });
    await page.waitForFunction(() => document.getElementById("notice")?.hidden === true);
    expect(await page.locator("#approve").getAttribute("disabled")).toBeNull();
    await send(page, planMessage("# Plan\n\n- [ ] one\n", { version: 5, status: "approved" }));
    await page.waitForFunction(() => document.getElementById("request-changes-toggle")?.hasAttribute("disabled"));
    expect(await page.locator("#approve").getAttribute("title")).toBe("The plan is approved");
    expect(await page.locator("#approve-fresh").getAttribute("disabled")).not.toBeNull();
    await page.close();
  });

  it("history: asks the host for versions and shows a line diff between them", async () => {
    const page = await readyPlan("# Plan\n\n- a\n- c\n");
    await page.click("#tab-history");
    expect(await page.locator("#version-list li").count()).toBe(3);
    await page.click("#show-diff"); // default: v2 → v3 (v3 is the current content)
    const request = await waitForPosted(page, "getVersion");
    expect(request).toEqual({ type: "getVersion", version: 2 });
    expect((await posted(page)).filter((m) => m.type === "getVersion")).toHaveLength(1); // v3 is known
    await send(page, { type: "versionContent", version: 2, content: "# Plan\n\n- a\n- b\n", author: "user", createdAt: "t" });
    await page.waitForSelector("#diff [data-diff=added]");
    expect(await page.locator("#diff [data-diff=removed]").allInnerTexts()).toEqual(["- - b\n"]);
    expect(await page.locator("#diff [data-diff=added]").allInnerTexts()).toEqual(["+ - c\n"]);
    await page.close();
  });

  it("ignores malformed messages from outside", async () => {
    const page = await readyPlan("# Kept\n");
    await send(page, { type: "plan", plan: "<img src=x onerror=alert(1)>" });
    await send(page, { type: "notice", level: "pwn", message: "x" });
    await send(page, "plan");
    await page.waitForTimeout(100);
    expect(await page.locator("#plan-content h1").innerText()).toBe("Kept");
    expect(await page.locator("#notice").isHidden()).toBe(true);
    await page.close();
  });

  it("screenshot for the README", async () => {
    const page = await openWebview(browser, "plan", { theme: true });
    await waitForPosted(page, "ready");
    await send(
      page,
      planMessage(
        "# Plan: response cache for the API client\n\n## Steps\n\n- [x] Add `CacheStore` with an LRU bound (`store.py`)\n- [~] Wire it into `ApiClient.get` behind a `cache=` flag\n- [!] Benchmark against staging: blocked, no access yet\n- [ ] Tests: hit, miss, eviction, invalidation on write\n- [ ] Document the flag in `README.md`\n\n## Risks\n\n- Stale reads after writes: invalidate on every `post`/`put`\n",
      ),
    );
    await page.waitForSelector("#plan-content h1");
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "plan.png") });
    await page.close();
  });

  // Issue 50: the native <progress> looked full at 0 done in dark and high-contrast themes.
  for (const theme of ["vscode-dark", "vscode-light", "vscode-high-contrast", "vscode-high-contrast-light"]) {
    it(`the progress bar is empty at 0 done and full at all done (${theme})`, async () => {
      const steps = "# Plan\n\n- [ ] One\n- [ ] Two\n";
      const page = await readyPlan(steps, true);
      await page.evaluate((cls) => {
        document.body.className = cls;
      }, theme);
      await page.waitForFunction(() => document.getElementById("plan-progress-label")?.textContent === "0/2 done");
      const filled = () =>
        page.evaluate(() => {
          const track = document.getElementById("plan-progress")!.getBoundingClientRect();
          const fill = document.querySelector<HTMLElement>("#plan-progress .progress-fill")!.getBoundingClientRect();
          return Math.round((fill.width / track.width) * 100);
        });
      expect(await filled()).toBe(0);
      expect(await page.locator("#plan-progress").getAttribute("aria-valuenow")).toBe("0");
      await send(page, planMessage(steps.replace("- [ ] One", "- [x] One"), { version: 4, status: "approved" }));
      await page.waitForFunction(() => document.getElementById("plan-progress-label")?.textContent === "1/2 done");
      expect(await filled()).toBeGreaterThanOrEqual(45);
      expect(await filled()).toBeLessThanOrEqual(55);
      await page.close();
    });
  }
});
