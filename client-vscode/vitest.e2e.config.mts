import { defineConfig } from "vitest/config";

// The real-VS-Code test (code-server). Needs `npm run package` and
// scripts/setup-code-server.sh first; BATON_SKIP_VSCODE_E2E=1 skips it.
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.test.ts"],
    environment: "node",
    testTimeout: 240_000,
    hookTimeout: 240_000,
    fileParallelism: false,
    sequence: { concurrent: false },
  },
});
