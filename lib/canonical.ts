/** RFC 8785 (JCS) canonical JSON and its SHA-256 digest, the integrity check on a task's immutable call binding. */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

export function canonicalJson(value: unknown): string {
  const out = canonicalize(value);
  if (out === undefined) throw new Error("value cannot be canonicalized");
  return out;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** `sha256:<hex>` of the canonical JSON of `value`. */
export function digest(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}
