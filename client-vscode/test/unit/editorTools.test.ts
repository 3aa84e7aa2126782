// The extension's side of issue 49's tools: it answers baton/editor/diagnostics from VS Code's
// diagnostics (as LSP Diagnostics) and baton/question/request (a quick pick when the sidebar
// is not showing; the sidebar's card is covered by test/webview/question.test.ts).
import { beforeEach, describe, expect, it, vi } from "vitest";
import { fake } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";
import { activateExtension } from "./helpers";

const handler = (method: string) => {
  const found = fake.last.requestHandlers.get(method);
  if (!found) throw new Error(`no handler for ${method}`);
  return found;
};
const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };

describe("editor tools (host)", () => {
  beforeEach(async () => {
    const { services } = await activateExtension();
    await services.client.ensureStarted();
  });

  it("answers baton/editor/diagnostics with the file's problems as LSP Diagnostics", async () => {
    const problem = {
      range: { start: { line: 4, character: 2 }, end: { line: 4, character: 9 } },
      severity: 0,
      message: "Type 'string' is not assignable to type 'number'.",
      source: "ts",
      code: { value: 2322, target: "https://example.invalid" },
    };
    const getDiagnostics = vi.fn((_uri?: unknown) => [problem]);
    Object.assign(vscode.languages, { getDiagnostics });
    const result = await handler("baton/editor/diagnostics")({ uris: ["file:///w/app.ts"] }, token);
    expect(result).toEqual({
      items: [
        {
          uri: "file:///w/app.ts",
          diagnostics: [
            {
              range: { start: { line: 4, character: 2 }, end: { line: 4, character: 9 } },
              severity: 1,
              message: "Type 'string' is not assignable to type 'number'.",
              source: "ts",
              code: 2322,
            },
          ],
        },
      ],
    });
    expect(vscode.workspace.openTextDocument).toHaveBeenCalled();
  });

  it("asks a question in a quick pick when the sidebar is not showing", async () => {
    vscode.window.showQuickPick.mockResolvedValueOnce({ label: "Postgres" });
    const answer = await handler("baton/question/request")(
      {
        sessionId: "s-1",
        toolCallId: "call_q",
        question: "Which store?",
        options: [{ label: "SQLite", description: "one file" }, { label: "Postgres" }],
        multiple: false,
        allowText: false,
      },
      token,
    );
    expect(answer).toEqual({ outcome: "answered", labels: ["Postgres"] });
    const [items, options] = vscode.window.showQuickPick.mock.calls.at(-1) as [Array<{ label: string }>, { title: string }];
    expect(items.map((i) => i.label)).toEqual(["SQLite", "Postgres"]);
    expect(options.title).toBe("Baton asks: Which store?");
  });

  it("a dismissed quick pick is a cancelled question", async () => {
    vscode.window.showQuickPick.mockResolvedValueOnce(undefined);
    const answer = await handler("baton/question/request")(
      { sessionId: "s-1", toolCallId: "c", question: "Q?", options: [{ label: "A" }, { label: "B" }], multiple: false, allowText: false },
      token,
    );
    expect(answer).toEqual({ outcome: "cancelled" });
  });
});
