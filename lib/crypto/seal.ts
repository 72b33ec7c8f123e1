/**
 * Sealing of one value at rest: AES-256-GCM under the current data key, with additional authenticated data
 * naming the row and column it belongs to (for example `Task.arguments:<id>`), so a ciphertext that is edited,
 * or copied into another row or column, does not open. The sealed form is one string:
 *
 *   cs1.<kid>.<iv, base64url>.<ciphertext || tag, base64url>
 *
 * `open` fails closed: a value that is not sealed, names an unknown key, or fails authentication throws
 * SealedRecordError (whose message names the record, never its content).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { keyRing } from "./keys";

const PREFIX = "cs1.";
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealedRecordError extends Error {
  override name = "SealedRecordError";
  constructor(readonly record: string, why: string) {
    super(`The stored record ${record} ${why}; it is not used.`);
  }
}

export function isSealed(v: unknown): v is string {
  return typeof v === "string" && v.startsWith(PREFIX);
}

/** The key id a sealed value was sealed under, or null for anything else. */
export function sealedKid(v: unknown): string | null {
  return isSealed(v) ? v.split(".")[1] ?? null : null;
}

export function seal(value: unknown, aad: string): string {
  const { current } = keyRing();
  const iv = randomBytes(IV_BYTES);
  const c = createCipheriv("aes-256-gcm", current.key, iv);
  c.setAAD(Buffer.from(aad, "utf8"));
  const ct = Buffer.concat([c.update(JSON.stringify(value), "utf8"), c.final(), c.getAuthTag()]);
  return `${PREFIX}${current.kid}.${iv.toString("base64url")}.${ct.toString("base64url")}`;
}

export function open(sealed: unknown, aad: string): unknown {
  if (!isSealed(sealed)) throw new SealedRecordError(aad, "is not sealed");
  const [, kid, ivText, ctText, extra] = sealed.split(".");
  const key = kid ? keyRing().all.get(kid) : undefined;
  if (!key) throw new SealedRecordError(aad, `was sealed under key ${kid ? JSON.stringify(kid.slice(0, 32)) : "(none)"}, which is not configured`);
  const iv = Buffer.from(ivText ?? "", "base64url");
  const ct = Buffer.from(ctText ?? "", "base64url");
  if (extra !== undefined || iv.length !== IV_BYTES || ct.length < TAG_BYTES) throw new SealedRecordError(aad, "is malformed");
  try {
    const d = createDecipheriv("aes-256-gcm", key, iv);
    d.setAAD(Buffer.from(aad, "utf8"));
    d.setAuthTag(ct.subarray(ct.length - TAG_BYTES));
    const text = Buffer.concat([d.update(ct.subarray(0, ct.length - TAG_BYTES)), d.final()]).toString("utf8");
    return JSON.parse(text);
  } catch {
    throw new SealedRecordError(aad, "failed its integrity check");
  }
}
