/**
 * What an ordinary server log may say about a failure: where it happened (words of the code's own) and the
 * error's class. Never the error's message, its stack (frames carry absolute paths) or anything from a request:
 * messages of tool errors, parse errors and driver errors can quote the arguments they choked on (SEP "Durable
 * sensitive state": keep them out of ordinary logs).
 */

const NAME = /^[A-Za-z_$][\w$]{0,63}$/;

/** The class of a thrown value, from its constructor (an error's `name` is data and may carry anything). */
export function errorClass(err: unknown): string {
  if (err === null) return "null";
  if (typeof err !== "object" && typeof err !== "function") return typeof err;
  const ctor = (Object.getPrototypeOf(err) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const name = typeof ctor === "string" && NAME.test(ctor) ? ctor : "Object";
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && /^[A-Z][A-Z0-9_]{0,15}$/.test(code) ? `${name} ${code}` : name;
}

/** `where` is reduced to one line of plain words (no line breaks that could forge log lines or frames). */
export function safeWhere(where: string): string {
  const cleaned = where.split(/[\r\n]/)[0].replace(/[^\w ./-]/g, "?").trim().slice(0, 80);
  return cleaned || "?";
}

export function logFailure(where: string, err: unknown): void {
  console.error(`[countersign] ${safeWhere(where)} failed: ${errorClass(err)}`);
}
