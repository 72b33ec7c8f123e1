/**
 * Sealing of rows already stored: `sealLegacyRows` seals rows written in plain text before records were sealed
 * (run with the migrations, so an older data folder starts with every sensitive record sealed), and `rotateKeys`
 * re-seals every row that is not sealed under the current data key, so older keys can then be retired.
 * Each row is rewritten with a conditional update (only if it still holds what was read), so running this beside
 * a live server loses no write. A row that does not open (tampered, or its key is gone) is left as it is and
 * counted: it stays unreadable, and reads of it keep failing closed.
 */
import type { PrismaClient } from "./generated/client";
import { isSealed, open, seal, sealedKid } from "../crypto/seal";
import { keyRing } from "../crypto/keys";
import { aadFor, SEALED } from "./sealed";

export type ResealReport = { sealed: number; rotated: number; unreadable: number };

type Mode = "legacy" | "rotate";

const BATCH = 500;

function needsWork(v: unknown, mode: Mode, kid: string): boolean {
  if (v === null || v === undefined) return false;
  if (!isSealed(v)) return true;
  return mode === "rotate" && sealedKid(v) !== kid;
}

async function resealColumn(db: PrismaClient, model: string, column: string, mode: Mode, report: ResealReport): Promise<void> {
  const spec = SEALED[model];
  const members = spec.members?.[column];
  const kid = keyRing().current.kid;
  const cols = ["id", ...spec.identity.filter((f) => f !== "id")].map((c) => `"${c}"`).join(", ");
  const kidPattern = `cs1.${kid.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`;
  // Only rows with work to do are read (a start-up over an already sealed database reads nothing).
  let todo: string;
  if (members) {
    const plain = members.map((m) => `"${column}"->'${m}' IS NOT NULL`).join(" OR ");
    todo = mode === "legacy" ? `(${plain})` : `(${plain} OR ("${column}"->>'sealed') NOT LIKE $2)`;
  } else {
    todo = mode === "legacy" ? `"${column}"::text NOT LIKE '"cs1.%'` : `"${column}"::text NOT LIKE ('"' || $2)`;
  }
  let after = "";
  for (;;) {
    const rows = await db.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT ${cols}, "${column}"::text AS "value" FROM "${model}"
       WHERE id > $1 AND "${column}" IS NOT NULL AND "${column}" <> 'null'::jsonb AND ${todo} ORDER BY id LIMIT ${BATCH}`,
      after,
      ...(mode === "rotate" ? [kidPattern] : []),
    );
    if (rows.length === 0) return;
    after = String(rows[rows.length - 1].id);
    for (const row of rows) {
      const raw = row.value as string;
      const stored = JSON.parse(raw) as unknown;
      const aad = aadFor(model, column, row);
      let next: unknown;
      let legacy = false;
      try {
        if (members) {
          if (!stored || typeof stored !== "object" || Array.isArray(stored)) continue;
          const obj = stored as Record<string, unknown>;
          legacy = members.some((m) => m in obj);
          if (!legacy && !needsWork(obj.sealed, mode, kid)) continue;
          const { sealed, ...rest } = obj;
          const secret: Record<string, unknown> = sealed !== undefined ? (open(sealed, aad) as Record<string, unknown>) : {};
          for (const m of members) if (m in rest) secret[m] = rest[m];
          const plain = Object.fromEntries(Object.entries(rest).filter(([k]) => !members.includes(k)));
          next = Object.keys(secret).length ? { ...plain, sealed: seal(secret, aad) } : plain;
        } else {
          if (!needsWork(stored, mode, kid)) continue;
          legacy = !isSealed(stored);
          next = seal(legacy ? stored : open(stored, aad), aad);
        }
      } catch {
        report.unreadable++;
        continue;
      }
      const n = await db.$executeRawUnsafe(
        `UPDATE "${model}" SET "${column}" = $1::jsonb WHERE id = $2 AND "${column}"::text = $3`,
        JSON.stringify(next),
        row.id,
        raw,
      );
      if (n === 1) {
        if (legacy) report.sealed++;
        else report.rotated++;
      }
    }
  }
}

async function resealAll(db: PrismaClient, mode: Mode): Promise<ResealReport> {
  const report: ResealReport = { sealed: 0, rotated: 0, unreadable: 0 };
  for (const [model, spec] of Object.entries(SEALED)) {
    for (const column of [...spec.whole, ...Object.keys(spec.members ?? {})]) await resealColumn(db, model, column, mode, report);
  }
  return report;
}

/** Seals what older versions stored in plain text; leaves sealed rows alone. */
export function sealLegacyRows(db: PrismaClient): Promise<ResealReport> {
  return resealAll(db, "legacy");
}

/** Re-seals every sensitive record under the current (first) data key; legacy plain text is sealed too. */
export function rotateKeys(db: PrismaClient): Promise<ResealReport> {
  return resealAll(db, "rotate");
}
