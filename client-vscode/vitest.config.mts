import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: {
      vscode: path.resolve(import.meta.dirname, "test/mocks/vscode.ts"),
      "vscode-languageclient/node": path.resolve(import.meta.dirname, "test/mocks/languageclient.ts"),
    },
  },
  test: {
    include: ["test/unit/**/*.test.ts"],
    environment: "node",
    restoreMocks: false,
  },
});
