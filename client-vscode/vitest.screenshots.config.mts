import { defineConfig } from "vitest/config";

// The README's screenshots in real VS Code (code-server): `npm run screenshots`
// (scripts/screenshots.sh packages the extension and sets up code-server first).
export default defineConfig({
  test: {
    include: ["test/screenshots/**/*.screenshots.ts"],
    environment: "node",
    testTimeout: 300_000,
    hookTimeout: 240_000,
    fileParallelism: false,
    sequence: { concurrent: false },
  },
});
