// Line-by-line review in the plan panel: the person selects text in the
// rendered plan and adds a comment, a replacement or a deletion; the
// annotations are listed beside the plan, editable and removable, and go to
// the agent with Request changes. Everything the person or the model wrote is
// put in the page as text, never as HTML.
import {
  lineLabel,
  reanchor,
  selectedLines,
  sourceLines,
  sourceQuote,
  toWire,
  type AnnotationKind,
  type DraftAnnotation,
} from "../annotations";
import type { PlanAnnotation } from "../../../protocol";
import { byId, el, setDisabled } from "../../../shell/webview/shared/dom";

const KIND_LABELS: Record<AnnotationKind, string> = { comment: "Comment", replace: "Replace", delete: "Delete" };
const PLACEHOLDERS: Record<AnnotationKind, string> = {
  comment: "What about these lines?",
  replace: "What should stand here instead?",
  delete: "Why remove it? (optional)",
};

interface Selected {
  startLine: number;
  endLine: number;
  quote: string;
}

export interface ReviewHost {
  /** The plan's content and version now (null: no plan). */
  plan(): { content: string; version: number } | null;
  /** Whether the plan can be reviewed now (a draft or awaiting approval, no turn running). */
  reviewable(): boolean;
  /** The annotations changed (to save them, and to update the send button). */
  changed(annotations: DraftAnnotation[]): void;
}

export class ReviewUi {
  private annotations: DraftAnnotation[];
  private selected: Selected | undefined;
  /**
   * The annotation being written: a new one (with its selection, and the plan
   * version and lines' text it was made on, as the plan may change meanwhile)
   * or one being edited.
   */
  private editing: { kind: AnnotationKind; target: Selected; id?: string; version?: number; source?: string } | undefined;
  private counter = 0;
  private readonly tools = byId("selection-tools");
  private readonly editor = byId("annotation-editor");
  private readonly text = byId<HTMLElement & { value: string; placeholder: string }>("annotation-text");
  private readonly list = byId("annotation-list");
  private readonly panel = byId("review");

  constructor(
    private readonly content: HTMLElement,
    private readonly host: ReviewHost,
    saved: DraftAnnotation[] = [],
  ) {
    this.annotations = saved;
    this.counter = Math.max(0, ...saved.map((a) => Number(/^a-(\d+)$/.exec(a.id)?.[1] ?? 0)));
    const check = () => this.onSelection();
    content.addEventListener("mouseup", check);
    content.addEventListener("keyup", check);
    document.addEventListener("selectionchange", () => {
      // A selection that went away (a click elsewhere) hides the tools; a new one waits for mouseup.
      if (this.selected && !this.currentRange()) this.hideTools();
    });
    for (const button of this.tools.querySelectorAll<HTMLButtonElement>("button[data-kind]")) {
      // mousedown would clear the selection before click: keep it.
      button.addEventListener("mousedown", (event) => event.preventDefault());
      button.addEventListener("click", () => this.begin(button.dataset.kind as AnnotationKind));
    }
    byId("annotation-save").addEventListener("click", () => this.save());
    byId("annotation-cancel").addEventListener("click", () => this.closeEditor());
    this.text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        this.save();
      } else if (event.key === "Escape") {
        event.preventDefault();
        this.closeEditor();
      }
    });
    this.list.addEventListener("click", (event) => {
      const button = event.target instanceof Element ? event.target.closest<HTMLElement>("button[data-action]") : null;
      const id = button?.closest<HTMLElement>("li[data-id]")?.dataset.id;
      if (!button || !id) return;
      if (button.dataset.action === "remove") this.remove(id);
      else if (button.dataset.action === "edit") this.edit(id);
    });
  }

  /** Annotations that can be sent (none is stale). */
  get sendable(): PlanAnnotation[] {
    return this.annotations.filter((a) => !a.stale).map(toWire);
  }

  get count(): number {
    return this.annotations.length;
  }

  get staleCount(): number {
    return this.annotations.filter((a) => a.stale).length;
  }

  /** A new plan version: the annotations move to their lines in it (or become stale), and the page is marked again. */
  planChanged(): void {
    const plan = this.host.plan();
    if (plan && this.annotations.length) {
      this.annotations = reanchor(this.annotations, plan.content, plan.version);
      this.host.changed(this.annotations);
    }
    // While a turn runs nothing new is selected; what the person is writing stays (approval clears it).
    if (!this.host.reviewable()) this.hideTools();
    this.render();
  }

  /** Request changes reached the server: these annotations are done with. */
  clear(): void {
    this.annotations = [];
    this.closeEditor();
    this.host.changed(this.annotations);
    this.render();
  }

  /** The list, the panel's visibility and the marks on the annotated blocks. */
  render(): void {
    const reviewable = this.host.reviewable();
    this.panel.hidden = this.annotations.length === 0 && this.editing === undefined;
    byId("review-count").textContent = this.annotations.length === 1 ? "1 annotation" : `${this.annotations.length} annotations`;
    byId("review-hint").textContent = this.staleCount
      ? `${this.staleCount === 1 ? "1 annotation's lines are" : `${this.staleCount} annotations' lines are`} no longer in the plan: remove ${this.staleCount === 1 ? "it" : "them"} or annotate again.`
      : "Request changes sends these with your overall comment, as one message.";
    this.list.replaceChildren(
      ...this.annotations.map((a) => {
        const edit = el("button", { type: "button", "data-action": "edit", class: "link-button", title: "Change what this annotation says" }, "Edit");
        const remove = el("button", { type: "button", "data-action": "remove", class: "link-button", title: "Remove this annotation" }, "Remove");
        setDisabled(edit, !reviewable || a.stale === true);
        const item = el(
          "li",
          { "data-id": a.id, "data-kind": a.kind, class: a.stale ? "annotation stale" : "annotation" },
          el("div", { class: "annotation-head" }, el("span", { class: `kind-badge ${a.kind}` }, KIND_LABELS[a.kind]), el("span", { class: "annotation-lines" }, a.stale ? `${lineLabel(a)} (gone)` : lineLabel(a)), el("span", { class: "annotation-actions" }, edit, remove)),
          el("blockquote", { class: "annotation-quote" }, a.quote),
        );
        if (a.text) item.append(el("div", { class: "annotation-text" }, a.text));
        return item;
      }),
    );
    this.mark();
  }

  /** Blocks of the rendered plan whose lines carry an annotation get a mark (the innermost such block). */
  private mark(): void {
    for (const node of this.content.querySelectorAll(".annotated")) node.classList.remove("annotated");
    const live = this.annotations.filter((a) => !a.stale);
    if (!live.length) return;
    const blocks = [...this.content.querySelectorAll<HTMLElement>("[data-line]")];
    const hit = (block: HTMLElement) => {
      const start = Number(block.dataset.line);
      const end = Number(block.dataset.lineEnd);
      return live.some((a) => a.startLine <= end && a.endLine >= start);
    };
    for (const block of blocks) {
      if (!hit(block)) continue;
      const inner = [...block.querySelectorAll<HTMLElement>("[data-line]")].some(hit);
      if (!inner) block.classList.add("annotated");
    }
  }

  /**
   * The selection, cut to the plan's content. A triple click selects a whole
   * paragraph and ends the range at the start of the next block, which for the
   * plan's last block is outside the content: the part inside counts.
   */
  private currentRange(): Range | undefined {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return undefined;
    const range = selection.getRangeAt(0);
    if (this.content.contains(range.commonAncestorContainer)) return range;
    if (!range.intersectsNode(this.content)) return undefined;
    const inside = document.createRange();
    inside.selectNodeContents(this.content);
    if (this.content.contains(range.startContainer)) inside.setStart(range.startContainer, range.startOffset);
    if (this.content.contains(range.endContainer)) inside.setEnd(range.endContainer, range.endOffset);
    return inside.collapsed ? undefined : inside;
  }

  private onSelection(): void {
    const plan = this.host.plan();
    const range = this.currentRange();
    if (!plan || !range || !this.host.reviewable()) {
      this.hideTools();
      return;
    }
    const found = this.linesOf(range, plan.content);
    if (!found) {
      this.hideTools();
      return;
    }
    this.selected = found;
    const rect = range.getBoundingClientRect();
    this.tools.hidden = false;
    this.tools.dataset.lines = `${found.startLine}-${found.endLine}`;
    const width = this.tools.offsetWidth;
    this.tools.style.top = `${rect.bottom + window.scrollY + 6}px`;
    this.tools.style.left = `${Math.max(4, Math.min(rect.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - width - 8))}px`;
  }

  /**
   * The source lines under a selection: each selected piece of text belongs to
   * the innermost block with `data-line` around it, less the lines of the
   * blocks nested in that one (a list item's sub-list).
   */
  private linesOf(range: Range, content: string): Selected | undefined {
    const quote = range.toString().trim();
    if (quote === "") return undefined;
    let start = Infinity;
    let end = 0;
    const walker = document.createTreeWalker(this.content, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!range.intersectsNode(node)) continue;
      const text = node.textContent ?? "";
      const from = node === range.startContainer ? range.startOffset : 0;
      const to = node === range.endContainer ? range.endOffset : text.length;
      if (text.slice(from, to).trim() === "") continue;
      const lines = ownLines(node as Text);
      if (!lines) continue;
      start = Math.min(start, lines[0]);
      end = Math.max(end, lines[1]);
    }
    if (end === 0) return undefined;
    const lines = selectedLines(content, start, end, quote);
    return { ...lines, quote: sourceQuote(content, lines.startLine, lines.endLine, quote) };
  }

  private hideTools(): void {
    this.tools.hidden = true;
    this.selected = undefined;
  }

  private begin(kind: AnnotationKind): void {
    const target = this.selected;
    if (!target) return;
    this.hideTools();
    window.getSelection()?.removeAllRanges();
    const plan = this.host.plan();
    this.editing = {
      kind,
      target,
      ...(plan ? { version: plan.version, source: sourceLines(plan.content, target.startLine, target.endLine) } : {}),
    };
    this.openEditor(kind, target, kind === "replace" ? target.quote : "");
  }

  private edit(id: string): void {
    const a = this.annotations.find((x) => x.id === id);
    if (!a || a.stale) return;
    this.editing = { kind: a.kind, target: { startLine: a.startLine, endLine: a.endLine, quote: a.quote }, id };
    this.openEditor(a.kind, this.editing.target, a.text ?? "");
  }

  private openEditor(kind: AnnotationKind, target: Selected, value: string): void {
    this.editor.hidden = false;
    this.editor.dataset.kind = kind;
    byId("annotation-kind").textContent = `${KIND_LABELS[kind]} · ${lineLabel(target)}`;
    byId("annotation-quote").textContent = target.quote;
    this.text.placeholder = PLACEHOLDERS[kind];
    this.text.value = value;
    this.render();
    this.editor.scrollIntoView({ block: "nearest" });
    requestAnimationFrame(() => this.text.focus());
  }

  private closeEditor(): void {
    this.editor.hidden = true;
    this.editing = undefined;
    this.render();
  }

  private save(): void {
    const editing = this.editing;
    const plan = this.host.plan();
    if (!editing || !plan) return;
    const words = this.text.value.trim();
    // A comment or a replacement has to say something; a deletion may stand alone.
    if (editing.kind !== "delete" && words === "") {
      this.text.focus();
      return;
    }
    const fields = { ...(words ? { text: words } : {}) };
    if (editing.id) {
      this.annotations = this.annotations.map((a) => {
        if (a.id !== editing.id) return a;
        const { text: _old, ...rest } = a;
        return { ...rest, ...fields };
      });
    } else {
      const { startLine, endLine, quote } = editing.target;
      const made: DraftAnnotation = {
        id: `a-${++this.counter}`,
        kind: editing.kind,
        startLine,
        endLine,
        quote,
        version: editing.version ?? plan.version,
        source: editing.source ?? sourceLines(plan.content, startLine, endLine),
        ...fields,
      };
      // Made on an earlier version (the file changed while the person wrote): moved to its lines now.
      const [placed] = reanchor([made], plan.content, plan.version);
      this.annotations = [...this.annotations, placed ?? made].sort((a, b) => a.startLine - b.startLine || a.endLine - b.endLine);
    }
    this.host.changed(this.annotations);
    this.closeEditor();
  }

  private remove(id: string): void {
    this.annotations = this.annotations.filter((a) => a.id !== id);
    if (this.editing?.id === id) this.closeEditor();
    this.host.changed(this.annotations);
    this.render();
  }
}

/** The source lines a text node stands for: its block's lines less those of the blocks nested in it. */
function ownLines(node: Text): [number, number] | undefined {
  const block = node.parentElement?.closest<HTMLElement>("[data-line]");
  if (!block) return undefined;
  let start = Number(block.dataset.line);
  let end = Number(block.dataset.lineEnd);
  if (!Number.isInteger(start) || !Number.isInteger(end)) return undefined;
  for (const inner of block.querySelectorAll<HTMLElement>("[data-line]")) {
    const position = node.compareDocumentPosition(inner);
    if (position & Node.DOCUMENT_POSITION_FOLLOWING) end = Math.min(end, Number(inner.dataset.line) - 1);
    else if (position & Node.DOCUMENT_POSITION_PRECEDING) start = Math.max(start, Number(inner.dataset.lineEnd) + 1);
  }
  return [start, Math.max(start, end)];
}

/** Annotations saved in the webview's state, checked (the state is the page's own, but may be from an older build). */
export function savedAnnotations(value: unknown): DraftAnnotation[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (a): a is DraftAnnotation =>
      typeof a === "object" &&
      a !== null &&
      typeof (a as DraftAnnotation).id === "string" &&
      ["comment", "replace", "delete"].includes((a as DraftAnnotation).kind) &&
      Number.isInteger((a as DraftAnnotation).startLine) &&
      Number.isInteger((a as DraftAnnotation).endLine) &&
      typeof (a as DraftAnnotation).quote === "string" &&
      typeof (a as DraftAnnotation).source === "string" &&
      Number.isInteger((a as DraftAnnotation).version),
  );
}
