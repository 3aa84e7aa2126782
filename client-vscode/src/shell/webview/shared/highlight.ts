// Syntax highlighting for code blocks in rendered markdown: highlight.js core with
// the languages agents write most (the full bundle is ten times larger). It works on
// text already sanitised into the DOM and produces only <span class="hljs-…">, set
// through the library's own escaping; the colours come from the VS Code theme (CSS).
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = { bash, c, cpp, css, diff, go, ini, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);
hljs.registerAliases(["sh", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

/** Highlights `pre > code.language-x` blocks (unknown languages stay plain). */
export function highlightCodeBlocks(root: Element): void {
  for (const code of root.querySelectorAll<HTMLElement>("pre > code")) {
    const language = [...code.classList].find((c) => c.startsWith("language-"))?.slice("language-".length);
    if (!language || !hljs.getLanguage(language) || code.dataset.highlighted) continue;
    hljs.highlightElement(code);
  }
}

/** Copy / Insert buttons on each code block; `data-code-action` is handled by the page. */
export function addCodeActions(root: Element): void {
  for (const pre of root.querySelectorAll<HTMLElement>("pre")) {
    const code = pre.querySelector("code");
    if (!code || pre.parentElement?.classList.contains("code-block")) continue;
    const wrapper = document.createElement("div");
    wrapper.className = "code-block";
    const bar = document.createElement("div");
    bar.className = "code-actions";
    for (const [action, label, title] of [
      ["copy", "Copy", "Copy the code"],
      ["insert", "Insert", "Insert the code at the cursor in the editor"],
    ] as const) {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.codeAction = action;
      button.textContent = label;
      button.title = title;
      bar.append(button);
    }
    pre.replaceWith(wrapper);
    wrapper.append(bar, pre);
  }
}
