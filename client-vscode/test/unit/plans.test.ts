// The Plans view (baton/plan/list) and its actions: a new session on a plan,
// open its file, attach it to the current session; against the mocked vscode
// and language client.
import { beforeEach, describe, expect, it } from "vitest";
import type { Services } from "../../src/services";
import { planDescription } from "../../src/features/plans/plansView";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension, SESSION } from "./helpers";

const tick = () => new Promise((r) => setTimeout(r, 0));
const run = (id: string, ...args: unknown[]) => vscode.registeredCommands.get(id)?.(...args);
const sentRequests = (method: string) =>
  fake.clients.flatMap((c) => c.sendRequest.mock.calls.filter((call) => call[0] === method).map((call) => call[1]));

const CACHE = {
  path: "docs/plans/cache.md",
  title: "Plan: response cache",
  status: "approved",
  version: 4,
  stepsDone: 2,
  stepsTotal: 5,
  lastSessionId: "s-0",
  lastSessionTitle: "Cache work",
  updatedAt: "2026-12-01T10:00:00Z",
};
const DRAFT = { ...CACHE, path: ".baton/plans/auth.md", title: "Plan: auth", status: "draft", stepsDone: 0, stepsTotal: 0, lastSessionId: null, lastSessionTitle: null };

describe("Plans view", () => {
  let services: Services;
  let plans: Array<typeof CACHE>;
  beforeEach(async () => {
    ({ services } = await activateExtension());
    plans = [CACHE, DRAFT as unknown as typeof CACHE];
    fake.responders.set("baton/plan/list", () => ({ plans }));
    fake.responders.set("baton/session/new", () => ({ sessionId: "s-new" }));
    fake.responders.set("baton/plan/get", () => null);
    fake.responders.set("baton/plan/attach", (p) => ({ path: (p as { path: string }).path, status: "approved", version: 4 }));
    await services.client.ensureStarted();
  });

  const view = () => vscode.createdTreeViews.find((v) => v.id === "baton.plans")!;

  it("lists the workspace's plans with status, steps done of total and the last session", async () => {
    const entries = (await view().provider.getChildren()) as unknown[];
    const items = entries.map((e) => view().provider.getTreeItem(e));
    expect(items.map((i) => [i.label, i.description])).toEqual([
      ["Plan: response cache", "Approved · 2/5 done · Cache work"],
      ["Plan: auth", "Draft"],
    ]);
    expect(items[0]?.tooltip).toContain("docs/plans/cache.md");
    expect(items[0]?.tooltip).toContain("Last session: Cache work");
    expect(items[0]?.contextValue).toBe("batonPlan.approved");
    // A click opens the file.
    expect(items[0]?.command).toEqual({ command: "baton.openListedPlan", title: "Open Plan File", arguments: [CACHE] });
    expect(view().message).toBeUndefined();
    // The watcher looks at the plans folder of the settings.
    expect(vscode.createdWatchers[0]?.pattern.pattern).toBe(".baton/plans/**/*.md");
  });

  it("says so when there are no plans, or when the server cannot list them", async () => {
    plans = [];
    await services.plansView.refresh();
    expect(view().message).toMatch(/^No plans in this workspace yet/);
    fake.responders.delete("baton/plan/list");
    await services.plansView.refresh();
    expect(view().message).toBe("This Baton server cannot list plans (baton/plan/list): update Baton.");
    expect(await view().provider.getChildren()).toEqual([]);
  });

  it("lists again after a plan changes or a plan file is written (once per burst)", async () => {
    await view().provider.getChildren();
    const before = sentRequests("baton/plan/list").length;
    fake.last.notificationHandlers.get("baton/plan/didChange")?.({ sessionId: SESSION, path: CACHE.path, version: 5, status: "approved", author: "agent" });
    vscode.createdWatchers[0]?.changed.fire(vscode.Uri.file("/workspace/.baton/plans/x.md"));
    await new Promise((r) => setTimeout(r, 400));
    expect(sentRequests("baton/plan/list").length).toBe(before + 1);
  });

  it("New Session on a Plan: an approved plan is built, a draft is planned; the sidebar shows the new session", async () => {
    await run("baton.newSessionOnPlan", CACHE);
    await run("baton.newSessionOnPlan", DRAFT);
    expect(sentRequests("baton/session/new")).toEqual([
      { mode: "build", planPath: "docs/plans/cache.md" },
      { mode: "plan", planPath: ".baton/plans/auth.md" },
    ]);
    expect(services.state.activeSessionId).toBe("s-new");
  });

  it("from the palette, the plan is picked from the list", async () => {
    vscode.window.showQuickPick.mockImplementationOnce(async (items: unknown) => (items as Array<{ entry: unknown }>)[1]);
    await run("baton.newSessionOnPlan");
    const [picks] = vscode.window.showQuickPick.mock.calls[0] as [Array<{ label: string; description: string; detail: string }>];
    expect(picks.map((p) => [p.label, p.description, p.detail])).toEqual([
      ["Plan: response cache", planDescription(CACHE as never), "docs/plans/cache.md"],
      ["Plan: auth", "Draft", ".baton/plans/auth.md"],
    ]);
    expect(sentRequests("baton/session/new")).toEqual([{ mode: "plan", planPath: ".baton/plans/auth.md" }]);
    // Dismissed: nothing is started.
    await run("baton.newSessionOnPlan");
    expect(sentRequests("baton/session/new")).toHaveLength(1);
  });

  it("Open a Plan File opens the workspace file", async () => {
    await run("baton.openListedPlan", CACHE);
    expect(vscode.workspace.openTextDocument).toHaveBeenCalledWith(vscode.Uri.file("/workspace/docs/plans/cache.md"));
    expect(vscode.window.showTextDocument).toHaveBeenCalled();
  });

  it("Attach to the current session: attached when it has no plan; a session that follows another plan is offered a new session instead", async () => {
    services.state.remember(SESSION, { mode: "build", title: "First" });
    services.state.setActive(SESSION);
    await run("baton.attachPlan", CACHE);
    expect(sentRequests("baton/plan/attach")).toEqual([{ sessionId: SESSION, path: "docs/plans/cache.md" }]);
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith(expect.stringContaining("now follows docs/plans/cache.md"), "Show Plan");

    fake.responders.set("baton/plan/get", () => ({ path: ".baton/plans/s-1.md", status: "draft", version: 1, content: "# x" }));
    await run("baton.attachPlan", DRAFT); // the offer is dismissed
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith(
      "Baton: “First” already follows .baton/plans/s-1.md. Start a new session on .baton/plans/auth.md instead?",
      "New Session on This Plan",
    );
    expect(sentRequests("baton/session/new")).toEqual([]);
    vscode.window.showInformationMessage.mockResolvedValueOnce("New Session on This Plan");
    await run("baton.attachPlan", DRAFT);
    expect(sentRequests("baton/plan/attach")).toHaveLength(1);
    expect(sentRequests("baton/session/new")).toEqual([{ mode: "plan", planPath: ".baton/plans/auth.md" }]);

    // The plan it already follows: nothing to do.
    fake.responders.set("baton/plan/get", () => ({ path: CACHE.path, status: "approved", version: 4, content: "# x" }));
    await run("baton.attachPlan", CACHE);
    expect(sentRequests("baton/plan/attach")).toHaveLength(1);
  });

  it("Attach with no session open offers a new session on the plan instead", async () => {
    services.state.setActive(undefined as never);
    vscode.window.showInformationMessage.mockResolvedValueOnce("New Session on This Plan");
    await run("baton.attachPlan", CACHE);
    await tick();
    expect(sentRequests("baton/plan/attach")).toEqual([]);
    expect(sentRequests("baton/session/new")).toEqual([{ mode: "build", planPath: "docs/plans/cache.md" }]);
  });

  it("an entry that is not a plan (a bad argument) is not sent", async () => {
    vscode.window.showQuickPick.mockResolvedValueOnce(undefined);
    await run("baton.newSessionOnPlan", { path: 42 });
    expect(sentRequests("baton/session/new")).toEqual([]);
  });
});
