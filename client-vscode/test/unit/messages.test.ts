import { describe, expect, it } from "vitest";
import { parsePlanInbound, parsePlanOutbound } from "../../src/features/plans/messages";
import { parseSidebarInbound, parseSidebarOutbound } from "../../src/shell/messages";

describe("webview message guards", () => {
  it("accepts well-formed sidebar messages and drops the rest", () => {
    expect(parseSidebarOutbound({ type: "prompt", sessionId: "s", text: "hi" })).toEqual({ type: "prompt", sessionId: "s", text: "hi" });
    expect(parseSidebarOutbound({ type: "prompt", sessionId: "s", text: "   " })).toBeUndefined();
    expect(parseSidebarOutbound({ type: "prompt", sessionId: 3, text: "x" })).toBeUndefined();
    expect(parseSidebarOutbound({ type: "setMode", sessionId: "s", mode: "yolo" })).toBeUndefined();
    expect(parseSidebarOutbound({ type: "runShell", command: "rm -rf /" })).toBeUndefined();
    expect(parseSidebarOutbound("prompt")).toBeUndefined();
    expect(parseSidebarOutbound(null)).toBeUndefined();
    expect(parseSidebarOutbound({ type: "permissionAnswer", requestId: "r", optionId: "allow" })).toBeTruthy();
    expect(parseSidebarOutbound({ type: "ready", activeSessionId: 42 })).toEqual({ type: "ready", activeSessionId: null });
    // What is said while the agent works, and taking it back (issue 50, point 6).
    expect(parseSidebarOutbound({ type: "queue", sessionId: "s", text: "also this", delivery: "steer" })).toEqual({ type: "queue", sessionId: "s", text: "also this", delivery: "steer" });
    expect(parseSidebarOutbound({ type: "queue", sessionId: "s", text: "x", delivery: "now" })).toBeUndefined();
    expect(parseSidebarOutbound({ type: "queue", sessionId: "s", text: "  ", delivery: "after_turn" })).toBeUndefined();
    expect(parseSidebarOutbound({ type: "unqueue", sessionId: "s", id: "q1" })).toEqual({ type: "unqueue", sessionId: "s", id: "q1" });
    expect(parseSidebarOutbound({ type: "useModel", model: " qwen " })).toEqual({ type: "useModel", model: "qwen" });
    expect(parseSidebarOutbound({ type: "childHistory", sessionId: "c-1" })).toEqual({ type: "childHistory", sessionId: "c-1" });
    expect(parseSidebarOutbound({ type: "childHistory", sessionId: 7 })).toBeUndefined();
    // Extra fields never pass through.
    expect(parseSidebarOutbound({ type: "cancel", sessionId: "s", extra: 1 })).toEqual({ type: "cancel", sessionId: "s" });
  });

  it("accepts well-formed plan messages and drops the rest", () => {
    expect(parsePlanOutbound({ type: "approve" })).toEqual({ type: "approve", fresh: false });
    expect(parsePlanOutbound({ type: "approve", fresh: true })).toEqual({ type: "approve", fresh: true });
    expect(parsePlanOutbound({ type: "approve", fresh: "yes" })).toEqual({ type: "approve", fresh: false });
    expect(parsePlanOutbound({ type: "requestChanges", feedback: "" })).toBeUndefined();
    expect(parsePlanOutbound({ type: "requestChanges", feedback: "more" })).toEqual({ type: "requestChanges", feedback: "more", annotations: [] });
    expect(parsePlanOutbound({ type: "getVersion", version: -1 })).toBeUndefined();
    expect(parsePlanOutbound({ type: "getVersion", version: 2 })).toEqual({ type: "getVersion", version: 2 });
    expect(parsePlanInbound({ type: "plan", sessionId: "s", plan: "not a plan", versions: [] })).toBeUndefined();
    expect(parsePlanInbound({ type: "notice", level: "info", message: "ok" })).toBeTruthy();
    expect(parsePlanInbound({ type: "inView", visible: false, extra: 1 })).toEqual({ type: "inView", visible: false });
    expect(parsePlanInbound({ type: "inView", visible: "no" })).toBeUndefined();
    expect(parseSidebarInbound({ type: "update", sessionId: "s", update: {} })).toBeUndefined();
  });

  it("requestChanges: annotations alone are enough; each one is checked and only its wire fields pass", () => {
    const comment = { kind: "comment", startLine: 3, endLine: 4, quote: "Add the store", text: "Which store?" };
    const deletion = { kind: "delete", startLine: 5, endLine: 5, quote: "Docs", id: "a-1", stale: false };
    expect(parsePlanOutbound({ type: "requestChanges", feedback: " ", annotations: [comment, deletion] })).toEqual({
      type: "requestChanges",
      feedback: " ",
      annotations: [comment, { kind: "delete", startLine: 5, endLine: 5, quote: "Docs" }],
    });
    const bad = [
      { ...comment, kind: "rewrite" },
      { ...comment, startLine: 0 },
      { ...comment, endLine: 2 },
      { ...comment, startLine: 1.5 },
      { ...comment, text: "  " },
      { kind: "replace", startLine: 1, endLine: 1, quote: "x" },
      { ...comment, quote: 7 },
      "comment",
    ];
    for (const annotation of bad) {
      expect(parsePlanOutbound({ type: "requestChanges", feedback: "also this", annotations: [comment, annotation] })).toBeUndefined();
    }
    expect(parsePlanOutbound({ type: "requestChanges", feedback: "x", annotations: Array(501).fill(comment) })).toBeUndefined();
    expect(parsePlanOutbound({ type: "requestChanges", feedback: "", annotations: [] })).toBeUndefined();
  });
});
