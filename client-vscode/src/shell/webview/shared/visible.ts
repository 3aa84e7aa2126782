// The permission card's text as DOM nodes, escapes marked (see src/util/visible.ts).
import { visiblePieces } from "../../../util/visible";

/** `text` as DOM nodes, markers in `<span class="ctl">`. */
export function visibleNodes(text: string, collapseSpaces = true): Node[] {
  return visiblePieces(text, collapseSpaces).map((piece) => {
    if (!piece.marker) return document.createTextNode(piece.text);
    const span = document.createElement("span");
    span.className = "ctl";
    span.title = "shown escaped: a control or invisible character, or a long run of spaces";
    span.textContent = piece.text;
    return span;
  });
}
