/** Editing a file's text in a test, so that an edit which finds nothing to replace fails rather than tests nothing. */
import { expect } from "vitest";

/** `text` with the first `from` replaced by `to`; the test fails when `from` is not in `text`. */
export function edited(text: string, from: string | RegExp, to: string): string {
  const out = text.replace(from, to);
  expect(out, `nothing matches ${String(from)}`).not.toBe(text);
  return out;
}
