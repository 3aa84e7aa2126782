// Renders a session's conversation: messages from baton/session/load and the
// live baton/session/update stream (answer chunks, thoughts, tool calls,
// compaction markers). Baton's own instructions to the model show as compact
// chips, errors as cards with the actions that fix them.
import type { ErrorCause, Message, SessionUpdate, ShownUpdate, TurnOutcome } from "../../../protocol";
import type { SidebarAction } from "../../../shell/messages";
import { el, formatTokens } from "../../../shell/webview/shared/dom";
import { setMarkdown } from "../../../shell/webview/shared/markdown";
import { describeError } from "./errors";
import { parseTaskResult, stepCallId, taskResultText, type TaskResult } from "../../children/webview/taskResult";
import { CHILD_STATUS_LABELS, type ChildStatus } from "../../children/childMessages";
import { displayOutput, toolTitle } from "./tools";

type Part = Message["parts"][number];
type Origin = NonNullable<Message["origin"]> | "baton";

interface OpenBlock {
  kind: "text" | "thought";
  node: HTMLElement;
  source: string;
}

export interface TranscriptHandlers {
  /** The person asks to fork after this message. */
  fork?(messageId: string): void;
  /** Send the failed turn's prompt again. */
  retry?(): void;
  action?(action: SidebarAction): void;
  /** Something was added or removed (the welcome state follows). */
  changed?(): void;
  /** A `task` call ended: its child's result, for the child's card. */
  taskResult?(result: TaskResult): void;
}

const ORIGIN_LABELS: Record<Origin, string> = {
  approval: "Baton asked the agent to build the approved plan",
  feedback: "Your plan feedback, sent with Baton's instructions",
  continue: "Baton asked the agent to continue after compacting",
  pre_compact: "Baton asked the agent to note its work before compacting",
  baton: "Baton's instruction to the agent",
};

/** Lines of a tool's output shown while its card is collapsed. */
const PREVIEW_LINES = 3;

export class Transcript {
  private open: OpenBlock | undefined;
  private readonly tools = new Map<string, HTMLElement>();
  private pendingRender: OpenBlock | undefined;
  /** The "Compacting…" marker of a compaction in progress (replaced when it ends). */
  private compacting: HTMLElement | undefined;
  /** The end is in view: it stays there when the transcript grows or loses height. */
  private pinned = true;

  constructor(
    private readonly root: HTMLElement,
    private readonly handlers: TranscriptHandlers = {},
  ) {
    // Unpinned only by the person scrolling up. A scroll event is dispatched a frame late:
    // when the view grew (its position clamped) or its entries changed height in between,
    // the lower position is the layout's doing, not theirs (after Reload Window the view is
    // laid out while the Markdown renders, and the end was left 82 px below).
    let last = { top: root.scrollTop, height: root.scrollHeight, client: root.clientHeight };
    root.addEventListener("scroll", () => {
      const now = { top: root.scrollTop, height: root.scrollHeight, client: root.clientHeight };
      const relaid = now.height !== last.height || now.client !== last.client;
      if (now.height - now.top - now.client < 24) this.pinned = true;
      else if (relaid && this.pinned) root.scrollTop = root.scrollHeight;
      else if (now.top < last.top) this.pinned = false;
      last = { top: root.scrollTop, height: root.scrollHeight, client: root.clientHeight };
    });
    // A permission prompt or attachment chips below take room from the transcript: keep
    // its latest messages in view, unless the person scrolled up to read.
    const keepEnd = new ResizeObserver(() => {
      if (this.pinned) root.scrollTop = root.scrollHeight;
      // The layout seen here is the layout's own doing: a scroll event after it is the
      // person's (otherwise a scroll up right after a resize reads as the layout's clamp).
      last = { top: root.scrollTop, height: root.scrollHeight, client: root.clientHeight };
    });
    keepEnd.observe(root);
    // The entries grow after they are added, with no scroll event: Markdown and code
    // render later, custom elements upgrade, and a reopened webview lays out only once it
    // is shown (after Reload Window the end was left below the fold). Each entry's own
    // growth keeps the end in view too.
    new MutationObserver((changes) => {
      for (const change of changes) {
        for (const node of change.addedNodes) if (node instanceof HTMLElement) keepEnd.observe(node);
        for (const node of change.removedNodes) if (node instanceof HTMLElement) keepEnd.unobserve(node);
      }
    }).observe(root, { childList: true });
  }

  clear(): void {
    this.root.replaceChildren();
    this.tools.clear();
    this.open = undefined;
    this.compacting = undefined;
    this.handlers.changed?.();
  }

  /**
   * A session's history, as it was shown live: each turn's end (error card, "Stopped",
   * the step limit) after the message it followed, the compactions with their figures,
   * the retries and the compactions that gained nothing (`notices`) where they were,
   * and the end in view.
   */
  load(messages: Message[], turns: TurnOutcome[] = [], notices: ShownUpdate[] = []): void {
    this.clear();
    this.pinned = true;
    type Entry = { turn: TurnOutcome } | { notice: ShownUpdate["update"] };
    const placed = new Map<string | null, { entry: Entry; at: string }[]>();
    const place = (key: string | null, entry: Entry, at: string) => placed.set(key, [...(placed.get(key) ?? []), { entry, at }]);
    // A retry comes before the turn end it led to: at the same instant, notices go first.
    for (const notice of notices) if (isShownUpdate(notice)) place(notice.afterMessageId ?? null, { notice: notice.update }, notice.createdAt);
    for (const turn of turns) place(turn.afterMessageId ?? null, { turn }, turn.createdAt);
    for (const list of placed.values()) list.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    const lastId = messages[messages.length - 1]?.id;
    const showEnds = (key: string | null, reverted: boolean) => {
      const list = placed.get(key) ?? [];
      const lastTurn = [...list].reverse().find((item) => "turn" in item.entry)?.entry;
      for (const { entry } of list) {
        if ("notice" in entry) {
          this.replayNotice(entry.notice);
          continue;
        }
        // Retry sends the latest failed prompt again: only the session's last end offers it.
        const latest = key === (lastId ?? null) && entry === lastTurn && !reverted;
        const turn = entry.turn;
        this.endTurn(turn.stopReason, turn.error ?? undefined, latest, turn.cause);
        // A failed attempt that was sent again: its card says so, as it did live.
        if (reverted) this.root.lastElementChild?.classList.add("resolved");
      }
    };
    showEnds(null, false);
    messages.forEach((message, index) => {
      this.message(message);
      showEnds(message.id, message.reverted === true);
      // Between turns (after a turn's last answer, Baton's own entries aside) the session
      // can be forked.
      const next = messages.slice(index + 1).find((m) => m.role !== "system");
      if (message.role === "assistant" && this.handlers.fork && (!next || next.role === "user")) this.forkPoint(message.id);
    });
    this.scroll();
    // Markdown renders in the next frame and makes the transcript taller: the end again.
    requestAnimationFrame(() => {
      if (this.pinned) this.root.scrollTop = this.root.scrollHeight;
    });
  }

  /** A retry line or a compaction's marker, as it read once the live wait was over. */
  private replayNotice(update: ShownUpdate["update"]): void {
    if (update.kind === "model_retry") {
      const node = this.marker("retry", `${retryReason(update.status ?? undefined)}: ${retryLabel(update)} sent`);
      node.title = update.reason;
    } else {
      this.compactionFinished(update.compaction);
    }
  }

  private message(message: Message): void {
    const compacted = message.compacted === true;
    if (message.role === "user") {
      // A pre-compact round's prompt carries its audit entry: mark where the round began.
      for (const part of message.parts) if (part.type === "pre_compact") this.part(part, compacted);
      const text = message.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
      if (message.origin) this.baton(text, message.origin, compacted);
      else if (message.command) this.command(message.command.typed, text, compacted);
      else this.user(text, compacted);
      return;
    }
    if (message.role === "system") {
      // Baton's own entries: where a compaction happened, how a pre-compact round ended,
      // where a step-by-step build's step ended (its child's card goes there).
      for (const part of message.parts) {
        if (part.type === "compaction" || part.type === "pre_compact") this.part(part, compacted);
        if (part.type === "text" && part.text.startsWith("<baton:step-result>")) {
          this.root.append(el("div", { class: "step-anchor", "data-call-id": stepCallId(message.id), hidden: "" }));
        }
      }
      this.open = undefined;
      return;
    }
    for (const part of message.parts) this.part(part, message.compacted === true);
    this.open = undefined;
  }

  /** After a live turn: the answer just streamed can be forked after (once). */
  addForkPoint(messageId: string): void {
    if (!this.handlers.fork || this.root.querySelector(`[data-kind=fork-point][data-message-id="${CSS.escape(messageId)}"]`)) return;
    this.open = undefined;
    this.forkPoint(messageId);
    this.scroll();
  }

  private forkPoint(messageId: string): void {
    const button = el("button", { type: "button", class: "fork-here", title: "Fork: a new session with the history up to here" }, "Fork from here");
    button.addEventListener("click", () => this.handlers.fork?.(messageId));
    this.root.append(el("div", { class: "fork-point", "data-kind": "fork-point", "data-message-id": messageId }, button));
  }

  user(text: string, compacted = false): void {
    this.open = undefined;
    const node = el("div", { class: `msg user${compacted ? " compacted" : ""}`, "data-kind": "user" }, text);
    this.root.append(node);
    // What the person just sent: they follow the answer from here.
    this.pinned = true;
    this.scroll();
  }

  /** What the person sent while the agent worked, now with the agent: their words, and when. */
  queuedDelivered(text: string, how: "steer" | "after_turn" | "idle"): void {
    this.open = undefined;
    const when = how === "steer" ? "Sent while the agent worked; it read this at its next step" : how === "after_turn" ? "Sent while the agent worked; sent after its turn" : "";
    const node = el("div", { class: "msg user", "data-kind": "user", "data-queued": how }, text, ...(when ? [el("span", { class: "queued-tag" }, when)] : []));
    this.root.append(node);
    this.pinned = true;
    this.scroll();
  }

  /** The person's `/name arguments` as typed, with what the model was sent one click away. */
  command(typed: string, expanded: string, compacted = false): void {
    this.open = undefined;
    this.root.append(this.commandCard(typed, expanded, compacted));
    this.pinned = true;
    this.scroll();
  }

  /** Live, the server says what a command expanded to after the prompt was shown as sent:
   * that prompt, the transcript's last user message, becomes the command's card in place. */
  private commandAnnounced(typed: string, expanded: string): void {
    const echo = [...this.root.querySelectorAll<HTMLElement>(".msg.user, .baton-prompt")].pop();
    if (echo?.matches(".msg.user:not(.command)") && echo.textContent?.trim() === typed.trim()) {
      this.open = undefined;
      echo.replaceWith(this.commandCard(typed, expanded, false));
    } else {
      this.command(typed, expanded);
    }
  }

  private commandCard(typed: string, expanded: string, compacted: boolean): HTMLElement {
    return el(
      "div",
      { class: `msg user command${compacted ? " compacted" : ""}`, "data-kind": "user", "data-text": typed },
      el("div", { class: "command-typed" }, typed),
      el(
        "details",
        { class: "command-expanded" },
        el("summary", { title: "What the agent was sent for this command" }, "Expanded"),
        el("div", { class: "command-expanded-body" }, expanded),
      ),
    );
  }

  /**
   * A user message Baton wrote (plan approval, feedback, continue): a collapsed chip, not
   * the person's bubble. It is still a turn's first message (data-kind=user) so Undo works;
   * data-text carries the full text the review code matches messages by.
   */
  baton(text: string, origin: Origin, compacted = false): void {
    this.open = undefined;
    const node = el(
      "details",
      { class: `baton-prompt${compacted ? " compacted" : ""}`, "data-kind": "user", "data-origin": origin, "data-text": text },
      el("summary", { title: "Baton wrote this message to the agent; open it to read it" }, ORIGIN_LABELS[origin]),
      el("div", { class: "baton-prompt-body" }, text),
    );
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
      case "compaction": {
        const card = this.marker(
          "compaction",
          part.tokensBefore != null && part.tokensAfter != null
            ? compactionText(part.trigger ?? "manual", part.tokensBefore, part.tokensAfter)
            : "Context compacted here (older messages are summarised for the agent)",
        );
        if (part.score) card.append(el("div", { class: "compaction-score" }, scoreText(part.score)));
        return;
      }
      case "pre_compact":
        this.open = undefined;
        if (part.status === "failed") {
          this.marker("pre-compact-failed", `Pre-compact round by ${part.hook} failed: ${part.error ?? "unknown error"}`);
        } else if (part.status === "completed") {
          this.marker("pre-compact", `Pre-compact round by ${part.hook} completed`);
        } else {
          this.marker("pre-compact", `Pre-compact round by ${part.hook} before compacting`);
        }
        return;
      case "attachment":
        return; // shown as chips on the prompt (review.ts)
    }
  }

  /**
   * The assistant message being streamed ended: the next chunk starts a new block.
   * Streamed chunks carry no message id, so the sidebar ends a message where the server
   * says one ended (a model step's usage, a note, the end or start of a turn).
   */
  endMessage(): void {
    this.open = undefined;
  }

  apply(update: SessionUpdate): void {
    switch (update.kind) {
      case "agent_message_chunk":
        this.endRetry();
        this.appendText("text", update.text, false);
        break;
      case "model_retry":
        this.retry(update);
        break;
      case "agent_thought_chunk":
        this.endRetry();
        this.appendText("thought", update.text, false);
        break;
      case "tool_call":
        this.endRetry();
        this.open = undefined;
        this.toolCard(update.toolCallId, update.name, update.input);
        this.setToolStatus(update.toolCallId, update.status, undefined);
        break;
      case "tool_call_update":
        this.setToolStatus(update.toolCallId, update.status, update.output ?? undefined);
        break;
      case "user_message":
        // The server announces the messages it adds itself, and the person's slash commands.
        if (update.command) this.commandAnnounced(update.command.typed, update.text);
        else if (update.queued) this.queuedDelivered(update.text, update.queued);
        else this.baton(update.text, update.origin ?? "baton");
        break;
      case "compaction_started":
        this.open = undefined;
        this.compacting?.remove();
        this.compacting = this.marker("compaction-started", "Compacting the context…");
        break;
      case "compaction_finished":
        this.open = undefined;
        this.endCompacting();
        this.compactionFinished(update.compaction);
        break;
      case "compaction_failed":
        this.endCompacting();
        this.marker("compaction-failed", `Compaction failed: ${update.error}`);
        break;
      case "turn_ended":
        this.open = undefined;
        break;
      case "usage":
        // Reported once per model step, after its stream: the step's message is complete.
        this.endMessage();
        return;
      case "note":
        // Baton added a note for the model (it answered a question about the code without
        // looking) and runs one more step: that answer is a new message, after the note.
        this.endMessage();
        this.marker("note", NOTE_LABELS[update.reason] ?? "Baton added a note for the agent");
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
      default:
        return; // mode, usage and the rest are shown elsewhere
    }
    this.scroll();
  }

  private compactionFinished(c: Extract<SessionUpdate, { kind: "compaction_finished" }>["compaction"]): void {
    const card = this.marker("compaction", compactionText(c.trigger, c.tokensBefore, c.tokensAfter));
    if (c.score) card.append(el("div", { class: "compaction-score" }, scoreText(c.score)));
  }

  private endCompacting(): void {
    this.compacting?.remove();
    this.compacting = undefined;
    for (const stale of this.root.querySelectorAll(".marker.compaction-started")) stale.remove();
  }

  /**
   * A retry of the model request: its reason and a countdown to the next attempt, kept
   * in the transcript (one line per retry) once the wait is over.
   */
  private retry(update: Extract<SessionUpdate, { kind: "model_retry" }>): void {
    this.endRetry();
    this.open = undefined;
    const why = retryReason(update.status ?? undefined);
    const node = this.marker("retry", "");
    node.title = update.reason;
    node.setAttribute("role", "status");
    const deadline = Date.now() + update.delaySeconds * 1000;
    const label = retryLabel(update);
    const tick = () => {
      const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      node.textContent = left > 0 ? `${why}: ${label} in ${left} s…` : `${why}: ${label} sent…`;
      if (left === 0) this.stopCountdown();
    };
    tick();
    this.countdown = { node, timer: window.setInterval(tick, 250), text: `${why}: ${label} sent` };
  }

  private countdown: { node: HTMLElement; timer: number; text: string } | undefined;

  private stopCountdown(): void {
    if (this.countdown) window.clearInterval(this.countdown.timer);
  }

  /** The retried request answered (or the turn ended): the countdown becomes a record. */
  private endRetry(): void {
    if (!this.countdown) return;
    this.stopCountdown();
    this.countdown.node.textContent = this.countdown.text;
    this.countdown = undefined;
  }

  endTurn(stopReason: string | undefined, error: string | undefined, retryable = true, cause?: ErrorCause | null): void {
    this.endRetry();
    this.open = undefined;
    if (stopReason === "error" || (error && stopReason !== "cancelled")) {
      this.error(error ?? "The turn stopped with an error.", retryable, cause);
    } else if (stopReason === "cancelled") {
      this.marker("stop-cancelled", "Stopped");
    } else if (stopReason === "max_steps") {
      this.marker("stop-max_steps", "The agent stopped after its step limit. Send “continue” to let it go on.");
    } else if (stopReason === "refusal") {
      this.marker("stop-refusal", "The model refused to answer this request.");
    } else if (stopReason && stopReason !== "end_turn") {
      this.marker(`stop-${stopReason}`, `Stopped (${stopReason})`);
    }
    this.scroll();
  }

  /** An error card: what happened in plain words, the actions that fix it, the details folded. */
  error(raw: string, retryable = false, cause?: ErrorCause | null): void {
    const described = describeError(raw, cause);
    const actions = el("div", { class: "error-actions" });
    if (retryable && this.handlers.retry) {
      const retry = el("button", { type: "button", class: "error-action primary", "data-error-action": "retry" }, "Retry");
      retry.addEventListener("click", () => {
        card.classList.add("resolved");
        this.handlers.retry?.();
      });
      actions.append(retry);
    }
    for (const { action, label } of described.actions) {
      const button = el("button", { type: "button", class: "error-action", "data-error-action": action }, label);
      button.addEventListener("click", () => this.handlers.action?.(action));
      actions.append(button);
    }
    const card = el(
      "div",
      { class: "error-card", role: "alert", "data-kind": "error", ...(cause ? { "data-cause": cause } : {}) },
      el("div", { class: "error-title" }, described.title),
      actions,
      el("details", { class: "error-details" }, el("summary", {}, "Details"), el("pre", {}, raw)),
    );
    // Opened at the end of the transcript, the details would grow under the composer.
    const details = card.querySelector("details");
    details?.addEventListener("toggle", () => {
      if (details.open) details.scrollIntoView({ block: "nearest" });
    });
    this.root.append(card);
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
    if (this.pendingRender && this.pendingRender !== block) setMarkdown(this.pendingRender.node, this.pendingRender.source, { codeActions: true });
    this.pendingRender = block;
    requestAnimationFrame(() => {
      if (this.pendingRender === block) {
        setMarkdown(block.node, block.source, { codeActions: true });
        this.pendingRender = undefined;
        // The rendered markdown is taller than the text was: keep the end in view.
        if (this.pinned) this.root.scrollTop = this.root.scrollHeight;
      }
    });
  }

  private toolCard(toolCallId: string, name: string, input: Record<string, unknown>): HTMLElement {
    let card = this.tools.get(toolCallId);
    if (card) return card;
    const title = toolTitle(name, input);
    card = document.createElement("details");
    card.className = "tool-card";
    card.dataset.kind = "tool";
    card.dataset.tool = name;
    card.dataset.toolCallId = toolCallId;
    const status = el("span", { class: "tool-status", role: "status" });
    const summary = el(
      "summary",
      { title: `${title.action} ${title.target}`.trim() },
      el("span", { class: `tool-icon tool-icon-${title.icon}`, "aria-hidden": "true" }, title.glyph),
      el("span", { class: "tool-title" }, el("span", { class: "tool-action" }, title.action), " ", el("span", { class: "tool-target" }, title.target)),
      status,
    );
    // Inside the summary: a closed <details> shows only its summary.
    const preview = el("div", { class: "tool-preview", hidden: "" });
    summary.append(preview);
    const inputBlock = el("details", { class: "tool-input" }, el("summary", {}, "Input"), el("pre", {}, JSON.stringify(input, null, 2)));
    const output = el("pre", { class: "tool-output", hidden: "" });
    card.append(summary, el("div", { class: "tool-body" }, inputBlock, output));
    this.root.append(card);
    this.tools.set(toolCallId, card);
    return card;
  }

  /** While a permission prompt for this call is open, its card says it waits for the person
   * (the server reports a call in progress before the tool asks). */
  askingPermission(toolCallId: string, asking: boolean): void {
    const card = this.tools.get(toolCallId);
    if (!card) return;
    card.toggleAttribute("data-asking", asking);
    showStatus(card);
  }

  private setToolStatus(toolCallId: string, status: string, output: string | undefined): void {
    const card = this.tools.get(toolCallId);
    if (!card) return;
    card.dataset.status = status;
    // Only a call in progress can still be waiting for the person's answer.
    if (status !== "in_progress") card.removeAttribute("data-asking");
    showStatus(card);
    // A child's result is shown in words (and on its card), never Baton's framing for the
    // model; a child the person stopped reads "stopped", not "done".
    const result = card.dataset.tool === "task" && output !== undefined ? parseTaskResult(output) : undefined;
    if (result) {
      output = taskResultText(result);
      card.dataset.childStatus = result.status;
      showStatus(card);
      this.handlers.taskResult?.(result);
    }
    if (output !== undefined) {
      output = displayOutput(card.dataset.tool ?? "", output);
      const pre = card.querySelector<HTMLElement>(".tool-output");
      if (pre) {
        pre.textContent = output;
        pre.hidden = false;
      }
      // Collapsed, the card shows the first lines of the result (failures stand out), or,
      // while a command runs, the last lines of its output so far (live).
      const live = status === "in_progress";
      card.toggleAttribute("data-live", live);
      const preview = card.querySelector<HTMLElement>(".tool-preview");
      if (preview) {
        const lines = output.split("\n").filter((line) => line.trim() !== "");
        const more = lines.length - PREVIEW_LINES;
        // One row per line, each cut at its end with an ellipsis (never mid-row), and the
        // count of what is hidden on a row of its own, always shown.
        const shown = live ? lines.slice(-PREVIEW_LINES) : lines.slice(0, PREVIEW_LINES);
        preview.replaceChildren(
          ...shown.map((line) => el("div", { class: "tool-preview-line", title: line }, line)),
          ...(!live && more > 0 ? [el("div", { class: "tool-preview-more" }, `… ${more} more ${more === 1 ? "line" : "lines"}`)] : []),
        );
        preview.hidden = lines.length === 0;
      }
      if (live && pre) pre.scrollTop = pre.scrollHeight;
    } else if (status !== "in_progress") {
      card.removeAttribute("data-live");
    }
  }

  private marker(kind: string, text: string): HTMLElement {
    const node = el("div", { class: `marker ${kind}`, "data-kind": kind }, text);
    this.root.append(node);
    return node;
  }

  /** The end in view as the transcript grows, unless the person scrolled up to read. */
  private scroll(): void {
    if (this.pinned) this.root.scrollTop = this.root.scrollHeight;
    this.handlers.changed?.();
  }
}

const NOTE_LABELS: Record<Extract<SessionUpdate, { kind: "note" }>["reason"], string> = {
  no_tool: "Baton asked the agent to look at the code before answering",
  empty_answer: "The agent's answer was empty; Baton asked it to answer in words",
};

/** The card's badge: what its status (or an open permission prompt) says. */
function showStatus(card: HTMLElement): void {
  const badge = card.querySelector(".tool-status");
  const status = card.dataset.status ?? "pending";
  const child = card.dataset.childStatus as ChildStatus | undefined;
  const label = child && status === "completed" ? CHILD_STATUS_LABELS[child] : (STATUS_LABELS[status] ?? status);
  if (badge) badge.textContent = card.hasAttribute("data-asking") ? "needs you" : label;
}

const STATUS_LABELS: Record<string, string> = {
  pending: "waiting",
  in_progress: "running",
  completed: "done",
  failed: "failed",
};

/** A compaction marker's words: the same live and in a reopened session. */
function compactionText(trigger: string, before: number, after: number): string {
  return (
    `Context compacted: ${formatTokens(before)} → ${formatTokens(after)} tokens in use` +
    (trigger === "manual" ? "" : ` (${TRIGGERS[trigger] ?? trigger})`)
  );
}

/** What a compaction kept of the facts Baton tracks (issue 45's score), in words. */
function scoreText(score: { facts: number; inView: number; oneRecall: number; viewTokens: number; window: number }): string {
  const share = score.window > 0 ? Math.round((100 * score.viewTokens) / score.window) : 0;
  return (
    `${score.inView} of ${score.facts} tracked facts in view, ${score.oneRecall} one recall away; ` +
    `view ${formatTokens(score.viewTokens)} of ${formatTokens(score.window)} tokens (${share}%)`
  );
}

/** Why a request is retried, in words, from its HTTP status (none: the connection). */
function retryLabel(update: { attempt: number; maxRetries: number }): string {
  return `Retry ${update.attempt} of ${update.maxRetries}`;
}

/** A notice from the host's history is one of the two kinds it keeps, with its fields. */
function isShownUpdate(value: ShownUpdate): boolean {
  const update = (value as { update?: unknown }).update;
  if (typeof update !== "object" || update === null) return false;
  const u = update as Record<string, unknown>;
  if (u.kind === "model_retry") return typeof u.attempt === "number" && typeof u.maxRetries === "number" && typeof u.reason === "string";
  if (u.kind !== "compaction_finished" || typeof u.compaction !== "object" || u.compaction === null) return false;
  const c = u.compaction as Record<string, unknown>;
  return typeof c.tokensBefore === "number" && typeof c.tokensAfter === "number" && typeof c.trigger === "string";
}

function retryReason(status: number | undefined): string {
  if (status === 429) return "Rate limited (HTTP 429)";
  if (status === 529) return "The provider is overloaded (HTTP 529)";
  if (status !== undefined && status >= 500) return `The provider had a server error (HTTP ${status})`;
  if (status !== undefined) return `The provider answered HTTP ${status}`;
  return "The connection to the model dropped";
}

const TRIGGERS: Record<string, string> = {
  auto: "automatic, the context was nearly full",
  overflow: "the model's window overflowed",
  model_switch: "the new model's window is smaller",
};
