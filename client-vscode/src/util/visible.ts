// Pure (no DOM, no vscode): used by the webviews and by the extension host.
// Text the person must read whole before approving it (a command, a diff): every
// control or invisible character (ESC, CR, backspace, C1 controls, bidi overrides,
// zero-width characters) becomes a marked escape such as `\x1b` or `\u202e`, and a
// long run of spaces becomes `[… 520 spaces …]`, so nothing can be pushed out of
// sight, overwritten or reordered. Newlines and tabs stay; the caller wraps lines
// (white-space: pre-wrap) so no tail hides past the right edge.

/** A run of at least this many spaces is shown as a count. */
export const SPACE_RUN = 24;

const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

export function escapeChar(ch: string): string | undefined {
  if (ch === "\n" || ch === "\t" || !HIDDEN.test(ch)) return undefined;
  if (ch === "\r") return "\\r";
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\U${code.toString(16).padStart(8, "0")}`;
}

/** The pieces of `text`: plain strings, and markers (escapes, space counts). */
export function visiblePieces(text: string, collapseSpaces = true): Array<{ text: string; marker: boolean }> {
  const pieces: Array<{ text: string; marker: boolean }> = [];
  let plain = "";
  const flush = () => {
    if (plain) pieces.push({ text: plain, marker: false });
    plain = "";
  };
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === " " && collapseSpaces) {
      let end = i;
      while (end < chars.length && chars[end] === " ") end++;
      if (end - i >= SPACE_RUN) {
        flush();
        pieces.push({ text: `[… ${end - i} spaces …]`, marker: true });
        i = end - 1;
        continue;
      }
    }
    const escaped = escapeChar(ch);
    if (escaped === undefined) {
      plain += ch;
    } else {
      flush();
      pieces.push({ text: escaped, marker: true });
    }
  }
  flush();
  return pieces;
}

/** `text` on plain-text surfaces (a dialog): the same escapes, unmarked. */
export function visibleText(text: string, collapseSpaces = true): string {
  return visiblePieces(text, collapseSpaces)
    .map((piece) => piece.text)
    .join("");
}
