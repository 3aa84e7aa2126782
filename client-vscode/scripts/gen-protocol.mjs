#!/usr/bin/env node
// Generates src/protocol.generated.ts from the server's JSON Schema
// (server/baton/protocol.py, `json_schema()`), with json-schema-to-typescript.
// `--check` regenerates in memory and fails when the checked-in file differs,
// so the client and the server cannot drift apart unnoticed.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const here = path.dirname(fileURLToPath(import.meta.url));
const clientRoot = path.resolve(here, "..");
const repoRoot = path.resolve(clientRoot, "..");
const outFile = path.join(clientRoot, "src", "protocol.generated.ts");
const check = process.argv.includes("--check");

function python() {
  if (process.env.BATON_PYTHON) return process.env.BATON_PYTHON;
  const venv = path.join(repoRoot, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

function loadSchema() {
  if (process.env.BATON_SCHEMA_FILE) {
    return JSON.parse(readFileSync(process.env.BATON_SCHEMA_FILE, "utf8"));
  }
  // Imports the module directly (no install needed); the same document as `python -m baton schema`.
  const code = "import json; from baton.protocol import json_schema; print(json.dumps(json_schema()))";
  const out = execFileSync(python(), ["-c", code], {
    cwd: repoRoot,
    env: { ...process.env, PYTHONPATH: path.join(repoRoot, "server") },
    encoding: "utf8",
    maxBuffer: 32 * 1024 * 1024,
  });
  return JSON.parse(out);
}

// Property titles ("Session Id") would become stray named types; keep only
// the model titles on the definitions themselves.
function stripTitles(node, keepTitle) {
  if (Array.isArray(node)) return node.map((n) => stripTitles(n, false));
  if (node === null || typeof node !== "object") return node;
  const result = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "title" && !keepTitle && typeof value === "string") continue;
    if (key === "properties" && value && typeof value === "object") {
      result[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, stripTitles(v, false)]),
      );
      continue;
    }
    result[key] = stripTitles(value, false);
  }
  return result;
}

// A tag such as `kind: Literal["usage"] = "usage"` has a default, so the
// validation schema marks it optional; the server always sends it, and the
// TypeScript side needs it required to narrow unions.
function requireDiscriminators(def) {
  if (!def.properties) return;
  const required = new Set(def.required ?? []);
  for (const [key, prop] of Object.entries(def.properties)) {
    if (prop && typeof prop === "object" && "const" in prop) required.add(key);
  }
  def.required = [...required];
}

function methodMaps(schema) {
  const lines = [];
  const methods = schema["x-methods"] ?? {};
  lines.push("/** Client → server requests: params and result of each method. */");
  lines.push("export interface BatonRequests {");
  for (const name of Object.keys(methods).sort()) {
    const m = methods[name];
    const params = m.params === "Empty" ? "Record<string, never>" : m.params;
    let result = m.result === null ? "null" : m.result === "Empty" ? "Record<string, never>" : m.result;
    if (m.nullableResult) result = `${result} | null`;
    lines.push(`  /** ${m.summary} */`);
    lines.push(`  ${JSON.stringify(name)}: { params: ${params}; result: ${result} };`);
  }
  lines.push("}");
  lines.push("");
  lines.push("/** Server → client notifications: params of each. */");
  lines.push("export interface BatonServerNotifications {");
  for (const [name, model] of Object.entries(schema["x-notifications"] ?? {}).sort()) {
    lines.push(`  ${JSON.stringify(name)}: ${model};`);
  }
  lines.push("}");
  lines.push("");
  lines.push("/** Client → server notifications: params of each. */");
  lines.push("export interface BatonClientNotifications {");
  for (const [name, model] of Object.entries(schema["x-client-notifications"] ?? {}).sort()) {
    lines.push(`  ${JSON.stringify(name)}: ${model};`);
  }
  lines.push("}");
  lines.push("");
  lines.push(`export const BATON_PROTOCOL_VERSION = ${JSON.stringify(schema["x-baton-protocol-version"] ?? null)};`);
  return lines.join("\n");
}

async function generate() {
  const schema = loadSchema();
  const defs = {};
  for (const [name, def] of Object.entries(schema.$defs ?? {})) {
    defs[name] = stripTitles({ ...def, title: name }, true);
    requireDiscriminators(defs[name]);
  }
  const root = {
    $defs: defs,
    title: "BatonProtocolRoot",
    type: "object",
    additionalProperties: false,
    properties: Object.fromEntries(Object.keys(defs).map((n) => [n, { $ref: `#/$defs/${n}` }])),
  };
  let ts = await compile(root, "BatonProtocolRoot", {
    bannerComment: "",
    additionalProperties: false,
    declareExternallyReferenced: true,
    unreachableDefinitions: true,
    strictIndexSignatures: true,
    format: true,
    style: { printWidth: 100, singleQuote: false, trailingComma: "all" },
  });
  // The synthetic root only exists to reach every definition.
  ts = ts.replace(/export interface BatonProtocolRoot \{[\s\S]*?\n\}\n/, "");
  const banner =
    "/* eslint-disable */\n" +
    "// GENERATED by scripts/gen-protocol.mjs from server/baton/protocol.py (json_schema()).\n" +
    "// Do not edit by hand: run `npm run gen:protocol`. CI runs `npm run check:protocol`.\n\n";
  return banner + ts.trim() + "\n\n" + methodMaps(schema) + "\n";
}

const generated = await generate();
if (check) {
  const current = existsSync(outFile) ? readFileSync(outFile, "utf8") : "";
  if (current !== generated) {
    console.error(
      "protocol drift: src/protocol.generated.ts does not match the server's JSON Schema.\n" +
        "Run `npm run gen:protocol` in client-vscode/ and commit the result (then fix any type errors).",
    );
    process.exit(1);
  }
  console.log("protocol types are up to date");
} else {
  writeFileSync(outFile, generated);
  console.log(`wrote ${path.relative(clientRoot, outFile)}`);
}
