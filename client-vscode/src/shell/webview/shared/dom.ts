// Tiny DOM helpers: text goes in as text, never as HTML.

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`missing #${id}`);
  return node as T;
}

export function setDisabled(node: HTMLElement, disabled: boolean): void {
  if (disabled) node.setAttribute("disabled", "");
  else node.removeAttribute("disabled");
}

export function formatTokens(n: number): string {
  return n.toLocaleString("en-US");
}
