/** The server log as a test reads it: every line the logger writes, raw and parsed. */
import { setLogDestination } from "../../lib/log";

export type LogLine = { level: string; msg: string; requestId?: string; [k: string]: unknown };

/** From now on every line at `level` and above (default info) is captured. */
export function captureLog(level: Parameters<typeof setLogDestination>[1] = "info") {
  const raw: string[] = [];
  setLogDestination({ write: (s: string) => void raw.push(...s.split("\n").filter(Boolean)) }, level);
  return {
    raw,
    /** Every line parsed as JSON (throws on a line that is not). */
    lines: (): LogLine[] => raw.map((l) => JSON.parse(l) as LogLine),
    restore: () => setLogDestination(),
  };
}
