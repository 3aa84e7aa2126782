// Links in model- or person-written text never navigate the webview: a click asks
// the host, which shows the URL and opens it through VS Code (or does nothing).
export function interceptLinks(root: HTMLElement, open: (url: string) => void): void {
  root.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!target) return;
    const href = target.getAttribute("href") ?? "";
    if (href === "#" || href === "") return; // the webview's own buttons-as-links
    event.preventDefault();
    event.stopPropagation();
    open(href);
  });
}
