// The transcript is one stop in the Tab order: Tab goes from the header to the
// conversation and on to the composer, not through every tool card, fork button and
// code action. Inside it the arrow keys (and Home/End) move between its controls.
const FOCUSABLE = "button, summary, a[href], select, textarea, input, [tabindex]";

export function makeSingleTabStop(root: HTMLElement): void {
  root.tabIndex = 0;
  root.setAttribute("aria-label", "Conversation: arrow keys move between its items");
  const items = () => Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((node) => node !== root && node.offsetParent !== null);
  const demote = (scope: ParentNode) => {
    for (const node of Array.from(scope.querySelectorAll<HTMLElement>(FOCUSABLE))) if (node !== root) node.tabIndex = -1;
  };
  demote(root);
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of Array.from(record.addedNodes)) {
        if (!(node instanceof HTMLElement)) continue;
        if (node.matches(FOCUSABLE)) node.tabIndex = -1;
        demote(node);
      }
    }
  }).observe(root, { childList: true, subtree: true });
  root.addEventListener("keydown", (event) => {
    if (!["ArrowDown", "ArrowUp", "Home", "End"].includes(event.key)) return;
    const target = event.target instanceof HTMLElement ? event.target : null;
    // Keys typed into a field inside the transcript stay the field's.
    if (target && target !== root && /^(TEXTAREA|INPUT|SELECT)$/.test(target.tagName)) return;
    const list = items();
    if (list.length === 0) return;
    const at = target ? list.indexOf(target) : -1;
    const next =
      event.key === "Home" ? 0 : event.key === "End" ? list.length - 1 : event.key === "ArrowDown" ? Math.min(list.length - 1, at + 1) : at <= 0 ? 0 : at - 1;
    event.preventDefault();
    list[next]?.focus();
  });
}
