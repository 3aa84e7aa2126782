// Baton's key bindings take no key VS Code or a common extension uses, and each is
// scoped by a `when` clause (issue 50: Ctrl+Alt+I was VS Code's "Chat: Open Chat").
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

interface Binding {
  command: string;
  key: string;
  mac?: string;
  when?: string;
}

const manifest = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8")) as {
  contributes: { keybindings: Binding[]; commands: Array<{ command: string }> };
};
const bindings = manifest.contributes.keybindings;

// Keys taken by VS Code itself (Chat, the secondary side bar, Find/Replace, the
// terminal, multi-cursor) and by widely installed extensions (Code Runner, Bookmarks,
// GitHub Copilot, Live Server), on Linux/Windows and on macOS.
const TAKEN = new Set([
  "ctrl+alt+i", "cmd+alt+i", "ctrl+i", "cmd+i", "ctrl+shift+i", "cmd+shift+i", // Chat, Copilot, format
  "ctrl+alt+b", "cmd+alt+b", // toggle the secondary side bar
  "ctrl+alt+enter", "cmd+alt+enter", // Replace All
  "ctrl+alt+n", "ctrl+alt+m", "cmd+alt+n", "cmd+alt+m", // Code Runner: run, stop
  "ctrl+alt+k", "ctrl+alt+l", "ctrl+alt+j", "cmd+alt+k", "cmd+alt+l", "cmd+alt+j", // Bookmarks
  "ctrl+alt+backspace", // X server zap on Linux
  "ctrl+alt+up", "ctrl+alt+down", "ctrl+shift+alt+up", "ctrl+shift+alt+down", // add cursor
  "ctrl+alt+r", "cmd+alt+r", "ctrl+alt+c", "cmd+alt+c", // reveal in explorer, copy path
  "ctrl+shift+alt+c", "cmd+shift+alt+c", // copy relative path
]);

describe("key bindings", () => {
  it("each has a when clause and a key nothing else takes", () => {
    expect(bindings.length).toBeGreaterThan(0);
    for (const binding of bindings) {
      expect(binding.when, binding.command).toBeTruthy();
      expect(TAKEN.has(binding.key), `${binding.command}: ${binding.key}`).toBe(false);
      if (binding.mac) expect(TAKEN.has(binding.mac), `${binding.command}: ${binding.mac}`).toBe(false);
    }
  });

  it("binds only Baton's own commands, each key once", () => {
    const commands = new Set(manifest.contributes.commands.map((c) => c.command));
    for (const binding of bindings) expect(commands.has(binding.command), binding.command).toBe(true);
    expect(new Set(bindings.map((b) => b.key)).size).toBe(bindings.length);
  });

  it("Stop is bound only while a turn runs", () => {
    const stop = bindings.find((b) => b.command === "baton.cancelTurn");
    expect(stop?.when).toContain("baton.turnRunning");
  });
});
