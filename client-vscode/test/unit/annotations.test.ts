import { describe, expect, it } from "vitest";
import { lineLabel, reanchor, selectedLines, sourceLines, sourceQuote, toWire, type DraftAnnotation } from "../../src/features/plans/annotations";

const PLAN = ["# Plan", "", "A paragraph that", "wraps onto `two` lines.", "", "- [ ] Add **the** store", "- [x] [Docs](https://x.test/d)", ""].join("\n");

describe("plan annotations (pure)", () => {
  it("a selection inside one line of a several-line block is that line; across lines, the first to the last", () => {
    expect(selectedLines(PLAN, 3, 4, "wraps onto two")).toEqual({ startLine: 4, endLine: 4 });
    expect(selectedLines(PLAN, 3, 4, "paragraph that\nwraps")).toEqual({ startLine: 3, endLine: 4 });
    // Rendered text has no markdown marks; the source line has them.
    expect(selectedLines(PLAN, 6, 7, "the store")).toEqual({ startLine: 6, endLine: 6 });
    expect(selectedLines(PLAN, 6, 7, "Docs")).toEqual({ startLine: 7, endLine: 7 });
    // Found nowhere (or a one-line block): the block's lines.
    expect(selectedLines(PLAN, 3, 4, "paragraph that wraps")).toEqual({ startLine: 3, endLine: 4 });
    expect(selectedLines(PLAN, 1, 1, "Plan")).toEqual({ startLine: 1, endLine: 1 });
  });

  it("the quote is the markdown of what was selected (the server checks it against the plan's text)", () => {
    expect(sourceQuote(PLAN, 4, 4, "onto two")).toBe("onto `two`");
    expect(sourceQuote(PLAN, 6, 6, "Add the store")).toBe("Add **the** store");
    expect(sourceQuote(PLAN, 7, 7, "Docs")).toBe("Docs");
    // Across lines: from the first selected character to the last, list markers and all.
    expect(sourceQuote(PLAN, 6, 7, "the store\nDocs")).toBe("**the** store\n- [x] [Docs");
    expect(sourceQuote(PLAN, 3, 4, "that wraps onto")).toBe("that\nwraps onto");
    // Not found as shown: the lines' whole text.
    expect(sourceQuote(PLAN, 6, 6, "something else")).toBe("- [ ] Add **the** store");
    expect(sourceQuote(PLAN, 1, 1, "   ")).toBe("# Plan");
  });

  it("reanchors on a new version by the lines' text; gone or doubled lines are stale", () => {
    const a = (id: string, start: number, end: number): DraftAnnotation => ({
      id,
      kind: "comment",
      startLine: start,
      endLine: end,
      quote: "q",
      text: "t",
      version: 1,
      source: sourceLines(PLAN, start, end),
    });
    const moved = `intro\n\n${PLAN}`;
    expect(reanchor([a("a-1", 6, 7)], moved, 2)).toEqual([{ ...a("a-1", 6, 7), startLine: 8, endLine: 9, version: 2 }]);
    const [gone] = reanchor([a("a-2", 6, 6)], PLAN.replace("Add **the** store", "Add a store"), 2);
    expect(gone).toMatchObject({ stale: true, version: 2, startLine: 6 });
    const [twice] = reanchor([a("a-3", 2, 2)], PLAN, 2); // an empty line: found more than once
    expect(twice?.stale).toBe(true);
    // Back to a version where the lines are found: no longer stale.
    expect(reanchor([{ ...a("a-4", 6, 6), stale: true, version: 2 }], moved, 3)[0]).toEqual({ ...a("a-4", 6, 6), startLine: 8, endLine: 8, version: 3 });
  });

  it("the wire form keeps only the protocol's fields; labels name the lines", () => {
    const draft: DraftAnnotation = { id: "a-1", kind: "delete", startLine: 2, endLine: 3, quote: "x", text: " ", version: 1, source: "x", stale: false };
    expect(toWire(draft)).toEqual({ kind: "delete", startLine: 2, endLine: 3, quote: "x" });
    expect(lineLabel(draft)).toBe("Lines 2–3");
    expect(lineLabel({ startLine: 4, endLine: 4 })).toBe("Line 4");
  });
});
