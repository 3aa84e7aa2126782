import { beforeEach, describe, expect, it } from "vitest";
import type { Services } from "../../src/services";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension, compactionRecord, SESSION } from "./helpers";

function pushUpdate(update: Record<string, unknown>, sessionId = SESSION): void {
  fake.last.notificationHandlers.get("baton/session/update")?.({ sessionId, update });
}

const item = () => {
  const found = vscode.statusBarItems.find((i) => i.id === "baton.context");
  if (!found) throw new Error("no status bar item");
  return found;
};

describe("context status bar", () => {
  let services: Services;
  beforeEach(async () => {
    ({ services } = await activateExtension());
  });

  it("is hidden until there is an active session and a running server", async () => {
    expect(item().visible).toBe(false);
    services.state.setActive(SESSION);
    await services.client.ensureStarted();
    await new Promise((r) => setTimeout(r, 0));
    expect(item().visible).toBe(true);
  });

  it("shows the active session's context use from usage updates, and clicking opens the context menu", async () => {
    services.state.setActive(SESSION);
    await services.client.ensureStarted();
    pushUpdate({ kind: "usage", tokens: 54000, contextWindow: 128000 });
    expect(item().text).toBe("$(dashboard) 42%");
    expect(item().tooltip).toContain("54,000 of 128,000 tokens");
    expect(item().command).toBe("baton.contextMenu");
    expect(item().backgroundColor).toBeUndefined();

    pushUpdate({ kind: "usage", tokens: 120000, contextWindow: 128000 });
    expect(item().text).toBe("$(dashboard) 94%");
    expect(item().backgroundColor?.id).toBe("statusBarItem.errorBackground");
  });

  it("ignores usage of other sessions", async () => {
    services.state.setActive(SESSION);
    await services.client.ensureStarted();
    pushUpdate({ kind: "usage", tokens: 10000, contextWindow: 100000 });
    pushUpdate({ kind: "usage", tokens: 90000, contextWindow: 100000 }, "other");
    expect(item().text).toBe("$(dashboard) 10%");
  });

  it("shows compaction in progress and the tokens after it", async () => {
    services.state.setActive(SESSION);
    await services.client.ensureStarted();
    pushUpdate({ kind: "usage", tokens: 12000, contextWindow: 100000 });
    pushUpdate({ kind: "compaction_started", trigger: "auto", strategy: "native" });
    expect(item().text).toContain("Compacting");
    pushUpdate({ kind: "compaction_finished", compaction: compactionRecord });
    expect(item().text).toBe("$(dashboard) 3%");
  });

  it("seeds the figure from baton/session/context when a session becomes active", async () => {
    fake.responders.set("baton/session/context", () => ({ tokens: 25000, contextWindow: 100000, threshold: 80000, items: [] }));
    await services.client.ensureStarted();
    services.state.setActive(SESSION);
    await new Promise((r) => setTimeout(r, 0));
    expect(item().text).toBe("$(dashboard) 25%");
  });
});
