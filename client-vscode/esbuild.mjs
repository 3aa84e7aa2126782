// Bundles the extension (node, CommonJS, `vscode` external) and the two
// webviews (browser, IIFE) into dist/.
import * as esbuild from "esbuild";

const watch = process.argv.includes("--watch");
const production = process.env.NODE_ENV === "production";

/** @type {esbuild.BuildOptions[]} */
const builds = [
  {
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    sourcemap: !production,
    minify: production,
    logLevel: "info",
  },
  {
    entryPoints: {
      "webview/sidebar": "src/shell/webview/main.ts",
      "webview/plan": "src/features/plans/webview/main.ts",
    },
    outdir: "dist",
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    sourcemap: !production,
    minify: production,
    loader: { ".css": "css" },
    logLevel: "info",
  },
];

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
