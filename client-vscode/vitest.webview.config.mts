import { defineConfig } from "vitest/config";

// Webview tests: the bundled webviews in headless Chromium (run `npm run build` first).
export default defineConfig({
  test: {
    include: ["test/webview/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
