// Activates the real extension against the mocked vscode and language client,
// with a python probe that finds baton, so start-up reaches the LanguageClient.
import { vi } from "vitest";
import type { Services } from "../../src/services";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";

vi.mock("../../src/client/processRunner", () => ({
  runProcess: vi.fn(async () => ({
    code: 0,
    stdout: `BATON_PROBE${JSON.stringify({ version: [3, 11, 7], executable: "/usr/bin/python3", baton: "0.1.0" })}\n`,
    stderr: "",
  })),
}));

export const SESSION = "s-1";

export const compactionRecord = {
  compactionId: "c-1",
  sessionId: SESSION,
  trigger: "manual",
  strategy: "native",
  tokensBefore: 12000,
  tokensAfter: 3000,
  firstKeptMessageId: "m-9",
  summary: "## Goal\nShip the thing",
  ledger: { filesRead: ["a.py"], filesModified: [], commands: [{ command: "pytest", exitCode: 1 }], errors: [] },
  preCompact: [],
  createdAt: "2026-11-30T10:00:00Z",
};

export async function activateExtension(): Promise<{ services: Services; context: ReturnType<typeof vscode.fakeExtensionContext> }> {
  vscode.resetMock();
  fake.reset();
  fake.responders.set("baton/session/list", () => ({
    sessions: [{ sessionId: SESSION, title: "First", mode: "build", createdAt: "t", updatedAt: "t" }],
  }));
  fake.responders.set("baton/session/load", () => ({ sessionId: SESSION, title: "First", mode: "build", messages: [] }));
  fake.responders.set("baton/session/compact", () => compactionRecord);
  fake.responders.set("baton/session/compactions", () => ({ compactions: [compactionRecord] }));
  fake.responders.set("baton/session/setMode", (p) => ({ mode: (p as { mode: string }).mode }));
  fake.responders.set("baton/session/context", () => ({ tokens: 0, contextWindow: 100000, threshold: 80000, items: [] }));
  fake.responders.set("baton/auth/set", () => ({}));
  fake.responders.set("baton/plan/approve", () => ({ status: "approved", mode: "build" }));
  const { activate } = await import("../../src/extension");
  const context = vscode.fakeExtensionContext();
  const services = await activate(context as never);
  return { services, context };
}
