// Model-written markdown to safe DOM: markdown-it with raw HTML off (escaped,
// and javascript: links refused), then DOMPurify as defence in depth. Nothing
// remote is ever loaded: an image becomes a link to it (opened through the host,
// which shows the URL), and the CSP allows images only from the extension.
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";
import { addCodeActions, highlightCodeBlocks } from "./highlight";

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

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

export function renderMarkdown(source: string): string {
  return DOMPurify.sanitize(md.render(source), {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed", "img", "picture", "video", "audio", "source"],
    FORBID_ATTR: ["style", "srcset", "background", "poster"],
  });
}

export function setMarkdown(element: Element, source: string, options: { codeActions?: boolean } = {}): void {
  element.innerHTML = renderMarkdown(source);
  highlightCodeBlocks(element);
  if (options.codeActions) addCodeActions(element);
}
