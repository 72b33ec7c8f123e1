/** The audit trail as CSV or JSON Lines, in chain order, streamed page by page. */
import { db } from "../db/client";

export type AuditFilter = { type?: string; taskId?: string; actor?: string; from?: Date; to?: Date };

const COLUMNS = ["seq", "at", "type", "actor", "taskId", "requestId", "data", "prevHash", "hash"] as const;

function where(f: AuditFilter) {
  return {
    ...(f.type ? { type: f.type } : {}),
    ...(f.taskId ? { taskId: f.taskId } : {}),
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.from || f.to ? { at: { ...(f.from ? { gte: f.from } : {}), ...(f.to ? { lte: f.to } : {}) } } : {}),
  };
}

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? "" : typeof v === "string" ? v : v instanceof Date ? v.toISOString() : JSON.stringify(v);
  // Quote everything; neutralise spreadsheet formulas in untrusted text.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return `"${safe.replace(/"/g, '""')}"`;
}

export async function* exportAudit(format: "csv" | "jsonl", filter: AuditFilter = {}): AsyncGenerator<string> {
  if (format === "csv") yield `${COLUMNS.join(",")}\n`;
  let cursor = 0;
  for (;;) {
    const page = await db().auditEvent.findMany({ where: { ...where(filter), seq: { gt: cursor } }, orderBy: { seq: "asc" }, take: 1000 });
    if (page.length === 0) return;
    for (const e of page) {
      const row = { seq: e.seq, at: e.at.toISOString(), type: e.type, actor: e.actor, taskId: e.taskId, requestId: e.requestId, data: e.data, prevHash: e.prevHash, hash: e.hash };
      yield format === "jsonl" ? `${JSON.stringify(row)}\n` : `${COLUMNS.map((c) => csvCell(row[c])).join(",")}\n`;
      cursor = e.seq;
    }
  }
}
