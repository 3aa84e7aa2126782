// Model-written markdown to safe DOM: markdown-it with raw HTML off (escaped,
// and javascript: links refused), then DOMPurify as defence in depth. Nothing
// remote is ever loaded: an image becomes a link to it (opened through the host,
// which shows the URL), and the CSP allows images only from the extension.
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";
import { addCodeActions, highlightCodeBlocks } from "./highlight";

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

// For the plan review: every block element says which lines of the source it
// came from (markdown-it's 0-based [start, end) map, written 1-based inclusive),
// so a selection on the page can be turned into lines of the plan's file.
md.core.ruler.push("source_lines", (state) => {
  if (!(state.env as { sourceLines?: boolean }).sourceLines) return;
  for (const token of state.tokens) {
    if (!token.map || token.nesting === -1) continue;
    token.attrSet("data-line", String(token.map[0] + 1));
    token.attrSet("data-line-end", String(Math.max(token.map[0] + 1, token.map[1])));
  }
});

md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx];
  const src = token?.attrGet("src") ?? "";
  const alt = token ? md.renderer.renderInlineAsText(token.children ?? [], md.options, {}) : "";
  const label = alt.trim() || "image";
  const escape = md.utils.escapeHtml;
  return `<a href="${escape(String(src))}" class="image-link" title="Image, not loaded: ${escape(String(src))}">[image: ${escape(label)}]</a>`;
};

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("rel", "noopener noreferrer");
    node.removeAttribute("target");
  }
});

export function renderMarkdown(source: string, options: { sourceLines?: boolean } = {}): string {
  return DOMPurify.sanitize(md.render(source, { sourceLines: options.sourceLines === true }), {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed", "img", "picture", "video", "audio", "source"],
    FORBID_ATTR: ["style", "srcset", "background", "poster"],
  });
}

export function setMarkdown(element: Element, source: string, options: { codeActions?: boolean; sourceLines?: boolean } = {}): void {
  element.innerHTML = renderMarkdown(source, { sourceLines: options.sourceLines === true });
  highlightCodeBlocks(element);
  if (options.codeActions) addCodeActions(element);
}
