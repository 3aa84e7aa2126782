// One set of numbers: the meter is the context the next request sends, of the
// model's window; session totals (every request summed) live in its tooltip only.
import type { SessionInfoView } from "../../../shell/messages";
import { formatTokens } from "../../../shell/webview/shared/dom";

export function shortTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

export function contextLine(info: SessionInfoView): { fraction: number; label: string } {
  const c = info.context;
  if (!c || c.contextWindow <= 0) return { fraction: 0, label: "" };
  const fraction = Math.min(1, c.tokens / c.contextWindow);
  return { fraction, label: `${shortTokens(c.tokens)} / ${shortTokens(c.contextWindow)}` };
}

export function contextTooltip(info: SessionInfoView): string {
  const lines: string[] = [];
  const c = info.context;
  if (c && c.contextWindow > 0) {
    const percent = Math.round((c.tokens / c.contextWindow) * 100);
    lines.push(`Context in use now: ${formatTokens(c.tokens)} of ${formatTokens(c.contextWindow)} tokens (${percent}% of the model's window).`);
    if (c.cacheHitRate !== undefined) {
      const cached = c.cachedTokens !== undefined ? `${formatTokens(c.cachedTokens)} tokens, ` : "";
      lines.push(`Prompt cache: ${cached}${Math.round(c.cacheHitRate * 100)}% of this session's input was a cache hit.`);
    }
  } else {
    lines.push("Context in use: no figure yet (the first request reports it).");
  }
  const t = info.tokens;
  if (t && t.requests > 0) {
    lines.push(
      `Session totals over ${t.requests} request${t.requests === 1 ? "" : "s"}: ` +
        `input ${formatTokens(t.input)} (cached ${formatTokens(t.cached)}), output ${formatTokens(t.output)}.`,
    );
  }
  lines.push("Click: compact now, compaction history, context details.");
  return lines.join("\n");
}
