/**
 * `npm run keys:rotate`: re-seals every sensitive record under the current data key (the first of
 * COUNTERSIGN_DATA_KEYS, or of the key file .data/data-keys), so older keys can be retired afterwards.
 *
 *   npm run keys:rotate              re-seal under the current key (after putting a new key first)
 *   npm run keys:rotate -- --new-key (key file only) generate a new key, put it first, then re-seal
 *
 * Safe beside a running server: each row is rewritten only if it still holds what was read. With
 * COUNTERSIGN_DATA_KEYS, give every server the new list (new key first, old keys after) before rotating, and drop
 * an old key only once this reports nothing unreadable.
 */
import { closeDb, createDb } from "../lib/db/client";
import { startEmbedded } from "../lib/db/embedded";
import { addFileKey, keyFilePath, keyRing } from "../lib/crypto/keys";
import { rotateKeys } from "../lib/db/sealed-rows";
import { dataDir } from "./paths";

const url = process.env.DATABASE_URL;
const server = url ? null : await startEmbedded({ dataDir: dataDir() });
const client = createDb(url ?? server!.url, 2);
try {
  if (process.argv.includes("--new-key")) console.log(`New data key ${addFileKey()} added first to ${keyFilePath()}.`);
  const ring = keyRing();
  console.log(`Re-sealing under key ${ring.current.kid} (${ring.source === "env" ? "COUNTERSIGN_DATA_KEYS" : keyFilePath()}); ${ring.all.size - 1} older key(s) still read.`);
  const r = await rotateKeys(client);
  console.log(`Re-sealed ${r.rotated} record(s), sealed ${r.sealed} plain-text record(s).`);
  if (r.unreadable > 0) {
    console.log(`${r.unreadable} record(s) do not open with any configured key (tampered, or sealed under a key no longer listed): left as they are; keep the older keys.`);
    process.exitCode = 1;
  } else if (ring.all.size > 1) {
    console.log("Every record is sealed under the current key: the older keys may now be removed.");
  }
} finally {
  await client.$disconnect();
  await closeDb();
  await server?.stop();
}
