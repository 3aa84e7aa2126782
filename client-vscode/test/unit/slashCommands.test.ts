import { describe, expect, it } from "vitest";
import type { BatonClient } from "../../src/client/batonClient";
import { parseCommandInbound, parseCommandOutbound, splitCommand } from "../../src/features/composer/commandMessages";
import { runBuiltin, type BuiltinHost } from "../../src/features/composer/slashCommands";

function host() {
  const calls: unknown[][] = [];
  const fake: BuiltinHost = {
    client: {
      request: async (method: string, params: unknown) => {
        calls.push(["request", method, params]);
        return {};
      },
    } as unknown as BatonClient,
    executeCommand: async (command: string, ...args: unknown[]) => {
      calls.push(["command", command, ...args]);
      return undefined;
    },
    newSession: async (mode) => {
      calls.push(["newSession", mode]);
      return "s-new";
    },
    setMode: async (sessionId, mode) => {
      calls.push(["setMode", sessionId, mode]);
    },
    prompt: async (sessionId, text) => {
      calls.push(["prompt", sessionId, text]);
    },
    error: (message) => {
      calls.push(["error", message]);
    },
  };
  return { fake, calls };
}

describe("built-in slash commands in the sidebar", () => {
  it("run on the sidebar's own commands and methods", async () => {
    const { fake, calls } = host();
    expect(await runBuiltin(fake, "s-1", "compact", "")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "compact", "keep the API notes")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "plan", "a login page")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "approve", "fresh")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "approve", "")).toBe(true);
    // The menu offers `steps`: each step in a fresh child (issue 50: it was refused).
    expect(await runBuiltin(fake, "s-1", "approve", "steps")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "changes", "7: split it")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "undo", "")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "review", "")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "context", "")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "new", "")).toBe(true);
    expect(calls).toEqual([
      ["command", "baton.compactSession", "s-1"],
      ["request", "baton/session/compact", { sessionId: "s-1", instructions: "keep the API notes" }],
      ["setMode", "s-1", "plan"],
      ["prompt", "s-1", "a login page"],
      ["command", "baton.approvePlan", "s-1"],
      ["command", "baton.approvePlanKeepContext", "s-1"],
      ["command", "baton.approvePlanStepByStep", "s-1"],
      ["request", "baton/plan/requestChanges", { sessionId: "s-1", feedback: "7: split it" }],
      ["command", "baton.undoLastTurn", "s-1"],
      ["command", "baton.showPlan", "s-1"],
      ["command", "baton.contextMenu", "s-1"],
      ["newSession", "build"],
    ]);
  });

  it("refuse bad arguments plainly, make a session when there is none, and leave other names alone", async () => {
    const { fake, calls } = host();
    expect(await runBuiltin(fake, "s-1", "approve", "now")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "changes", "")).toBe(true);
    expect(await runBuiltin(fake, null, "plan", "")).toBe(true);
    expect(await runBuiltin(fake, "s-1", "deploy", "prod")).toBe(false);
    expect(calls.map((c) => c[0])).toEqual(["error", "error", "newSession", "setMode"]);
    expect(calls[2]).toEqual(["newSession", "plan"]);
  });

  it("guards the menu's messages", () => {
    expect(splitCommand("/compact keep notes")).toEqual(["compact", "keep notes"]);
    expect(splitCommand("hello")).toBeUndefined();
    expect(parseCommandOutbound({ type: "builtinCommand", sessionId: null, name: "new", arguments: "" })).toEqual({
      type: "builtinCommand",
      sessionId: null,
      name: "new",
      arguments: "",
    });
    expect(parseCommandOutbound({ type: "builtinCommand", sessionId: 3, name: "new", arguments: "" })).toBeUndefined();
    const ok = { type: "commands", commands: [{ name: "x", description: "d", source: "skill", argumentHint: null }], problems: [] };
    expect(parseCommandInbound(ok)).toEqual({ type: "commands", commands: [{ name: "x", description: "d", source: "skill" }], problems: [] });
    expect(parseCommandInbound({ ...ok, commands: [{ name: "x", description: "d", source: "evil" }] })).toBeUndefined();
  });
});
