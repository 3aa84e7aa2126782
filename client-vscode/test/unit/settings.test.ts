import { describe, expect, it } from "vitest";
import { affectsServer, collectServerSettings, type ConfigurationLike } from "../../src/client/settings";

function config(values: Record<string, { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }>): ConfigurationLike {
  return { inspect: <T>(key: string) => values[key] as { globalValue?: T } | undefined };
}

describe("server settings", () => {
  it("sends only what the user set, camelCase, dotted keys nested", () => {
    const settings = collectServerSettings(
      config({
        provider: { globalValue: "openai-compatible" },
        baseUrl: { workspaceValue: "http://127.0.0.1:11434/v1" },
        model: {},
        "compaction.threshold": { globalValue: 0.9, workspaceValue: 0.6 },
        "compaction.strategy": { workspaceFolderValue: "native" },
        "plans.dir": { globalValue: "  " },
      }),
    );
    expect(settings).toEqual({
      provider: "openai-compatible",
      baseUrl: "http://127.0.0.1:11434/v1",
      compaction: { threshold: 0.6, strategy: "native" },
    });
  });

  it("takes env.scrub / env.keep from the user's settings only, never a workspace's", () => {
    const settings = collectServerSettings(
      config({
        "env.keep": { globalValue: ["GH_TOKEN"], workspaceValue: ["*"], workspaceFolderValue: ["AWS_SECRET_ACCESS_KEY"] },
        "env.scrub": { workspaceValue: [] },
      }),
    );
    expect(settings).toEqual({ env: { keep: ["GH_TOKEN"] } });
  });

  it("sends nothing when nothing is set", () => {
    expect(collectServerSettings(config({}))).toEqual({});
  });

  it("knows which changes need a server restart", () => {
    expect(affectsServer((s) => s === "baton.compaction.threshold")).toBe(true);
    expect(affectsServer((s) => s === "baton.pythonPath")).toBe(true);
    expect(affectsServer((s) => s === "baton.server.tcp")).toBe(true);
    expect(affectsServer((s) => s === "baton.env.keep")).toBe(true);
    expect(affectsServer((s) => s === "editor.fontSize")).toBe(false);
  });
});
