// A small stand-in for the `vscode` module (aliased in vitest.config.mts).
// Constructors are plain functions/classes callable with `new`; window and
// command functions are vi.fn()s the tests inspect and script.
import { vi } from "vitest";

type Listener<T> = (value: T) => unknown;

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (listener: Listener<T>) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(value: T): void {
    for (const l of [...this.listeners]) l(value);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
  static from(...items: Array<{ dispose(): unknown }>): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
}

export class Uri {
  constructor(
    readonly scheme: string,
    readonly fsPath: string,
  ) {}
  get path(): string {
    return this.fsPath;
  }
  static file(path: string): Uri {
    return new Uri("file", path);
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, [base.fsPath, ...segments].join("/"));
  }
  static from(components: { scheme: string; path: string }): Uri {
    return new Uri(components.scheme, components.path);
  }
  static parse(value: string): Uri {
    const match = /^([a-z][\w+.-]*):(?:\/\/)?(.*)$/i.exec(value);
    return match ? new Uri(match[1] ?? "file", match[2] ?? "") : new Uri("file", value);
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}`;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string;
  iconPath?: ThemeIcon;
  contextValue?: string;
  command?: { command: string; title: string; arguments?: unknown[] };
  accessibilityInformation?: { label: string };
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export class RelativePattern {
  constructor(
    readonly base: unknown,
    readonly pattern: string,
  ) {}
}

export interface FakeTreeView {
  id: string;
  provider: { getChildren(): unknown; getTreeItem(e: unknown): TreeItem; onDidChangeTreeData: (l: () => unknown) => { dispose(): void } };
  message: string | undefined;
  dispose(): void;
}
export const createdTreeViews: FakeTreeView[] = [];

export interface FakeWatcher {
  pattern: RelativePattern;
  created: EventEmitter<Uri>;
  changed: EventEmitter<Uri>;
  deleted: EventEmitter<Uri>;
}
export const createdWatchers: FakeWatcher[] = [];

// Review feature: diff tabs, files on a fake disk, editors and selections.
export class TabInputTextDiff {
  constructor(
    readonly original: Uri,
    readonly modified: Uri,
  ) {}
}

export enum FileType {
  File = 1,
  Directory = 2,
}

export enum FileChangeType {
  Changed = 1,
  Created = 2,
  Deleted = 3,
}

export class FileSystemError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
  static FileNotFound(uri?: unknown): FileSystemError {
    return new FileSystemError(`not found: ${String(uri)}`, "FileNotFound");
  }
  static NoPermissions(uri?: unknown): FileSystemError {
    return new FileSystemError(`no permissions: ${String(uri)}`, "NoPermissions");
  }
}

/** The fake disk behind workspace.fs, keyed by Uri.toString(). */
export const fakeFiles = new Map<string, string>();

export interface FakeTab {
  input: unknown;
  label: string;
}
export const openTabs: FakeTab[] = [];

export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}

export interface FakeStatusBarItem {
  id: string;
  text: string;
  tooltip: string | undefined;
  command: string | undefined;
  name: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible: boolean;
  show(): void;
  hide(): void;
  dispose(): void;
}

export const statusBarItems: FakeStatusBarItem[] = [];
export const registeredCommands = new Map<string, (...args: unknown[]) => unknown>();
export const configuration: Record<string, { globalValue?: unknown; workspaceValue?: unknown; defaultValue?: unknown }> = {};
export const secretStore = new Map<string, string>();
export const configurationChanged = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();
export const documentSaved = new EventEmitter<unknown>();
/** Fire with `{ document }` when a fake document's text changes (an edit in an editor). */
export const documentChanged = new EventEmitter<{ document: { uri: Uri } }>();
/** VS Code's onDidGrantWorkspaceTrust: fire it after setting workspace.isTrusted = true. */
export const trustGranted = new EventEmitter<void>();

function makeOutputChannel(name: string) {
  const lines: string[] = [];
  return {
    name,
    lines,
    append: vi.fn((s: string) => lines.push(s)),
    appendLine: vi.fn((s: string) => lines.push(s)),
    show: vi.fn(),
    hide: vi.fn(),
    clear: vi.fn(),
    dispose: vi.fn(),
    replace: vi.fn(),
    trace: vi.fn(),
    debug: vi.fn(),
    info: vi.fn(),
    warn: vi.fn(),
    error: vi.fn(),
    logLevel: 2,
    onDidChangeLogLevel: new EventEmitter<number>().event,
  };
}

export interface FakeWebview {
  html: string;
  options: unknown;
  cspSource: string;
  posted: unknown[];
  postMessage(message: unknown): Promise<boolean>;
  asWebviewUri(uri: Uri): Uri;
  onDidReceiveMessage: (listener: (message: unknown) => unknown) => { dispose(): void };
  /** Test helper: a message from the webview. */
  receive(message: unknown): void;
}

export function fakeWebview(): FakeWebview {
  const incoming = new EventEmitter<unknown>();
  return {
    html: "",
    options: {},
    cspSource: "vscode-webview://test",
    posted: [],
    postMessage(message: unknown) {
      this.posted.push(message);
      return Promise.resolve(true);
    },
    asWebviewUri: (uri: Uri) => uri,
    onDidReceiveMessage: incoming.event,
    receive: (message: unknown) => incoming.fire(message),
  };
}

export interface FakeWebviewPanel {
  webview: FakeWebview;
  title: string;
  reveal: ReturnType<typeof vi.fn>;
  visible: boolean;
  onDidChangeViewState: (listener: () => unknown) => { dispose(): void };
  /** Test helper: the panel goes out of view or comes back. */
  setVisible(visible: boolean): void;
  dispose(): void;
  onDidDispose: (listener: () => unknown) => { dispose(): void };
}

export const createdPanels: FakeWebviewPanel[] = [];

export const window = {
  visibleTextEditors: [] as unknown[],
  activeTextEditor: undefined as unknown,
  tabGroups: {
    get all() {
      return [{ tabs: openTabs }];
    },
    activeTabGroup: { activeTab: undefined as FakeTab | undefined },
    close: vi.fn(async (tabs: FakeTab | FakeTab[]) => {
      for (const tab of Array.isArray(tabs) ? tabs : [tabs]) {
        const index = openTabs.indexOf(tab);
        if (index >= 0) openTabs.splice(index, 1);
      }
      return true;
    }),
  },
  createStatusBarItem: vi.fn((id: string) => {
    const item: FakeStatusBarItem = {
      id,
      text: "",
      tooltip: undefined,
      command: undefined,
      name: undefined,
      backgroundColor: undefined,
      visible: false,
      show() {
        this.visible = true;
      },
      hide() {
        this.visible = false;
      },
      dispose() {
        this.visible = false;
      },
    };
    statusBarItems.push(item);
    return item;
  }),
  createOutputChannel: vi.fn((name: string) => makeOutputChannel(name)),
  showErrorMessage: vi.fn(async (..._args: unknown[]) => undefined as unknown),
  showWarningMessage: vi.fn(async (..._args: unknown[]) => undefined as unknown),
  showInformationMessage: vi.fn(async (..._args: unknown[]) => undefined as unknown),
  showInputBox: vi.fn(async (..._args: unknown[]) => undefined as string | undefined),
  showQuickPick: vi.fn(async (..._args: unknown[]) => undefined as unknown),
  setStatusBarMessage: vi.fn(() => new Disposable()),
  withProgress: vi.fn(async (_options: unknown, task: (progress: { report: (v: unknown) => void }, token: unknown) => unknown) =>
    task({ report: vi.fn() }, new CancellationTokenSource().token),
  ),
  registerWebviewViewProvider: vi.fn(() => new Disposable()),
  createTreeView: vi.fn((id: string, options: { treeDataProvider: FakeTreeView["provider"] }) => {
    const view: FakeTreeView = { id, provider: options.treeDataProvider, message: undefined, dispose: () => undefined };
    createdTreeViews.push(view);
    return view;
  }),
  createWebviewPanel: vi.fn((_type: string, title: string) => {
    const disposed = new EventEmitter<void>();
    const viewState = new EventEmitter<void>();
    const panel: FakeWebviewPanel = {
      webview: fakeWebview(),
      title,
      reveal: vi.fn(),
      visible: true,
      onDidChangeViewState: (listener) => viewState.event(listener),
      setVisible(visible: boolean) {
        this.visible = visible;
        viewState.fire();
      },
      dispose: () => disposed.fire(),
      onDidDispose: (listener) => disposed.event(listener),
    };
    createdPanels.push(panel);
    return panel;
  }),
  showTextDocument: vi.fn(async () => undefined),
};

export const commands = {
  registerCommand: vi.fn((id: string, handler: (...args: unknown[]) => unknown) => {
    registeredCommands.set(id, handler);
    return new Disposable(() => registeredCommands.delete(id));
  }),
  executeCommand: vi.fn(async (id: string, ...args: unknown[]) => registeredCommands.get(id)?.(...args)),
};

export const workspace = {
  workspaceFolders: [{ uri: Uri.file("/workspace"), name: "workspace", index: 0 }],
  isTrusted: true,
  onDidGrantWorkspaceTrust: trustGranted.event,
  getConfiguration: vi.fn((section?: string) => {
    const key = (k: string) => (section ? `${section}.${k}` : k);
    return {
      get: (k: string, fallback?: unknown) => {
        const entry = configuration[key(k)];
        return entry?.workspaceValue ?? entry?.globalValue ?? entry?.defaultValue ?? fallback;
      },
      inspect: (k: string) => configuration[key(k)] ?? { key: key(k) },
      update: vi.fn(),
      has: (k: string) => key(k) in configuration,
    };
  }),
  onDidChangeConfiguration: configurationChanged.event,
  onDidSaveTextDocument: documentSaved.event,
  onDidChangeTextDocument: documentChanged.event,
  registerFileSystemProvider: vi.fn((_scheme: string, _provider: unknown, _options?: unknown) => new Disposable()),
  createFileSystemWatcher: vi.fn((pattern: RelativePattern) => {
    const w: FakeWatcher = { pattern, created: new EventEmitter<Uri>(), changed: new EventEmitter<Uri>(), deleted: new EventEmitter<Uri>() };
    createdWatchers.push(w);
    return { onDidCreate: w.created.event, onDidChange: w.changed.event, onDidDelete: w.deleted.event, dispose: () => undefined };
  }),
  openTextDocument: vi.fn(async (arg: unknown) => ({ uri: arg, getText: () => "" })),
  registerTextDocumentContentProvider: vi.fn((_scheme: string, _provider: unknown) => new Disposable()),
  textDocuments: [] as Array<{ uri: Uri; isDirty: boolean; isUntitled: boolean; getText(): string; save?(): Promise<boolean> }>,
  fs: {
    readFile: vi.fn(async (uri: Uri) => {
      const text = fakeFiles.get(uri.toString());
      if (text === undefined) throw Object.assign(new Error(`no such file: ${uri.toString()}`), { code: "FileNotFound" });
      return new TextEncoder().encode(text);
    }),
    stat: vi.fn(async (uri: Uri) => {
      if (!fakeFiles.has(uri.toString())) throw Object.assign(new Error("no such file"), { code: "FileNotFound" });
      return { type: FileType.File, size: fakeFiles.get(uri.toString())?.length ?? 0, ctime: 0, mtime: 0 };
    }),
  },
  findFiles: vi.fn(async () => [...fakeFiles.keys()].map((key) => Uri.parse(key))),
  asRelativePath: vi.fn((uri: Uri | string) => {
    const path = typeof uri === "string" ? uri : uri.fsPath;
    return path.startsWith("/workspace/") ? path.slice("/workspace/".length) : path;
  }),
};

export class Range {
  constructor(
    readonly startLine: number,
    readonly startCharacter: number,
    readonly endLine: number,
    readonly endCharacter: number,
  ) {}
}

export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: { title: string; command: string; arguments?: unknown[] },
  ) {}
}

export const languages = {
  registerCodeLensProvider: vi.fn((_selector: unknown, _provider: unknown) => new Disposable()),
  setTextDocumentLanguage: vi.fn(async (doc: unknown, _language: string) => doc),
};

export const extensions = {
  getExtension: vi.fn(() => undefined),
};

export const env = {
  clipboard: { writeText: vi.fn(async (_text: string) => undefined) },
};

export function resetMock(): void {
  statusBarItems.length = 0;
  createdPanels.length = 0;
  createdTreeViews.length = 0;
  createdWatchers.length = 0;
  registeredCommands.clear();
  secretStore.clear();
  for (const key of Object.keys(configuration)) delete configuration[key];
  fakeFiles.clear();
  openTabs.length = 0;
  window.activeTextEditor = undefined;
  window.tabGroups.activeTabGroup.activeTab = undefined;
  workspace.textDocuments.length = 0;
  workspace.isTrusted = true;
  vi.clearAllMocks();
}

export function fakeExtensionContext() {
  const subscriptions: Array<{ dispose(): unknown }> = [];
  return {
    subscriptions,
    extensionUri: Uri.file("/ext"),
    globalStorageUri: Uri.file("/tmp/baton-test-storage"),
    secrets: {
      get: vi.fn(async (key: string) => secretStore.get(key)),
      store: vi.fn(async (key: string, value: string) => void secretStore.set(key, value)),
      delete: vi.fn(async (key: string) => void secretStore.delete(key)),
      onDidChange: new EventEmitter<unknown>().event,
    },
  };
}
