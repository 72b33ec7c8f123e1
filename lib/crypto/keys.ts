/**
 * The data keys that seal sensitive records at rest (AES-256-GCM, 32-byte keys), each named by a key id.
 *
 * Source, first match wins:
 *  - COUNTERSIGN_DATA_KEYS: `kid:base64key` entries separated by commas or whitespace. The first key seals new
 *    writes; the others still open what they sealed, until `npm run keys:rotate` has re-sealed every row.
 *  - otherwise the key file `data-keys` in the data folder (COUNTERSIGN_DATA_DIR, default .data/), same format one
 *    entry per line, created with a fresh random key (mode 0600) the first time it is needed.
 * Keys are never logged; errors name the key id at most.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export type DataKey = { kid: string; key: Buffer };
export type KeyRing = { current: DataKey; all: Map<string, Buffer>; source: "env" | "file" };

export class KeyConfigError extends Error {
  override name = "KeyConfigError";
}

const KID = /^[A-Za-z0-9_-]{1,32}$/;

export function parseKeys(text: string, where: string): DataKey[] {
  const keys: DataKey[] = [];
  for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
    const i = entry.indexOf(":");
    const kid = i > 0 ? entry.slice(0, i) : "";
    if (!KID.test(kid)) throw new KeyConfigError(`${where}: every entry must be kid:base64key with a kid of letters, digits, _ or -.`);
    const key = Buffer.from(entry.slice(i + 1), "base64");
    if (key.length !== 32) throw new KeyConfigError(`${where}: key ${kid} must be 32 bytes (base64 of 32 random bytes).`);
    if (keys.some((k) => k.kid === kid)) throw new KeyConfigError(`${where}: key id ${kid} appears twice.`);
    keys.push({ kid, key });
  }
  if (keys.length === 0) throw new KeyConfigError(`${where} holds no key.`);
  return keys;
}

export function newKeyEntry(kid: string): string {
  return `${kid}:${randomBytes(32).toString("base64")}`;
}

export function keyFilePath(): string {
  return path.join(path.resolve(process.env.COUNTERSIGN_DATA_DIR ?? ".data"), "data-keys");
}

function fromFile(): DataKey[] {
  const file = keyFilePath();
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      fs.writeFileSync(file, `${newKeyEntry(`k${Date.now().toString(36)}`)}\n`, { mode: 0o600, flag: "wx" });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  return parseKeys(fs.readFileSync(file, "utf8"), file);
}

const holder = globalThis as unknown as { __countersignKeys?: { spec: string; ring: KeyRing } };

/** The key ring of this process (re-read when COUNTERSIGN_DATA_KEYS changes, as tests of rotation do). */
export function keyRing(): KeyRing {
  const env = process.env.COUNTERSIGN_DATA_KEYS?.trim();
  // A key file is re-read when it changes, so a running server picks up a key that rotation added.
  let spec = `env:${env}`;
  if (!env) {
    const file = keyFilePath();
    let stamp = "none";
    try {
      const st = fs.statSync(file);
      stamp = `${st.mtimeMs}:${st.size}`;
    } catch {}
    spec = `file:${file}:${stamp}`;
  }
  if (holder.__countersignKeys?.spec === spec) return holder.__countersignKeys.ring;
  const keys = env ? parseKeys(env, "COUNTERSIGN_DATA_KEYS") : fromFile();
  const ring: KeyRing = { current: keys[0], all: new Map(keys.map((k) => [k.kid, k.key])), source: env ? "env" : "file" };
  // A file created just now has a new stamp: compute it again so the next call hits the cache.
  holder.__countersignKeys = { spec: env ? spec : "", ring };
  if (!env) {
    const st = fs.statSync(keyFilePath());
    holder.__countersignKeys.spec = `file:${keyFilePath()}:${st.mtimeMs}:${st.size}`;
  }
  return ring;
}

/** Forgets the cached ring (after the key file changed). */
export function reloadKeys(): void {
  holder.__countersignKeys = undefined;
}

/** Puts a new key first in the key file (file-based keys only); the old ones stay for reading. */
export function addFileKey(kid = `k${Date.now().toString(36)}`): string {
  if (process.env.COUNTERSIGN_DATA_KEYS?.trim()) {
    throw new KeyConfigError("Keys come from COUNTERSIGN_DATA_KEYS: put the new key first there, then rotate.");
  }
  const old = fromFile();
  if (old.some((k) => k.kid === kid)) throw new KeyConfigError(`key id ${kid} is already in use.`);
  const file = keyFilePath();
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, [newKeyEntry(kid), ...old.map((k) => `${k.kid}:${k.key.toString("base64")}`)].join("\n") + "\n", { mode: 0o600 });
  fs.renameSync(tmp, file);
  reloadKeys();
  return kid;
}
