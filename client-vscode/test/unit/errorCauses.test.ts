// The sidebar titles an error by the cause the server names, in the server's own words
// (server/baton/causes.py), so `baton run`, ACP editors and the sidebar say the same.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CAUSE_ADVICE, CAUSE_TITLES, causeOfText, describeError } from "../../src/features/sessions/webview/errors";
import { errorCause } from "../../src/util/errors";

const causesPy = readFileSync(path.resolve(import.meta.dirname, "../../../server/baton/causes.py"), "utf8");

/** `"name": "words",` entries of one dict literal in causes.py. */
function pythonDict(name: string): Record<string, string> {
  const body = new RegExp(`^${name}: dict\\[[^\\]]+\\] = \\{\\n([\\s\\S]*?)\\n\\}`, "m").exec(causesPy)?.[1] ?? "";
  return Object.fromEntries([...body.matchAll(/^\s+"(\w+)": "(.*)",$/gm)].map((m) => [m[1], (m[2] ?? "").replace(/\\'/g, "'")]));
}

describe("error causes", () => {
  it("titles and advice are the server's, for every cause", () => {
    expect(pythonDict("TITLES")).toEqual(CAUSE_TITLES);
    expect(pythonDict("ADVICE")).toEqual(CAUSE_ADVICE);
  });

  it("the cause decides the title, not the provider's name in the message", () => {
    // The case: an OpenAI-compatible server's 429 read as "not fully configured".
    const raw = "openai-compatible (http://localhost:11434/v1) returned HTTP 429: slow down (gave up after 4 retries)";
    expect(describeError(raw, "rate_limit").title).toBe(
      "The model server is rate-limiting requests. Baton retried 4 times. Wait a moment, then retry.",
    );
    // Without a cause (an older server) the words are read status first, name last.
    expect(causeOfText(raw)).toBe("rate_limit");
    expect(causeOfText("the stream broke after partial output: openai-compatible (http://x/v1): connection failed: ReadError")).toBe("connection_dropped");
    const dropped = describeError("the stream broke after partial output", "connection_dropped");
    expect(dropped.title).toBe("The connection to the model server dropped mid-answer. The partial answer is kept; retry to ask again.");
    expect(dropped.actions.map((a) => a.action)).toEqual(["showLog"]);
  });

  it("each cause offers the actions that fit it", () => {
    const actions = (cause: Parameters<typeof describeError>[1]) => describeError("x", cause).actions.map((a) => a.action);
    expect(actions("rate_limit")).toEqual(["showLog"]);
    expect(actions("server_error")).toEqual(["showLog"]);
    expect(actions("model_not_found")).toEqual(["chooseModel", "useCompatibleServer"]);
    expect(actions("model_missing")).toEqual(["chooseModel", "useCompatibleServer"]);
    expect(actions("key_refused")).toEqual(["setKey", "useCompatibleServer"]);
    expect(actions("not_configured")).toEqual(["useCompatibleServer", "setKey", "useLocalModel"]);
    expect(actions("unreachable")).toEqual(["useCompatibleServer", "showLog"]);
    expect(describeError("Pending response rejected since connection got disposed").title).toBe("The Baton server stopped.");
  });

  it("reads the cause from a JSON-RPC error's data", () => {
    expect(errorCause({ code: -32003, message: "m", data: { cause: "rate_limit", status: 429 } })).toBe("rate_limit");
    expect(errorCause({ code: -32003, message: "m" })).toBeUndefined();
    expect(errorCause(new Error("plain"))).toBeUndefined();
  });
});
