// The sidebar's review and undo controls, layered over the transcript without
// changing how it renders: an Undo button on every turn (and "reverted" on
// turns taken back), a Diff button on completed write/edit cards and on
// permission prompts, attachment chips above the prompt box, and `@file`
// completion in it.
import type { Message, PermissionToolCall } from "../../../protocol";
import type { AttachmentRef, MessageMark } from "../messages";
import { el } from "../../../shell/webview/shared/dom";

type Outbound =
  | { type: "revert"; sessionId: string; messageId: string }
  | { type: "openChange"; sessionId: string; toolCallId: string }
  | { type: "showPendingChange"; toolCallId: string }
  | { type: "mentionQuery"; query: string };

interface PromptBox extends HTMLElement {
  value: string;
  wrappedElement?: HTMLTextAreaElement;
  updateComplete?: Promise<unknown>;
}

export interface ReviewUiOptions {
  transcript: HTMLElement;
  attachments: HTMLElement;
  mentions: HTMLElement;
  promptBox: PromptBox;
  post(message: Outbound): void;
  sessionId(): string | null;
  /** Something worth saving in the webview state changed. */
  changed(): void;
}

const CHANGING_TOOLS = new Set(["write", "edit"]);
const MENTION_BEFORE_CARET = /(^|\s)@([^\s@]*)$/;

function textOf(message: Message): string {
  return message.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
}

export class ReviewUi {
  private chips: AttachmentRef[] = [];
  private mentionQuery: string | undefined;
  private mentionStart = -1;
  private mentionTimer: ReturnType<typeof setTimeout> | undefined;
  private selected = 0;

  constructor(private readonly o: ReviewUiOptions) {
    // Cards are created and updated by the transcript; Diff appears once a change completed.
    new MutationObserver(() => this.decorateToolCards()).observe(o.transcript, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ["data-status"],
    });
    o.promptBox.addEventListener("input", () => this.onInput());
    o.promptBox.addEventListener("keydown", (event) => this.onKeyDown(event), { capture: true });
    o.promptBox.addEventListener("blur", () => setTimeout(() => this.hideMentions(), 150));
  }

  // ------------------------------------------------------------------ turns

  /** After the transcript rendered a loaded history: ids, Undo, reverted, attachments. */
  decorateHistory(messages: Message[]): void {
    this.mark(
      messages.map((m) => ({ id: m.id, role: m.role, reverted: m.reverted === true, text: textOf(m), message: m })),
    );
  }

  /** After a live turn ended: the host sent every message's id and reverted mark. */
  applyMarks(sessionId: string, marks: MessageMark[]): void {
    if (sessionId !== this.o.sessionId()) return;
    this.mark(marks.map((m) => ({ ...m, text: m.text, message: undefined })));
  }

  private mark(
    messages: Array<{ id: string; role: string; reverted: boolean; text: string | undefined; message: Message | undefined }>,
  ): void {
    const users = messages.filter((m) => m.role === "user");
    const nodes = [...this.o.transcript.querySelectorAll<HTMLElement>("[data-kind=user]")];
    // Match nodes to messages in order, by text where it is known: a prompt the server
    // refused has a node but no message, and is skipped.
    let n = 0;
    for (const message of users) {
      while (n < nodes.length) {
        const node = nodes[n];
        if (!node) break;
        node.dataset.text ??= node.textContent ?? "";
        if (message.text === undefined || node.dataset.messageId === message.id || node.dataset.text === message.text) break;
        n += 1;
      }
      const node = nodes[n++];
      if (!node) break;
      node.dataset.messageId = message.id;
      if (message.message) this.showAttachments(node, message.message);
      this.turnActions(node, message.id, message.reverted);
    }
    // Everything from a reverted prompt up to the next prompt belongs to a reverted turn.
    let reverted = false;
    for (const child of [...this.o.transcript.children] as HTMLElement[]) {
      if (child.dataset.kind === "user") reverted = child.dataset.reverted === "true";
      child.classList.toggle("reverted", reverted);
    }
  }

  private turnActions(node: HTMLElement, messageId: string, reverted: boolean): void {
    node.dataset.reverted = String(reverted);
    let bar = node.nextElementSibling as HTMLElement | null;
    if (!bar || bar.dataset.kind !== "turn-actions") {
      bar = el("div", { class: "turn-actions", "data-kind": "turn-actions" });
      node.after(bar);
    }
    bar.dataset.messageId = messageId;
    bar.dataset.reverted = String(reverted);
    bar.querySelector(".undo-turn")?.remove();
    bar.querySelector(".reverted-badge")?.remove();
    if (reverted) {
      bar.append(el("span", { class: "reverted-badge", title: "This turn was undone: its file changes were restored" }, "Reverted"));
      return;
    }
    const undo = el(
      "button",
      {
        type: "button",
        class: "undo-turn",
        title: "Undo this turn and every later one: restore the files they changed and take them out of the agent's view",
      },
      "Undo",
    );
    undo.addEventListener("click", () => {
      const sessionId = this.o.sessionId();
      if (sessionId) this.o.post({ type: "revert", sessionId, messageId });
    });
    bar.append(undo);
  }

  private showAttachments(node: HTMLElement, message: Message): void {
    const parts = message.parts.filter((p) => p.type === "attachment");
    const images = message.parts.filter((p) => p.type === "image");
    if ((parts.length === 0 && images.length === 0) || node.querySelector(".msg-attachments")) return;
    const row = el("div", { class: "msg-attachments" });
    for (const part of parts) {
      const lines = part.startLine ? `:${part.startLine}${part.endLine && part.endLine !== part.startLine ? `-${part.endLine}` : ""}` : "";
      row.append(el("span", { class: "chip", title: part.uri }, `@${part.path}${lines}`));
    }
    for (const image of images) row.append(imageChip(image.name ?? "image"));
    node.append(row);
  }

  /** Chips on the prompt just sent (before the server has stored it). */
  showSent(refs: AttachmentRef[], imageNames: string[] = []): void {
    const nodes = this.o.transcript.querySelectorAll<HTMLElement>("[data-kind=user]");
    const node = nodes[nodes.length - 1];
    if (!node || (refs.length === 0 && imageNames.length === 0)) return;
    node.dataset.text = node.textContent ?? "";
    const row = el("div", { class: "msg-attachments" });
    for (const ref of refs) row.append(el("span", { class: "chip", title: ref.uri }, `@${ref.label}`));
    for (const name of imageNames) row.append(imageChip(name));
    node.append(row);
  }

  // ------------------------------------------------------------------ changes

  private decorateToolCards(): void {
    const cards = this.o.transcript.querySelectorAll<HTMLElement>(".tool-card[data-status=completed]");
    for (const card of cards) {
      if (!CHANGING_TOOLS.has(card.dataset.tool ?? "") || card.querySelector(".view-change")) continue;
      const toolCallId = card.dataset.toolCallId;
      if (!toolCallId) continue;
      const button = el("button", { type: "button", class: "view-change", title: "Show this change in the diff editor" }, "Diff");
      button.addEventListener("click", (event) => {
        event.preventDefault(); // inside the card's <summary>: do not toggle it
        event.stopPropagation();
        const sessionId = this.o.sessionId();
        if (sessionId) this.o.post({ type: "openChange", sessionId, toolCallId });
      });
      const status = card.querySelector(".tool-status");
      status?.parentElement?.insertBefore(button, status);
    }
  }

  /** A permission prompt with a diff gets "Open diff" (the diff editor shows it too). */
  decoratePermission(card: Element | null, toolCall: PermissionToolCall, diff: string | undefined): void {
    if (!card || !diff || !CHANGING_TOOLS.has(toolCall.name)) return;
    const button = el(
      "button",
      { type: "button", class: "open-diff", title: "Show the proposed change in the diff editor, where you can edit it or undo hunks before accepting" },
      "Open diff",
    );
    button.addEventListener("click", () => this.o.post({ type: "showPendingChange", toolCallId: toolCall.toolCallId }));
    card.querySelector(".permission-title")?.after(button);
  }

  // ------------------------------------------------------------------ attachments

  get attachments(): AttachmentRef[] {
    return [...this.chips];
  }

  setAttachments(refs: AttachmentRef[]): void {
    this.chips = [];
    for (const ref of refs) this.attach(ref, false);
    this.renderChips();
  }

  attach(ref: AttachmentRef, render = true): void {
    const same = (a: AttachmentRef) => a.uri === ref.uri && JSON.stringify(a.range ?? null) === JSON.stringify(ref.range ?? null);
    if (!this.chips.some(same)) this.chips.push(ref);
    if (render) {
      this.renderChips();
      this.o.changed();
    }
  }

  /** The attachments for the prompt being sent; the box is emptied. */
  take(): AttachmentRef[] {
    const refs = this.chips;
    this.chips = [];
    this.renderChips();
    return refs;
  }

  private renderChips(): void {
    const root = this.o.attachments;
    root.replaceChildren(
      ...this.chips.map((ref, index) => {
        const remove = el("button", { type: "button", class: "chip-remove", "aria-label": `Remove ${ref.label}`, title: "Remove" }, "×");
        remove.addEventListener("click", () => {
          this.chips.splice(index, 1);
          this.renderChips();
          this.o.changed();
        });
        return el("span", { class: "chip", "data-uri": ref.uri, title: ref.uri }, `@${ref.label}`, remove);
      }),
    );
    root.hidden = this.chips.length === 0;
  }

  // ------------------------------------------------------------------ @ mentions

  private caret(): number {
    const inner = this.o.promptBox.wrappedElement;
    return inner && typeof inner.selectionStart === "number" ? inner.selectionStart : this.o.promptBox.value.length;
  }

  private onInput(): void {
    const value = this.o.promptBox.value;
    const match = MENTION_BEFORE_CARET.exec(value.slice(0, this.caret()));
    if (!match) {
      this.hideMentions();
      return;
    }
    const query = match[2] ?? "";
    this.mentionStart = this.caret() - query.length - 1;
    this.mentionQuery = query;
    if (this.mentionTimer) clearTimeout(this.mentionTimer);
    this.mentionTimer = setTimeout(() => this.o.post({ type: "mentionQuery", query }), 60);
  }

  /** The host's files for a query; shown if it is still the one being typed. */
  showMentions(query: string, paths: string[]): void {
    if (query !== this.mentionQuery) return;
    const list = this.o.mentions;
    this.selected = 0;
    list.replaceChildren(
      ...paths.map((path, index) => {
        const item = el("li", { role: "option", class: "mention", "data-path": path, "aria-selected": String(index === 0) }, path);
        item.addEventListener("mousedown", (event) => {
          event.preventDefault(); // keep the focus in the prompt box
          this.complete(path);
        });
        return item;
      }),
    );
    list.hidden = paths.length === 0;
  }

  private hideMentions(): void {
    this.mentionQuery = undefined;
    this.o.mentions.hidden = true;
    this.o.mentions.replaceChildren();
  }

  private onKeyDown(event: KeyboardEvent): void {
    const list = this.o.mentions;
    if (list.hidden || event.ctrlKey || event.metaKey || event.altKey) return;
    const items = [...list.querySelectorAll<HTMLElement>("[role=option]")];
    if (items.length === 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      this.selected = (this.selected + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      items.forEach((item, index) => item.setAttribute("aria-selected", String(index === this.selected)));
    } else if (event.key === "Enter" || event.key === "Tab") {
      const path = items[this.selected]?.dataset.path;
      if (path) this.complete(path);
    } else if (event.key === "Escape") {
      this.hideMentions();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  }

  private complete(path: string): void {
    const box = this.o.promptBox;
    const value = box.value;
    const start = Math.max(0, this.mentionStart);
    const end = this.caret();
    const inserted = `@${path} `;
    box.value = value.slice(0, start) + inserted + value.slice(end);
    const caret = start + inserted.length;
    this.hideMentions();
    void Promise.resolve(box.updateComplete).then(() => {
      box.wrappedElement?.focus();
      box.wrappedElement?.setSelectionRange(caret, caret);
    });
    this.o.changed();
  }
}

/** An image sent with a prompt, in the transcript: its name (the bytes stay on the server). */
function imageChip(name: string): HTMLElement {
  return el("span", { class: "chip image-sent", title: `Image: ${name}` }, `Image: ${name}`);
}
