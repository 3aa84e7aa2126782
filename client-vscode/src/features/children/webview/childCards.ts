// Child sessions in the transcript: each child a card under the `task` call that
// started it (agent, what it does, the tool it is using, its tokens, its status, the
// step of a plan built step by step), with Stop while it runs and a link to its own
// transcript. The cards follow the parent's `child` updates; a permission request a
// child makes says which child asks.
import "./children.css";
import type { Message, SessionUpdate } from "../../../protocol";
import { CHILD_STATUS_LABELS, CHILD_STATUSES, type ChildAsker, type ChildProgress, type ChildStatus } from "../childMessages";
import { el, formatTokens } from "../../../shell/webview/shared/dom";
import { parseTaskResult, stepCallId, type TaskResult } from "./taskResult";
import { Transcript } from "../../sessions/webview/transcript";

export interface ChildHandlers {
  /** Stop this child only (its parent goes on). */
  stop(childId: string): void;
  /** Open the child's own transcript (read-only). */
  open(childId: string): void;
  /** Undo from this message on (a step's note): the files of that step and the later ones. */
  undo?(messageId: string): void;
  /** Ask for the child's history, to show its transcript under its card. */
  history?(childId: string): void;
}

interface Known extends ChildProgress {
  parentId: string;
  /** A step's one line of result (restored from the parent's step note). */
  line?: string;
  /** The parent's note of the step: Undo from here reverts from it. */
  noteId?: string;
}

export class ChildCards {
  private readonly known = new Map<string, Known>();
  /** Children whose permission prompt is open. */
  private readonly asking = new Set<string>();
  /** The transcripts shown under children's cards, in the sidebar's own rendering, live. */
  private readonly transcripts = new Map<string, Transcript>();

  constructor(
    private readonly root: HTMLElement,
    private readonly handlers: ChildHandlers,
  ) {}

  /** A `child` update of `parentId`'s stream; shown when that session is the one in view. */
  apply(parentId: string, progress: ChildProgress, shown: boolean): void {
    const known: Known = { ...progress, parentId };
    this.known.set(progress.childId, known);
    if (progress.status !== "running") this.asking.delete(progress.childId);
    if (shown) this.render(known);
  }

  /** A child's own update (its session's stream): its card follows its tokens and tool
   * between the parent's `child` updates, which then say the server's own figures. */
  own(childId: string, update: SessionUpdate): boolean {
    // The child's transcript under its card follows its stream as it comes.
    const shown = this.transcripts.get(childId);
    if (shown) shown.apply(update);
    const child = this.known.get(childId);
    if (!child || child.status !== "running") return false;
    if (update.kind === "usage") child.tokens += (update.inputTokens ?? 0) + (update.outputTokens ?? 0);
    else if (update.kind === "tool_call") child.currentTool = update.name;
    else return true;
    this.render(child, false);
    return true;
  }

  /** After the transcript was rebuilt (a session loaded): the cards of its children again,
   * those of earlier turns from their `task` results (which name the child and its status). */
  restore(parentId: string, messages: Message[] = []): void {
    for (const message of messages) {
      for (const part of message.parts) {
        if (part.type !== "tool_call" || part.name !== "task" || !part.output) continue;
        const ended = endedChild(part.output);
        if (!ended || this.known.has(ended.childId)) continue;
        const description = typeof part.input.description === "string" ? part.input.description : "";
        this.known.set(ended.childId, { kind: "child", callId: part.toolCallId, parentId, description, currentTool: null, step: null, ...ended });
      }
    }
    // A step-by-step build's children: from the one note per step the parent keeps.
    for (const message of messages) {
      if (message.role !== "system") continue;
      const text = message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
      const step = parseStepResult(text);
      if (!step) continue;
      const live = this.known.get(step.childId);
      if (live) {
        // Seen live: its card now stands where its note is, and can undo from it.
        this.known.set(step.childId, { ...live, callId: stepCallId(message.id), line: step.line, noteId: message.id, status: step.status });
        continue;
      }
      this.known.set(step.childId, {
        kind: "child",
        callId: stepCallId(message.id),
        parentId,
        childId: step.childId,
        agent: "build",
        description: step.text,
        status: step.status,
        currentTool: null,
        tokens: 0,
        step: { index: step.index, total: step.total },
        line: step.line,
        noteId: message.id,
      });
    }
    for (const child of this.known.values()) if (child.parentId === parentId) this.render(child);
    for (const child of this.known.values()) {
      if (child.parentId === parentId && child.line) this.summarise({ childId: child.childId, agent: child.agent, status: child.status, tokens: child.tokens, files: [], commands: [], answer: child.line, cut: false }, false);
    }
    for (const message of messages) {
      for (const part of message.parts) {
        const result = part.type === "tool_call" && part.name === "task" && part.output ? parseTaskResult(part.output) : undefined;
        if (result) this.summarise(result);
      }
    }
  }

  /** The child's history arrived: its transcript under its card, rendered as the sidebar's. */
  showHistory(childId: string, messages: Message[]): void {
    const box = this.cardOf(childId)?.querySelector<HTMLElement>(".child-transcript");
    if (!box) return;
    const transcript = new Transcript(box, {});
    transcript.load(messages);
    this.transcripts.set(childId, transcript);
    box.dataset.loaded = "true";
  }

  /** A child's result (its `task` call ended): the card says it in words, under its head. */
  summarise(result: TaskResult, withFacts = true): void {
    const card = this.cardOf(result.childId);
    if (!card) return;
    const known = this.known.get(result.childId);
    if (known && known.status === "running") {
      known.status = result.status;
      this.render(known, false);
    }
    card.querySelector(".child-summary")?.remove();
    const facts = [
      result.files.length ? `${result.files.length} ${result.files.length === 1 ? "file" : "files"} changed` : "no file changed",
      ...(result.commands.length ? [`${result.commands.length} ${result.commands.length === 1 ? "command" : "commands"} run`] : []),
    ];
    const summary = el(
      "div",
      { class: "child-summary" },
      ...(withFacts ? [el("div", { class: "child-summary-facts", title: [...result.files, ...result.commands].join("\n") }, facts.join(" · "))] : []),
      ...(result.error ? [el("div", { class: "child-summary-error" }, result.error)] : []),
      ...(result.answer ? [el("div", { class: "child-summary-answer" }, result.answer)] : []),
    );
    card.querySelector(".child-actions")?.before(summary);
  }

  /** The child a permission request came from, if it is known. */
  childOf(childId: string): Known | undefined {
    return this.known.get(childId);
  }

  /** Whether a step-by-step build ran live in `parentId` (its cards have no notes yet). */
  stepsRan(parentId: string): boolean {
    return [...this.known.values()].some((c) => c.parentId === parentId && c.step && !c.noteId && c.status !== "running");
  }

  /** After a step-by-step build: one line under its last step's card says how it ended. */
  closeBuild(parentId: string): void {
    let last: Known | undefined;
    for (const child of this.known.values()) {
      if (child.parentId === parentId && child.step && (!last || child.step.index >= (last.step?.index ?? 0))) last = child;
    }
    if (!last?.step || last.status === "running") return;
    const card = this.cardOf(last.childId);
    if (!card || this.root.querySelector(`.build-ended[data-child-id="${CSS.escape(last.childId)}"]`)) return;
    const marker = el("div", { class: "marker build-ended", "data-kind": "build-ended", "data-child-id": last.childId, role: "status" }, el("span", { class: "build-ended-text" }, buildEnding(last.step, last.status)));
    // The whole build, back to before its first step (the person's choice; a step's own
    // card undoes from that step).
    const first = [...this.known.values()].find((c) => c.parentId === parentId && c.step?.index === 1 && c.noteId);
    if (first?.noteId && this.handlers.undo) {
      const noteId = first.noteId;
      const undo = el("button", { type: "button", class: "build-undo", title: "Restore every file the build's steps changed, as it was before the build" }, "Undo the whole build");
      undo.addEventListener("click", () => this.handlers.undo?.(noteId));
      marker.append(" ", undo);
    }
    card.after(marker);
  }

  /** The step of a plan being built step by step in `parentId`, while a child builds it. */
  currentStep(parentId: string): { index: number; total: number } | undefined {
    for (const child of this.known.values()) {
      if (child.parentId === parentId && child.status === "running" && child.step) return child.step;
    }
    return undefined;
  }

  /** Puts "asked by …" on a permission card a child's tool made, and "needs you" on its card. */
  labelPermission(card: HTMLElement, childId: string, asker: ChildAsker): void {
    const child = this.known.get(childId);
    const agent = child?.agent || asker.agent || "child";
    const label = el(
      "div",
      { class: "permission-asker", "data-child-id": childId },
      "Asked by the ",
      el("strong", {}, agent),
      " child",
      ...(child?.description ? [": ", el("span", { class: "permission-asker-description" }, child.description)] : []),
    );
    card.dataset.forChild = childId;
    card.querySelector(".permission-title")?.before(label);
    const question = card.getAttribute("aria-label") ?? "Permission request";
    card.setAttribute("aria-label", `${question} (asked by the ${agent} child${child?.description ? `: ${child.description}` : ""})`);
    this.setAsking(childId, true);
  }

  setAsking(childId: string, asking: boolean): void {
    if (asking) this.asking.add(childId);
    else this.asking.delete(childId);
    const child = this.known.get(childId);
    if (child) this.render(child, false);
  }

  private cardOf(childId: string): HTMLElement | null {
    return this.root.querySelector<HTMLElement>(`.child-card[data-child-id="${CSS.escape(childId)}"]`);
  }

  private render(child: Known, place = true): void {
    let card = this.cardOf(child.childId);
    if (!card) {
      if (!place) return;
      card = this.build(child);
      this.place(card, child.callId);
    }
    card.dataset.status = child.status;
    card.dataset.agent = child.agent;
    card.toggleAttribute("data-asking", this.asking.has(child.childId));
    card.setAttribute("aria-label", `${child.agent} child: ${child.description}`);
    text(card, ".child-agent", child.agent);
    const description = card.querySelector<HTMLElement>(".child-description");
    if (description && description.dataset.text !== child.description) {
      // A step's words as the plan has them: `code` as code, never raw backticks.
      description.dataset.text = child.description;
      description.replaceChildren(...inlineCode(child.description));
    }
    text(card, ".child-status", this.asking.has(child.childId) ? "needs you" : CHILD_STATUS_LABELS[child.status]);
    const step = card.querySelector<HTMLElement>(".child-step");
    if (step) {
      step.hidden = !child.step;
      step.textContent = child.step ? `Step ${child.step.index} of ${child.step.total}` : "";
    }
    const tool = card.querySelector<HTMLElement>(".child-tool");
    if (tool) {
      const using = child.status === "running" && child.currentTool ? child.currentTool : "";
      tool.hidden = using === "";
      tool.textContent = using ? `Using ${using}` : "";
      tool.title = using ? `The tool the child is using now: ${using}` : "";
    }
    // A step restored from its note has no token count to show: none is said.
    text(card, ".child-tokens", child.noteId && !child.tokens ? "" : `${formatTokens(child.tokens)} tokens`);
    const stop = card.querySelector<HTMLButtonElement>(".child-stop");
    if (stop) stop.hidden = child.status !== "running";
  }

  private build(child: Known): HTMLElement {
    const stop = el("button", { type: "button", class: "child-stop", title: "Stop this child only; the agent that started it goes on" }, "Stop");
    stop.addEventListener("click", () => {
      stop.disabled = true;
      this.handlers.stop(child.childId);
    });
    const open = el("a", { href: "#", class: "child-open", title: "Open this child's own transcript (read-only)" }, "Open transcript");
    open.addEventListener("click", (event) => {
      event.preventDefault();
      this.handlers.open(child.childId);
    });
    // The child's transcript in the sidebar's own rendering, under the card, live.
    const box = el("div", { class: "child-transcript", "aria-label": `The ${child.agent} child's transcript`, hidden: "" });
    const show = el("button", { type: "button", class: "child-show", "aria-expanded": "false", title: "Show the child's transcript here; it follows the child live" }, "Show here");
    show.addEventListener("click", () => {
      const opening = box.hidden;
      box.hidden = !opening;
      show.setAttribute("aria-expanded", String(opening));
      show.textContent = opening ? "Hide" : "Show here";
      if (opening && !box.dataset.loaded) this.handlers.history?.(child.childId);
    });
    const actions = el("div", { class: "child-actions" }, stop, open, show);
    if (child.step && child.noteId && this.handlers.undo) {
      const noteId = child.noteId;
      const undo = el("button", { type: "button", class: "child-undo", title: "Restore the files this step and the later ones changed" }, "Undo from this step");
      undo.addEventListener("click", () => this.handlers.undo?.(noteId));
      actions.append(undo);
    }
    return el(
      "div",
      { class: "child-card", role: "group", "data-kind": "child", "data-child-id": child.childId, "data-call-id": child.callId },
      el(
        "div",
        { class: "child-head" },
        el("span", { class: "child-agent" }),
        el("span", { class: "child-description" }),
        el("span", { class: "child-status", role: "status" }),
      ),
      el(
        "div",
        { class: "child-meta" },
        el("span", { class: "child-step", hidden: "" }),
        el("span", { class: "child-tool", hidden: "" }),
        el("span", { class: "child-tokens" }),
      ),
      actions,
      box,
    );
  }

  /** Under its `task` call's card (after the cards of earlier children of the same call);
   * at the end of the transcript when the call is not shown (a step Baton itself started). */
  private place(card: HTMLElement, callId: string): void {
    const atEnd = this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < 24;
    const call = this.root.querySelector<HTMLElement>(`.tool-card[data-tool-call-id="${CSS.escape(callId)}"], .step-anchor[data-call-id="${CSS.escape(callId)}"]`);
    if (call) {
      let after: Element = call;
      while (after.nextElementSibling?.matches(`.child-card[data-call-id="${CSS.escape(callId)}"]`)) after = after.nextElementSibling;
      after.after(card);
    } else {
      this.root.append(card);
    }
    if (atEnd) this.root.scrollTop = this.root.scrollHeight;
  }
}

/** What a `task` result block says of its child: `<baton:task-result agent=… child=… status=…>`. */
function endedChild(output: string): { childId: string; agent: string; status: ChildStatus; tokens: number } | undefined {
  const open = /<baton:task-result\b([^>]*)>/.exec(output)?.[1];
  if (!open) return undefined;
  const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(open)?.[1];
  const childId = attr("child");
  const status = attr("status");
  if (!childId || !(CHILD_STATUSES as readonly string[]).includes(status ?? "")) return undefined;
  const tokens = Number((/^tokens: ([\d,]+)$/m.exec(output)?.[1] ?? "0").replace(/,/g, ""));
  return { childId, agent: attr("agent") ?? "", status: status as ChildStatus, tokens: Number.isFinite(tokens) ? tokens : 0 };
}

function text(card: HTMLElement, selector: string, value: string): void {
  const node = card.querySelector(selector);
  if (node && node.textContent !== value) node.textContent = value;
}

/** Text with `inline code` as <code> elements, the backticks gone. */
export function inlineCode(text: string): Node[] {
  return text.split(/(`[^`\n]+`)/).filter(Boolean).map((piece) =>
    piece.length > 2 && piece.startsWith("`") && piece.endsWith("`") ? el("code", {}, piece.slice(1, -1)) : document.createTextNode(piece),
  );
}


export interface StepResult {
  index: number;
  total: number;
  text: string;
  status: ChildStatus;
  childId: string;
  line: string;
}

/** The parent's note of one built step: `<baton:step-result>step i of n (text): status; child id; line`. */
export function parseStepResult(text: string): StepResult | undefined {
  const body = /<baton:step-result>\n?([\s\S]*?)\n?<\/baton:step-result>/.exec(text)?.[1];
  const found = body ? /^step (\d+) of (\d+) \((.*)\): (\w+); child (\S+); ([\s\S]*)$/.exec(body.trim()) : null;
  if (!found) return undefined;
  const [, index, total, stepText, status, childId, line] = found;
  const known = (CHILD_STATUSES as readonly string[]).includes(status ?? "") ? (status as ChildStatus) : "failed";
  return { index: Number(index), total: Number(total), text: stepText ?? "", status: known, childId: childId ?? "", line: (line ?? "").trim() };
}

/** How a step-by-step build ended, in words, from its last step's child. */
export function buildEnding(step: { index: number; total: number }, status: ChildStatus): string {
  if (status === "done" && step.index === step.total) return `The step-by-step build ended: all ${step.total} ${step.total === 1 ? "step" : "steps"} built.`;
  if (status === "cancelled") return `The step-by-step build was stopped at step ${step.index} of ${step.total}.`;
  if (status === "done") return `The step-by-step build stopped after step ${step.index} of ${step.total}.`;
  return `The step-by-step build stopped at step ${step.index} of ${step.total}: it ${CHILD_STATUS_LABELS[status]}.`;
}
