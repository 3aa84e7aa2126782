// The server settings the user set in VS Code, as `initializationOptions.settings`
// (docs/protocol.md: the keys of .baton/config.toml, camelCase, dotted keys nested).
// Only values the user set are sent, so files and environment still apply.
// Which secrets commands get (`env.*`) is read from the user's own settings only,
// never from a workspace's .vscode/settings.json (see PERSON_ONLY).
//
// The server takes these as the person's own settings. In a folder the person has
// not trusted, a value in its `.vscode/settings.json` is the repository's, not the
// person's: for the settings that decide what runs and where requests and keys go
// (RESTRICTED_SETTINGS) only the person's user-level value is read then. All of
// these are package.json's `restrictedConfigurations` (docs/security.md).

/** The part of WorkspaceConfiguration this module needs. */
export interface ConfigurationLike {
  inspect<T>(section: string):
    | {
        globalValue?: T;
        workspaceValue?: T;
        workspaceFolderValue?: T;
        globalLanguageValue?: T;
        workspaceLanguageValue?: T;
        workspaceFolderLanguageValue?: T;
      }
    | undefined;
}

/** VS Code setting (under `baton.`) → path in the server's settings object. */
export const SERVER_SETTINGS: ReadonlyArray<readonly [setting: string, path: readonly string[]]> = [
  ["provider", ["provider"]],
  ["model", ["model"]],
  ["baseUrl", ["baseUrl"]],
  ["compaction.threshold", ["compaction", "threshold"]],
  ["compaction.strategy", ["compaction", "strategy"]],
  ["plans.dir", ["plans", "dir"]],
  ["local.modelPath", ["local", "modelPath"]],
  ["env.scrub", ["env", "scrub"]],
  ["env.keep", ["env", "keep"]],
];

/** Settings only the person's user settings may give (a repository could otherwise pass itself their tokens). */
export const PERSON_ONLY: ReadonlySet<string> = new Set(["env.scrub", "env.keep"]);

/** Settings that choose the server itself (read by the extension, not sent). */
export const CONNECTION_SETTINGS: ReadonlyArray<string> = ["pythonPath", "server.tcp", "server.tokenFile"];

/**
 * Settings (under `baton.`) whose workspace values an untrusted folder may not set:
 * which interpreter runs the server, which provider and URL get the person's key,
 * which model file is loaded.
 */
export const RESTRICTED_SETTINGS: readonly string[] = ["pythonPath", "provider", "baseUrl", "local.modelPath"];

/**
 * Every setting package.json declares in `restrictedConfigurations`: the restricted ones,
 * and those read from user settings only in any folder (the connection, `env.*`).
 */
export const UNTRUSTED_IGNORES: readonly string[] = [
  ...new Set([...RESTRICTED_SETTINGS, ...CONNECTION_SETTINGS, ...PERSON_ONLY]),
];

/** The value of `baton.<key>` the person set; in an untrusted folder, restricted keys from user settings only. */
export function userValue(config: ConfigurationLike, key: string, trusted = true): unknown {
  const inspected = config.inspect<unknown>(key);
  if (!inspected) return undefined;
  if (PERSON_ONLY.has(key)) return usable(inspected.globalValue);
  const candidates =
    !trusted && RESTRICTED_SETTINGS.includes(key)
      ? [inspected.globalLanguageValue, inspected.globalValue]
      : [
          inspected.workspaceFolderLanguageValue,
          inspected.workspaceFolderValue,
          inspected.workspaceLanguageValue,
          inspected.workspaceValue,
          inspected.globalLanguageValue,
          inspected.globalValue,
        ];
  for (const value of candidates) {
    const found = usable(value);
    if (found !== undefined) return found;
  }
  return undefined;
}

function usable(value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string" && value.trim() === "") return undefined;
  return typeof value === "string" ? value.trim() : value;
}

/** The user-level value of a connection setting (never a workspace's). */
export function userSetting(config: ConfigurationLike, key: string): string | undefined {
  const value = usable(config.inspect<unknown>(key)?.globalValue);
  return typeof value === "string" ? value : undefined;
}

export function collectServerSettings(config: ConfigurationLike, trusted = true): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const [key, path] of SERVER_SETTINGS) {
    const value = userValue(config, key, trusted);
    if (value === undefined) continue;
    let target = settings;
    for (const segment of path.slice(0, -1)) {
      const next = target[segment];
      if (typeof next === "object" && next !== null) {
        target = next as Record<string, unknown>;
      } else {
        const created: Record<string, unknown> = {};
        target[segment] = created;
        target = created;
      }
    }
    target[path[path.length - 1] as string] = value;
  }
  return settings;
}

/** Whether a configuration change touches a setting the running server was started with. */
export function affectsServer(affects: (section: string) => boolean): boolean {
  return CONNECTION_SETTINGS.some((key) => affects(`baton.${key}`)) || SERVER_SETTINGS.some(([key]) => affects(`baton.${key}`));
}
