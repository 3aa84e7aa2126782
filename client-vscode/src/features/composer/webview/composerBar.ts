// The composer's bar at any sidebar width: the mode switch and Send stay; a control that
// does not fit whole (Stop or Send, whichever cannot be used now, then the model picker)
// leaves the bar for the "…" menu, where an item runs the control's own click. The menu
// also holds actions that live only there. Opened and walked with the keyboard.
import { el } from "../../../shell/webview/shared/dom";

/** A bar control that may move into the menu; `label` is what its menu item reads. */
export interface Collapsible {
  node: HTMLElement;
  label: () => string;
}

/** An action that lives only in the menu. */
export interface MenuAction {
  id: string;
  label: string;
  run: () => void;
}

export interface ComposerBarOptions {
  bar: HTMLElement;
  more: HTMLElement;
  menu: HTMLElement;
  /** The controls that may move, in the order they give way. */
  collapseOrder: () => Collapsible[];
  actions?: MenuAction[];
}

export class ComposerBar {
  private overflowed: Collapsible[] = [];

  constructor(private readonly o: ComposerBarOptions) {
    o.more.setAttribute("aria-haspopup", "menu");
    o.more.setAttribute("aria-expanded", "false");
    o.more.setAttribute("aria-controls", o.menu.id);
    o.menu.setAttribute("role", "menu");
    o.more.addEventListener("click", () => (this.isOpen ? this.close(true) : this.open(0)));
    o.more.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        this.open(event.key === "ArrowDown" ? 0 : -1);
      }
    });
    o.menu.addEventListener("keydown", (event) => this.menuKey(event));
    o.menu.addEventListener("focusout", (event) => {
      const next = event.relatedTarget;
      if (next instanceof Node && (o.menu.contains(next) || o.more.contains(next))) return;
      this.close(false);
    });
    new ResizeObserver(() => this.fit()).observe(o.bar);
  }

  get isOpen(): boolean {
    return !this.o.menu.hidden;
  }

  /** Lay the bar out again: everything back in, then the controls that do not fit out. */
  fit(): void {
    const { bar } = this.o;
    for (const item of this.overflowed) delete item.node.dataset.overflowed;
    this.overflowed = [];
    // Measured with the "…" button in, since whatever moves out needs it.
    this.o.more.hidden = false;
    const order = this.o.collapseOrder();
    const fits = () => bar.scrollWidth <= bar.clientWidth + 1 && order.every((c) => c.node.dataset.overflowed !== undefined || !clipped(c.node));
    for (const item of order) {
      if (fits()) break;
      item.node.dataset.overflowed = "";
      this.overflowed.push(item);
    }
    this.o.more.hidden = this.overflowed.length === 0 && !this.o.actions?.length;
    if (this.isOpen) {
      // Laid out again while open (a turn started, the model changed): keep the focus.
      const focused = this.items().indexOf(document.activeElement as HTMLElement);
      this.renderMenu();
      if (focused >= 0) this.items()[Math.min(focused, this.items().length - 1)]?.focus();
    }
  }

  private items(): HTMLElement[] {
    return [...this.o.menu.querySelectorAll<HTMLElement>("[role=menuitem]")];
  }

  private renderMenu(): void {
    const entries: HTMLElement[] = this.overflowed.map((c) => {
      const disabled = c.node.hasAttribute("disabled");
      const item = el("button", { type: "button", role: "menuitem", tabindex: "-1", "data-for": c.node.id }, c.label());
      if (disabled) item.setAttribute("aria-disabled", "true");
      if (c.node.title) item.title = c.node.title;
      item.addEventListener("click", () => {
        if (item.getAttribute("aria-disabled") === "true") return;
        this.close(true);
        c.node.click();
      });
      return item;
    });
    for (const action of this.o.actions ?? []) {
      const item = el("button", { type: "button", role: "menuitem", tabindex: "-1", "data-action-id": action.id }, action.label);
      item.addEventListener("click", () => {
        // Run first: a file picker opens only while the key or click that asked is current.
        action.run();
        this.close(true);
      });
      entries.push(item);
    }
    this.o.menu.replaceChildren(...entries);
  }

  open(focusIndex: number): void {
    this.renderMenu();
    this.o.menu.hidden = false;
    this.o.more.setAttribute("aria-expanded", "true");
    const items = this.items();
    items.at(focusIndex)?.focus();
  }

  close(refocus: boolean): void {
    if (!this.isOpen) return;
    this.o.menu.hidden = true;
    this.o.more.setAttribute("aria-expanded", "false");
    if (refocus) this.o.more.focus();
  }

  private menuKey(event: KeyboardEvent): void {
    const items = this.items();
    const at = items.indexOf(document.activeElement as HTMLElement);
    const move = (index: number) => items[(index + items.length) % items.length]?.focus();
    switch (event.key) {
      case "ArrowDown":
        move(at + 1);
        break;
      case "ArrowUp":
        move(at - 1);
        break;
      case "Home":
        move(0);
        break;
      case "End":
        move(items.length - 1);
        break;
      case "Escape":
        this.close(true);
        break;
      case "Tab":
        this.close(false);
        return;
      default:
        return;
    }
    event.preventDefault();
    event.stopPropagation();
  }
}

function clipped(node: HTMLElement): boolean {
  return node.scrollWidth > node.clientWidth + 1;
}
