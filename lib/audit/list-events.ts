/**
 * The audit trail for the admin console: filtered, newest first, keyset-paginated on `seq`. The same filter as the
 * export (lib/audit/export.ts), so what an admin sees is what they download.
 */
import { db } from "../db/client";
import type { AuditFilter } from "./export";

export type AuditRow = {
  seq: number;
  at: Date;
  type: string;
  actor: string;
  taskId: string | null;
  requestId: string | null;
  data: unknown;
  hash: string;
};

export type AuditListPage = { events: AuditRow[]; nextBefore: number | null };

export function auditWhere(f: AuditFilter) {
  return {
    ...(f.type ? { type: f.type } : {}),
    ...(f.taskId ? { taskId: f.taskId } : {}),
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.from || f.to ? { at: { ...(f.from ? { gte: f.from } : {}), ...(f.to ? { lte: f.to } : {}) } } : {}),
  };
}

/** One page of events matching `filter`, newest first; `before` continues below that seq. */
export async function listAuditEvents(filter: AuditFilter, opts: { before?: number; size?: number } = {}): Promise<AuditListPage> {
  const size = Math.min(Math.max(opts.size ?? 50, 1), 200);
  const rows = await db().auditEvent.findMany({
    where: { ...auditWhere(filter), ...(opts.before ? { seq: { lt: opts.before } } : {}) },
    orderBy: { seq: "desc" },
    take: size + 1,
    select: { seq: true, at: true, type: true, actor: true, taskId: true, requestId: true, data: true, hash: true },
  });
  const events = rows.slice(0, size);
  return { events, nextBefore: rows.length > size ? events[events.length - 1].seq : null };
}

/** The event types present in the trail, for the filter. */
export async function auditEventTypes(): Promise<string[]> {
  const rows = await db().auditEvent.findMany({ distinct: ["type"], select: { type: true }, orderBy: { type: "asc" } });
  return rows.map((r) => r.type);
}
