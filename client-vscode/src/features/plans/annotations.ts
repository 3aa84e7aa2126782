// Line-by-line review of a plan: the person's comments, replacements and
// deletions on lines of the plan's content (1-based, inclusive, as
// baton/plan/get returns it). Pure, so the webview (which makes them) and the
// host (which checks what the webview sends) agree on one shape.
import type { PlanAnnotation } from "../../protocol";
import { isInt, isRecord, isString } from "../../shell/guards";

export type AnnotationKind = PlanAnnotation["kind"];
export const ANNOTATION_KINDS: readonly AnnotationKind[] = ["comment", "replace", "delete"];

/** As many as the server takes in one request. */
export const MAX_ANNOTATIONS = 500;
const MAX_TEXT = 200_000;

/** The wire shape (`baton/plan/requestChanges`), checked: undefined when anything is off. */
export function parseAnnotations(value: unknown): PlanAnnotation[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_ANNOTATIONS) return undefined;
  const out: PlanAnnotation[] = [];
  for (const item of value) {
    if (!isRecord(item)) return undefined;
    const { kind, startLine, endLine, quote, text } = item;
    if (!(ANNOTATION_KINDS as readonly unknown[]).includes(kind)) return undefined;
    if (!isInt(startLine) || !isInt(endLine) || startLine < 1 || endLine < startLine) return undefined;
    if (!isString(quote, MAX_TEXT)) return undefined;
    if (text !== undefined && !isString(text, MAX_TEXT)) return undefined;
    // A comment or a replacement says something; a deletion may say why.
    if (kind !== "delete" && (text === undefined || text.trim() === "")) return undefined;
    out.push({
      kind: kind as AnnotationKind,
      startLine,
      endLine,
      quote,
      ...(text !== undefined && text.trim() !== "" ? { text } : {}),
    });
  }
  return out;
}

/** Lines `start`..`end` (1-based, inclusive) of `content`. */
export function sourceLines(content: string, start: number, end: number): string {
  return content.split("\n").slice(start - 1, end).join("\n");
}

/** Markdown's inline marks and runs of spaces taken out, to compare a line with what the page shows. */
function plain(text: string): string {
  return text
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX~!]\]\s+)?/, "")
    .replace(/^\s*#{1,6}\s+/, "")
    .replace(/^\s*>\s?/, "")
    .replace(/\]\([^)]*\)|[`*_~[\]]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The lines a selection covers. The page knows the source lines of the block
 * each end of the selection is in (markdown-it's map); within a block of
 * several lines (a wrapped paragraph, a code block) the selection's first and
 * last lines, when each is found on exactly one source line, narrow it.
 */
export function selectedLines(content: string, start: number, end: number, selected: string): { startLine: number; endLine: number } {
  const whole = { startLine: start, endLine: end };
  if (end <= start) return whole;
  const parts = selected.split("\n").map(plain).filter((part) => part !== "");
  if (parts.length === 0) return whole;
  const lines = content.split("\n").map(plain);
  const hits = (needle: string, from: number): number[] => {
    const found: number[] = [];
    for (let n = from; n <= end; n++) {
      const line = lines[n - 1] ?? "";
      if (line !== "" && line.includes(needle)) found.push(n);
    }
    return found;
  };
  const first = hits(parts[0] as string, start);
  const startLine = first.length === 1 ? (first[0] as number) : start;
  const last = hits(parts[parts.length - 1] as string, startLine);
  const endLine = last.length === 1 ? (last[0] as number) : end;
  return { startLine, endLine: Math.max(startLine, endLine) };
}

const LINE_PREFIX = /^\s*(?:(?:[-*+]|\d+[.)])\s+(?:\[[ xX~!]\]\s+)?|#{1,6}\s+|>\s?)?/;
const MARKS = new Set(["`", "*", "_", "~", "[", "]", "|"]);

/**
 * `source` as the page shows it (line prefixes, inline marks and link targets
 * out, runs of white space as one space), with each kept character's offset
 * in `source`.
 */
function shown(source: string): { text: string; at: number[] } {
  let text = "";
  const at: number[] = [];
  let space = false;
  let offset = 0;
  for (const line of source.split("\n")) {
    for (let i = LINE_PREFIX.exec(line)?.[0].length ?? 0; i < line.length; i++) {
      const c = line[i] as string;
      if (c === "]" && line[i + 1] === "(") {
        const close = line.indexOf(")", i);
        if (close > 0) {
          i = close;
          continue;
        }
      }
      if (/\s/.test(c)) {
        space = text !== "";
        continue;
      }
      if (MARKS.has(c)) continue;
      if (space) {
        text += " ";
        at.push(offset + i);
        space = false;
      }
      text += c;
      at.push(offset + i);
    }
    space = text !== "";
    offset += line.length + 1;
  }
  return { text, at };
}

/**
 * The quote to send for a selection: the markdown of the selected part of
 * lines `start`..`end` (what the page showed is markdown rendered, and the
 * server checks the quote against the plan's text), found by matching what
 * the page shows; when it cannot be found, those lines' whole text.
 */
export function sourceQuote(content: string, start: number, end: number, selected: string): string {
  const source = sourceLines(content, start, end);
  const wanted = shown(selected).text;
  const page = shown(source);
  const at = wanted === "" ? -1 : page.text.indexOf(wanted);
  if (at < 0) return source.trim();
  // Emphasis and code marks around the selection belong to it: `two`, not `two.
  const wraps = (c: string | undefined) => c === "`" || c === "*" || c === "_" || c === "~";
  let from = page.at[at] as number;
  let to = (page.at[at + wanted.length - 1] as number) + 1;
  while (from > 0 && wraps(source[from - 1])) from--;
  while (to < source.length && wraps(source[to])) to++;
  return source.slice(from, to);
}

/** An annotation as the panel keeps it: the wire fields, the plan version it was made on, and its lines' text then. */
export interface DraftAnnotation extends PlanAnnotation {
  id: string;
  version: number;
  /** The source lines when it was made, to find them again in a later version. */
  source: string;
  /** Its lines could not be found in the current plan: it must be removed or made again. */
  stale?: boolean;
}

/**
 * Moves annotations onto a new version of the plan: each one's source lines,
 * found once in the new content, give its new line numbers; not found (or
 * found twice) it is stale.
 */
export function reanchor(annotations: DraftAnnotation[], content: string, version: number): DraftAnnotation[] {
  const lines = content.split("\n");
  return annotations.map((a) => {
    if (a.version === version && !a.stale) return a;
    const wanted = a.source.split("\n");
    const found: number[] = [];
    for (let i = 0; i + wanted.length <= lines.length && found.length < 2; i++) {
      if (wanted.every((line, k) => lines[i + k] === line)) found.push(i + 1);
    }
    if (found.length !== 1) return { ...a, version, stale: true };
    const startLine = found[0] as number;
    const { stale: _stale, ...rest } = a;
    return { ...rest, version, startLine, endLine: startLine + wanted.length - 1 };
  });
}

/** What goes on the wire for an annotation the panel keeps. */
export function toWire(a: DraftAnnotation): PlanAnnotation {
  return {
    kind: a.kind,
    startLine: a.startLine,
    endLine: a.endLine,
    quote: a.quote,
    ...(a.text !== undefined && a.text !== null && a.text.trim() !== "" ? { text: a.text } : {}),
  };
}

export function lineLabel(a: { startLine: number; endLine: number }): string {
  return a.startLine === a.endLine ? `Line ${a.startLine}` : `Lines ${a.startLine}–${a.endLine}`;
}
