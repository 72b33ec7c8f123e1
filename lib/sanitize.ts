/**
 * Model-facing text (statusMessage, model-immediate-response) is a prompt-injection surface. Anything not written
 * by the server itself passes through here: control characters and markup removed, whitespace collapsed,
 * instruction-like phrasing neutralised, length bounded.
 */
const MAX = 200;

export function sanitizeForModel(input: string, max = MAX): string {
  let s = input
    .normalize("NFKC")
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/[`*_#<>\[\]{}|\\]/g, " ")
    .replace(/\b(ignore|disregard|forget)\b[^.]*\b(instructions?|previous|above|rules?)\b/gi, "[removed]")
    .replace(/\b(system|assistant|user)\s*:/gi, "$1 -")
    .replace(/\s+/g, " ")
    .trim();
  if (s.length > max) s = `${s.slice(0, max - 1).trimEnd()}…`;
  return s;
}
