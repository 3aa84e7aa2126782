// Renders a session's conversation: messages from baton/session/load and the
// live baton/session/update stream (answer chunks, thoughts, tool calls,
// compaction markers).
import type { Message, SessionUpdate } from "../../src/protocol";
import { el, formatTokens } from "../shared/dom";
import { setMarkdown } from "../shared/markdown";

type Part = Message["parts"][number];

interface OpenBlock {
  kind: "text" | "thought";
  node: HTMLElement;
  source: string;
}

export class Transcript {
  private open: OpenBlock | undefined;
  private readonly tools = new Map<string, HTMLElement>();
  private pendingRender: OpenBlock | undefined;

  constructor(
    private readonly root: HTMLElement,
    /** Called with a message id when the person asks to fork after that message. */
    private readonly onFork?: (messageId: string) => void,
  ) {}

  clear(): void {
    this.root.replaceChildren();
    this.tools.clear();
    this.open = undefined;
  }

  load(messages: Message[]): void {
    this.clear();
    messages.forEach((message, index) => {
      const compacted = message.compacted === true;
      if (message.role === "user") {
        // A pre-compact round's prompt carries its audit entry: mark where the round began.
        for (const part of message.parts) if (part.type === "pre_compact") this.part(part, compacted);
        const text = message.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
        this.user(text, compacted);
        return;
      }
      if (message.role === "system") {
        // Baton's own entries: where a compaction happened, how a pre-compact round ended.
        for (const part of message.parts) {
          if (part.type === "compaction" || part.type === "pre_compact") this.part(part, compacted);
        }
        this.open = undefined;
        return;
      }
      for (const part of message.parts) this.part(part, message.compacted === true);
      this.open = undefined;
      // Between turns (after a turn's last answer) the session can be forked.
      const next = messages[index + 1];
      if (this.onFork && (!next || next.role === "user")) this.forkPoint(message.id);
    });
    this.scroll();
  }

  /** After a live turn: the answer just streamed can be forked after (once). */
  addForkPoint(messageId: string): void {
    if (!this.onFork || this.root.querySelector(`[data-kind=fork-point][data-message-id="${CSS.escape(messageId)}"]`)) return;
    this.open = undefined;
    this.forkPoint(messageId);
    this.scroll();
  }

  private forkPoint(messageId: string): void {
    const button = el("button", { type: "button", class: "fork-here", title: "Fork: a new session with the history up to here" }, "Fork from here");
    button.addEventListener("click", () => this.onFork?.(messageId));
    this.root.append(el("div", { class: "fork-point", "data-kind": "fork-point", "data-message-id": messageId }, button));
  }

  user(text: string, compacted = false): void {
    this.open = undefined;
    const node = el("div", { class: `msg user${compacted ? " compacted" : ""}`, "data-kind": "user" }, text);
    this.root.append(node);
    this.scroll();
  }

  private part(part: Part, compacted: boolean): void {
    switch (part.type) {
      case "text":
        this.appendText("text", part.text, compacted);
        this.open = undefined;
        return;
      case "reasoning":
        this.appendText("thought", part.text, compacted);
        this.open = undefined;
        return;
      case "tool_call": {
        const card = this.toolCard(part.toolCallId, part.name, part.input);
        if (compacted) card.classList.add("compacted");
        this.setToolStatus(part.toolCallId, part.status, part.output ?? undefined);
        return;
      }
      case "compaction":
        this.marker("compaction", `Compacted (${part.compactionId})`);
        return;
      case "pre_compact":
        this.open = undefined;
        if (part.status === "failed") {
          this.marker("pre-compact-failed", `Pre-compact round by ${part.hook} failed: ${part.error ?? "unknown error"}`);
        } else if (part.status === "completed") {
          this.marker("pre-compact", `Pre-compact round by ${part.hook} completed`);
        } else {
          this.marker("pre-compact", `Pre-compact round by ${part.hook} (${part.trigger} compaction)`);
        }
        return;
    }
  }

  apply(update: SessionUpdate): void {
    switch (update.kind) {
      case "agent_message_chunk":
        this.appendText("text", update.text, false);
        break;
      case "agent_thought_chunk":
        this.appendText("thought", update.text, false);
        break;
      case "tool_call":
        this.open = undefined;
        this.toolCard(update.toolCallId, update.name, update.input);
        this.setToolStatus(update.toolCallId, update.status, undefined);
        break;
      case "tool_call_update":
        this.setToolStatus(update.toolCallId, update.status, update.output ?? undefined);
        break;
      case "user_message":
        this.user(update.text);
        break;
      case "compaction_started":
        this.open = undefined;
        this.marker("compaction-started", `Compacting (${update.trigger}, ${update.strategy})…`);
        break;
      case "compaction_finished": {
        this.open = undefined;
        const c = update.compaction;
        this.marker(
          "compaction",
          `Compacted (${c.trigger} · ${c.strategy}): ${formatTokens(c.tokensBefore)} → ${formatTokens(c.tokensAfter)} tokens`,
        );
        break;
      }
      case "compaction_failed":
        this.marker("compaction-failed", `Compaction failed: ${update.error}`);
        break;
      case "turn_ended":
        this.open = undefined;
        break;
      case "mcp_server":
        if (update.status === "failed") {
          this.marker("mcp-failed", `MCP server ${update.server} is unavailable: ${update.error ?? "it failed"}`);
        } else if (update.status === "restarting") {
          this.marker("mcp-restarting", `MCP server ${update.server} stopped; restarting it`);
        } else {
          return;
        }
        break;
      case "mode":
      case "usage":
        return; // shown elsewhere
    }
    this.scroll();
  }

  endTurn(stopReason: string | undefined, error: string | undefined): void {
    this.open = undefined;
    if (stopReason && stopReason !== "end_turn") {
      this.marker(`stop-${stopReason}`, error ? `Stopped (${stopReason}): ${error}` : `Stopped (${stopReason})`);
    }
    this.scroll();
  }

  notice(kind: string, text: string): void {
    this.marker(kind, text);
    this.scroll();
  }

  private appendText(kind: "text" | "thought", text: string, compacted: boolean): void {
    if (!this.open || this.open.kind !== kind) {
      const node =
        kind === "text"
          ? el("div", { class: `msg assistant markdown-body${compacted ? " compacted" : ""}`, "data-kind": "assistant" })
          : el("details", { class: `msg thought${compacted ? " compacted" : ""}`, "data-kind": "thought" }, el("summary", {}, "Thinking"));
      const body = kind === "text" ? node : el("div", { class: "thought-body" });
      if (kind === "thought") node.append(body);
      this.root.append(node);
      this.open = { kind, node: body, source: "" };
    }
    this.open.source += text;
    this.scheduleRender(this.open);
  }

  private scheduleRender(block: OpenBlock): void {
    if (block.kind === "thought") {
      block.node.textContent = block.source;
      return;
    }
    if (this.pendingRender && this.pendingRender !== block) setMarkdown(this.pendingRender.node, this.pendingRender.source);
    this.pendingRender = block;
    requestAnimationFrame(() => {
      if (this.pendingRender === block) {
        setMarkdown(block.node, block.source);
        this.pendingRender = undefined;
      }
    });
  }

  private toolCard(toolCallId: string, name: string, input: Record<string, unknown>): HTMLElement {
    let card = this.tools.get(toolCallId);
    if (card) return card;
    card = document.createElement("vscode-collapsible");
    card.className = "tool-card";
    card.dataset.kind = "tool";
    card.dataset.toolCallId = toolCallId;
    card.setAttribute("heading", name);
    card.setAttribute("description", summarizeInput(name, input));
    const status = el("span", { class: "tool-status", slot: "decorations" });
    const inputBlock = el("pre", { class: "tool-input" }, JSON.stringify(input, null, 2));
    const output = el("pre", { class: "tool-output", hidden: "" });
    card.append(status, el("div", { class: "tool-body" }, inputBlock, output));
    this.root.append(card);
    this.tools.set(toolCallId, card);
    return card;
  }

  private setToolStatus(toolCallId: string, status: string, output: string | undefined): void {
    const card = this.tools.get(toolCallId);
    if (!card) return;
    card.dataset.status = status;
    const badge = card.querySelector(".tool-status");
    if (badge) badge.textContent = status.replace("_", " ");
    if (output !== undefined) {
      const pre = card.querySelector<HTMLElement>(".tool-output");
      if (pre) {
        pre.textContent = output;
        pre.hidden = false;
      }
    }
  }

  private marker(kind: string, text: string): void {
    this.root.append(el("div", { class: `marker ${kind}`, "data-kind": kind }, text));
  }

  private scroll(): void {
    this.root.scrollTop = this.root.scrollHeight;
  }
}

function summarizeInput(name: string, input: Record<string, unknown>): string {
  const pick = input.command ?? input.path ?? input.pattern;
  if (typeof pick === "string") return pick.length > 80 ? `${pick.slice(0, 80)}…` : pick;
  return name.startsWith("plan_") ? "plan" : "";
}
