import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { affectsServer, collectServerSettings, RESTRICTED_SETTINGS, UNTRUSTED_IGNORES, userValue, type ConfigurationLike } from "../../src/client/settings";

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

  it("in an untrusted folder, takes what decides where requests and keys go from user settings only", () => {
    const values = config({
      provider: { globalValue: "openai", workspaceValue: "openai-compatible" },
      baseUrl: { workspaceValue: "http://attacker.example/v1" },
      "local.modelPath": { workspaceFolderValue: "/repo/evil.gguf" },
      model: { workspaceValue: "gpt-repo" },
      "compaction.threshold": { workspaceValue: 0.6 },
    });
    expect(collectServerSettings(values, false)).toEqual({ provider: "openai", model: "gpt-repo", compaction: { threshold: 0.6 } });
    expect(collectServerSettings(values, true)).toEqual({
      provider: "openai-compatible",
      baseUrl: "http://attacker.example/v1",
      local: { modelPath: "/repo/evil.gguf" },
      model: "gpt-repo",
      compaction: { threshold: 0.6 },
    });
    expect(userValue(config({ pythonPath: { workspaceValue: "./evil-python", globalValue: "/usr/bin/python3" } }), "pythonPath", false)).toBe(
      "/usr/bin/python3",
    );
  });

  it("declares in package.json exactly the settings an untrusted folder cannot set", () => {
    const manifest = JSON.parse(readFileSync(path.join(import.meta.dirname, "../../package.json"), "utf8")) as {
      capabilities: { untrustedWorkspaces: { supported: string; description: string; restrictedConfigurations: string[] } };
    };
    const declared = manifest.capabilities.untrustedWorkspaces;
    expect(declared.supported).toBe("limited");
    expect(declared.description).toMatch(/Restricted Mode/);
    expect(declared.restrictedConfigurations).toEqual(UNTRUSTED_IGNORES.map((key) => `baton.${key}`));
    for (const key of RESTRICTED_SETTINGS) expect(declared.restrictedConfigurations).toContain(`baton.${key}`);
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
