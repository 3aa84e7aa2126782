// The connection to the Baton server: a vscode-languageclient LanguageClient
// over stdio, typed requests and notifications, restart, and the events the
// views subscribe to (they outlive any one server process).
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import {
  PERMISSION_REQUEST,
  type ClientNotificationMethod,
  type ClientNotificationParams,
  type ParamsOf,
  type PermissionRequestParams,
  type PermissionResponse,
  type PlanDidChangeNotification,
  type PlanShowNotification,
  type RequestMethod,
  type ResultOf,
  type SessionUpdateNotification,
} from "../protocol";
import type { LaunchPlan } from "./launch";
import { StartupError } from "./startupError";
import { connectTcp, readToken, type TcpTarget } from "./tcp";

export type ServerState = "stopped" | "starting" | "running" | "failed";

export type PermissionHandler = (
  params: PermissionRequestParams,
  token: vscode.CancellationToken,
) => Promise<PermissionResponse>;

export interface BatonClientOptions {
  output: vscode.LogOutputChannel;
  /** Resolves the interpreter and provisions Baton if needed. */
  prepare(): Promise<LaunchPlan>;
  initializationOptions(): Record<string, unknown>;
  workspaceFolder(): vscode.WorkspaceFolder | undefined;
  /** Runs after every (re)start, for example to hand over the stored API key. */
  afterStart(client: BatonClient): Promise<void>;
  /** Shows a start-up problem to the person. */
  reportProblem(error: unknown): void;
  /** How long the server may take to answer `initialize` (default 60 s). */
  startTimeoutMs?: number;
  /**
   * A running `baton serve --tcp` to connect to instead of starting a server
   * (`baton.server.tcp`); undefined for stdio. Throws when the setting is wrong.
   */
  tcp?(): TcpTarget | undefined;
}

const MAX_CRASH_RESTARTS = 3;
const DEFAULT_START_TIMEOUT_MS = 60_000;
const CRASH_WINDOW_MS = 3 * 60_000;

export class BatonClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private crashes: number[] = [];
  private currentState: ServerState = "stopped";
  private permissionHandler: PermissionHandler | undefined;
  /** Why the last start failed; kept until an explicit restart so one problem is reported once. */
  private failure: unknown;
  private lastCommand: string | undefined;
  private lastEnv: NodeJS.ProcessEnv | undefined;
  /** The connection to a shared TCP server, closed (never sent `exit`) on stop. */
  private socket: { destroy(): void } | undefined;

  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly updateEmitter = new vscode.EventEmitter<SessionUpdateNotification>();
  private readonly planChangeEmitter = new vscode.EventEmitter<PlanDidChangeNotification>();
  private readonly planShowEmitter = new vscode.EventEmitter<PlanShowNotification>();

  readonly onDidChangeState = this.stateEmitter.event;
  readonly onSessionUpdate = this.updateEmitter.event;
  readonly onPlanDidChange = this.planChangeEmitter.event;
  readonly onPlanShow = this.planShowEmitter.event;

  constructor(private readonly options: BatonClientOptions) {}

  get state(): ServerState {
    return this.currentState;
  }

  /** The Python interpreter the server was last started with (for `baton model install`). */
  get pythonCommand(): string | undefined {
    return this.lastCommand;
  }

  /** The environment the server was last started with (for `baton doctor`). */
  get launchEnv(): NodeJS.ProcessEnv | undefined {
    return this.lastEnv;
  }

  setPermissionHandler(handler: PermissionHandler): vscode.Disposable {
    this.permissionHandler = handler;
    return new vscode.Disposable(() => {
      if (this.permissionHandler === handler) this.permissionHandler = undefined;
    });
  }

  /**
   * Starts the server unless it is running or starting. A failure is reported
   * once and rethrown; later calls fail the same way, silently, until restart().
   */
  ensureStarted(): Promise<void> {
    if (this.client && this.currentState === "running") return Promise.resolve();
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  async request<M extends RequestMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    await this.ensureStarted();
    const client = this.client;
    if (!client) throw new Error("Baton: the server is not running.");
    return client.sendRequest<ResultOf<M>>(method, params);
  }

  async notify<M extends ClientNotificationMethod>(method: M, params: ClientNotificationParams<M>): Promise<void> {
    await this.ensureStarted();
    await this.client?.sendNotification(method, params);
  }

  async restart(): Promise<void> {
    await this.stop();
    this.failure = undefined;
    this.crashes = [];
    await this.ensureStarted();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    // A TCP server is shared and stops on `exit` from any client: close this
    // connection without the shutdown/exit a stop() would send.
    this.socket?.destroy();
    this.socket = undefined;
    if (client) {
      try {
        await client.stop(5_000);
      } catch (error) {
        this.options.output.appendLine(`[client] stop: ${String(error)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.setState("stopped");
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.stateEmitter.dispose();
    this.updateEmitter.dispose();
    this.planChangeEmitter.dispose();
    this.planShowEmitter.dispose();
  }

  private setState(state: ServerState): void {
    if (this.currentState === state) return;
    this.currentState = state;
    this.stateEmitter.fire(state);
  }

  /** Server → client requests a feature answers (baton/question/request, baton/editor/diagnostics),
   * registered on every (re)started connection. */
  private readonly serverRequests = new Map<string, (params: never, token: vscode.CancellationToken) => Promise<unknown>>();

  onServerRequest<P>(method: string, handler: (params: P, token: vscode.CancellationToken) => Promise<unknown>): vscode.Disposable {
    this.serverRequests.set(method, handler as (params: never, token: vscode.CancellationToken) => Promise<unknown>);
    return new vscode.Disposable(() => this.serverRequests.delete(method));
  }

  private log(line: string): void {
    this.options.output.appendLine(`[client] ${line}`);
  }

  private async start(): Promise<void> {
    this.setState("starting");
    let serverOptions: ServerOptions;
    let initializationOptions = this.options.initializationOptions();
    let describe: string;
    let tcp: TcpTarget | undefined;
    let address = "baton.server.tcp";
    try {
      tcp = this.options.tcp?.();
      if (tcp) {
        address = tcp.address;
        initializationOptions = { ...initializationOptions, token: await readToken(tcp) };
      }
    } catch (error) {
      throw this.failed(new StartupError({ kind: "connect-failed", address, detail: error instanceof Error ? error.message : String(error) }));
    }
    if (tcp) {
      const target = tcp;
      serverOptions = async () => {
        const socket = await connectTcp(target);
        this.socket = socket;
        return { reader: socket, writer: socket };
      };
      describe = `connecting to baton serve --tcp ${target.address}`;
    } else {
      let plan: LaunchPlan;
      try {
        plan = await this.options.prepare();
      } catch (error) {
        throw this.failed(error);
      }
      this.lastCommand = plan.command;
      this.lastEnv = plan.env;
      const folder = this.options.workspaceFolder();
      serverOptions = {
        command: plan.command,
        args: plan.args,
        options: { env: plan.env, ...(folder ? { cwd: folder.uri.fsPath } : {}) },
      };
      describe = `starting ${plan.command} ${plan.args.join(" ")}`;
    }
    const folder = this.options.workspaceFolder();
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.options.output,
      initializationOptions,
      ...(folder ? { workspaceFolder: folder } : {}),
      connectionOptions: { maxRestartCount: MAX_CRASH_RESTARTS },
      initializationFailedHandler: (error) => {
        this.log(`initialize failed: ${String(error)}`);
        return false;
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        // A TCP connection this client closed on purpose (stop) is not a crash.
        closed: () => (tcp && !this.socket ? { action: CloseAction.DoNotRestart, handled: true } : this.onClosed()),
      },
    };
    const client = new LanguageClient("baton", "Baton Server", serverOptions, clientOptions);
    client.onNotification("baton/session/update", (params: SessionUpdateNotification) =>
      this.updateEmitter.fire(params),
    );
    client.onNotification("baton/plan/didChange", (params: PlanDidChangeNotification) =>
      this.planChangeEmitter.fire(params),
    );
    client.onNotification("baton/plan/show", (params: PlanShowNotification) =>
      this.planShowEmitter.fire(params),
    );
    for (const [method, handler] of this.serverRequests) client.onRequest(method, handler);
    client.onRequest(PERMISSION_REQUEST, async (params: PermissionRequestParams, token) => {
      const handler = this.permissionHandler;
      if (!handler) return { outcome: "cancelled" } satisfies PermissionResponse;
      return handler(params, token);
    });
    client.onDidChangeState((event) => {
      if (this.client !== client) return;
      if (event.newState === State.Running) {
        this.setState("running");
        void this.options.afterStart(this).catch((error) => this.log(`after start: ${String(error)}`));
      } else if (event.newState === State.Starting) {
        this.setState("starting");
      }
    });
    this.client = client;
    this.log(describe);
    const timeoutMs = this.options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        client.start(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`it did not answer "initialize" within ${Math.round(timeoutMs / 1000)} s`)),
            timeoutMs,
          );
        }),
      ]);
    } catch (error) {
      if (this.client === client) this.client = undefined;
      await client.dispose().catch(() => undefined);
      const detail = error instanceof Error ? error.message : String(error);
      throw this.failed(
        tcp
          ? new StartupError({ kind: "connect-failed", address: tcp.address, detail })
          : new StartupError({ kind: "server-failed", interpreter: this.lastCommand ?? "python", detail }),
      );
    } finally {
      if (timer) clearTimeout(timer);
    }
    this.setState("running");
  }

  /** Records and reports a start-up failure once; returns it for the caller to throw. */
  private failed(problem: unknown): unknown {
    this.failure = problem;
    this.setState("failed");
    this.options.reportProblem(problem);
    return problem;
  }

  private onClosed(): { action: CloseAction; handled?: boolean } {
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < CRASH_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length <= MAX_CRASH_RESTARTS) {
      this.log(`server exited; restarting (${this.crashes.length}/${MAX_CRASH_RESTARTS})`);
      return { action: CloseAction.Restart };
    }
    const problem = new StartupError({
      kind: "server-failed",
      interpreter: "baton",
      detail: `the server exited ${MAX_CRASH_RESTARTS + 1} times in 3 minutes`,
    });
    this.failure = problem;
    this.setState("failed");
    this.options.reportProblem(problem);
    return { action: CloseAction.DoNotRestart, handled: true };
  }
}
