// What the extension knows about sessions between requests: which one is
// active (the sidebar's), each session's mode, context usage and whether a
// turn is running. The server stays the source of truth; this mirrors it.
import * as vscode from "vscode";
import type { Mode } from "../protocol";

export interface Usage {
  tokens: number;
  contextWindow: number;
}

/** Tokens the provider reported for a session's requests, summed. */
export interface TokenTotals {
  input: number;
  cached: number;
  output: number;
  requests: number;
}

/** The provider and model a session's next request goes to. */
export interface ModelChoice {
  provider?: string;
  model?: string;
}

export class SessionState implements vscode.Disposable {
  private active: string | undefined;
  private readonly modes = new Map<string, Mode>();
  private readonly titles = new Map<string, string>();
  private readonly usage = new Map<string, Usage>();
  private readonly running = new Set<string>();
  private readonly compacting = new Set<string>();
  private readonly totals = new Map<string, TokenTotals>();
  private readonly models = new Map<string, ModelChoice>();

  private readonly activeEmitter = new vscode.EventEmitter<string | undefined>();
  private readonly changeEmitter = new vscode.EventEmitter<string>();
  /** The active session changed. */
  readonly onDidChangeActive = this.activeEmitter.event;
  /** Something about a session (mode, usage, running, compacting) changed. */
  readonly onDidChangeSession = this.changeEmitter.event;

  get activeSessionId(): string | undefined {
    return this.active;
  }

  setActive(sessionId: string | undefined): void {
    if (this.active === sessionId) return;
    this.active = sessionId;
    this.activeEmitter.fire(sessionId);
  }

  remember(sessionId: string, info: { mode?: Mode; title?: string }): void {
    if (info.title !== undefined) this.titles.set(sessionId, info.title);
    if (info.mode !== undefined) this.setMode(sessionId, info.mode);
  }

  title(sessionId: string): string | undefined {
    return this.titles.get(sessionId);
  }

  mode(sessionId: string): Mode | undefined {
    return this.modes.get(sessionId);
  }

  setMode(sessionId: string, mode: Mode): void {
    if (this.modes.get(sessionId) === mode) return;
    this.modes.set(sessionId, mode);
    this.changeEmitter.fire(sessionId);
  }

  usageOf(sessionId: string): Usage | undefined {
    return this.usage.get(sessionId);
  }

  setUsage(sessionId: string, usage: Usage): void {
    this.usage.set(sessionId, usage);
    this.changeEmitter.fire(sessionId);
  }

  isRunning(sessionId: string): boolean {
    return this.running.has(sessionId);
  }

  setRunning(sessionId: string, running: boolean): void {
    if (running === this.running.has(sessionId)) return;
    if (running) this.running.add(sessionId);
    else this.running.delete(sessionId);
    this.changeEmitter.fire(sessionId);
  }

  isCompacting(sessionId: string): boolean {
    return this.compacting.has(sessionId);
  }

  setCompacting(sessionId: string, compacting: boolean): void {
    if (compacting === this.compacting.has(sessionId)) return;
    if (compacting) this.compacting.add(sessionId);
    else this.compacting.delete(sessionId);
    this.changeEmitter.fire(sessionId);
  }

  tokenTotals(sessionId: string): TokenTotals | undefined {
    return this.totals.get(sessionId);
  }

  /** The server's totals (from baton/session/load). */
  setTokenTotals(sessionId: string, totals: TokenTotals): void {
    this.totals.set(sessionId, totals);
    this.changeEmitter.fire(sessionId);
  }

  /** One more request's figures (a `usage` update). */
  addTokens(sessionId: string, input: number, cached: number, output: number): void {
    const t = this.totals.get(sessionId) ?? { input: 0, cached: 0, output: 0, requests: 0 };
    this.totals.set(sessionId, {
      input: t.input + input,
      cached: t.cached + cached,
      output: t.output + output,
      requests: t.requests + 1,
    });
    this.changeEmitter.fire(sessionId);
  }

  modelOf(sessionId: string): ModelChoice | undefined {
    return this.models.get(sessionId);
  }

  setModel(sessionId: string, choice: ModelChoice): void {
    this.models.set(sessionId, choice);
    this.changeEmitter.fire(sessionId);
  }

  /** A deleted session: forget everything about it. */
  forget(sessionId: string): void {
    this.modes.delete(sessionId);
    this.titles.delete(sessionId);
    this.usage.delete(sessionId);
    this.totals.delete(sessionId);
    this.models.delete(sessionId);
    this.running.delete(sessionId);
    this.compacting.delete(sessionId);
    if (this.active === sessionId) this.setActive(undefined);
  }

  dispose(): void {
    this.activeEmitter.dispose();
    this.changeEmitter.dispose();
  }
}
