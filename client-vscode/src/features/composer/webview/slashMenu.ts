// The composer's slash menu: typing `/` at the start of the prompt box opens a
// list of the commands (built-ins, skills, command files) filtered as you type,
// each with its argument hint and description. Up/Down choose, Enter or Tab
// completes `/name `, Escape closes. A built-in is run by the host when sent;
// anything else goes to the server as the prompt typed, which expands it.
import type { CommandView } from "../commandMessages";
import { splitCommand } from "../commandMessages";
import { el } from "../../../shell/webview/shared/dom";

interface PromptBox extends HTMLElement {
  value: string;
  wrappedElement?: HTMLTextAreaElement;
  updateComplete?: Promise<unknown>;
}

export interface SlashMenuOptions {
  promptBox: PromptBox;
  list: HTMLElement;
  post(message: { type: "commandsQuery" }): void;
  /** The prompt box's text changed (saved in the webview state). */
  changed(): void;
}

/** `/name` typed so far, before the caret, with nothing else on the line. */
const COMMAND_BEFORE_CARET = /^\/([A-Za-z0-9_.-]*)$/;
const MAX_SHOWN = 50;

export class SlashMenu {
  private commands: CommandView[] = [];
  private shown: CommandView[] = [];
  private query: string | undefined;
  private selected = 0;

  constructor(private readonly o: SlashMenuOptions) {
    o.promptBox.addEventListener("input", () => this.onInput());
    o.promptBox.addEventListener("keydown", (event) => this.onKeyDown(event), { capture: true });
    o.promptBox.addEventListener("blur", () => setTimeout(() => this.hide(), 150));
  }

  /** The host's list (asked for when the menu opens; sent again when skills change). */
  setCommands(commands: CommandView[]): void {
    this.commands = commands;
    if (this.query !== undefined) this.render();
  }

  /** `[name, arguments]` when `text` runs a built-in (the host runs it), else undefined. */
  builtin(text: string): [string, string] | undefined {
    const parts = splitCommand(text);
    if (!parts) return undefined;
    const known = this.commands.find((c) => c.name === parts[0]);
    return known?.source === "builtin" ? parts : undefined;
  }

  get open(): boolean {
    return !this.o.list.hidden;
  }

  private caret(): number {
    const inner = this.o.promptBox.wrappedElement;
    return inner && typeof inner.selectionStart === "number" ? inner.selectionStart : this.o.promptBox.value.length;
  }

  private onInput(): void {
    const match = COMMAND_BEFORE_CARET.exec(this.o.promptBox.value.slice(0, this.caret()));
    if (!match) {
      this.hide();
      return;
    }
    const opening = this.query === undefined;
    this.query = match[1] ?? "";
    if (opening) this.o.post({ type: "commandsQuery" });
    this.render();
  }

  private matches(query: string): CommandView[] {
    const q = query.toLowerCase();
    const starts = this.commands.filter((c) => c.name.toLowerCase().startsWith(q));
    const within = this.commands.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q));
    return [...starts, ...within].slice(0, MAX_SHOWN);
  }

  private render(): void {
    const list = this.o.list;
    this.shown = this.matches(this.query ?? "");
    this.selected = Math.min(this.selected, Math.max(0, this.shown.length - 1));
    list.replaceChildren(
      ...this.shown.map((command, index) => {
        const item = el(
          "li",
          {
            role: "option",
            class: "slash-command",
            "data-name": command.name,
            "data-source": command.source,
            "aria-selected": String(index === this.selected),
            title: command.description,
          },
          el("span", { class: "slash-name" }, `/${command.name}`),
          ...(command.argumentHint ? [el("span", { class: "slash-hint" }, command.argumentHint)] : []),
          el("span", { class: "slash-description" }, command.description),
        );
        item.addEventListener("mousedown", (event) => {
          event.preventDefault(); // keep the focus in the prompt box
          this.complete(command.name);
        });
        return item;
      }),
    );
    list.hidden = this.shown.length === 0;
  }

  private hide(): void {
    this.query = undefined;
    this.selected = 0;
    this.shown = [];
    this.o.list.hidden = true;
    this.o.list.replaceChildren();
  }

  private onKeyDown(event: KeyboardEvent): void {
    if (!this.open || event.ctrlKey || event.metaKey || event.altKey || this.shown.length === 0) return;
    const items = [...this.o.list.querySelectorAll<HTMLElement>("[role=option]")];
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const count = this.shown.length;
      this.selected = (this.selected + (event.key === "ArrowDown" ? 1 : count - 1)) % count;
      items.forEach((item, index) => item.setAttribute("aria-selected", String(index === this.selected)));
      items[this.selected]?.scrollIntoView?.({ block: "nearest" });
    } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
      const name = this.shown[this.selected]?.name;
      if (name) this.complete(name);
    } else if (event.key === "Escape") {
      this.hide();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  }

  private complete(name: string): void {
    const box = this.o.promptBox;
    const value = box.value;
    const end = this.caret();
    const inserted = `/${name} `;
    box.value = inserted + value.slice(end).replace(/^\S*\s?/, "");
    const caret = inserted.length;
    this.hide();
    void Promise.resolve(box.updateComplete).then(() => {
      box.wrappedElement?.focus();
      box.wrappedElement?.setSelectionRange(caret, caret);
    });
    this.o.changed();
  }
}
