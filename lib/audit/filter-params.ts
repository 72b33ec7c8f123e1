/** The audit filter from URL parameters (admin page and export alike); anything unreadable is left out. */
import type { AuditFilter } from "./export";

type Raw = Record<string, string | string[] | undefined> | URLSearchParams;

function get(raw: Raw, key: string): string | undefined {
  const v = raw instanceof URLSearchParams ? raw.get(key) ?? undefined : raw[key];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? s.trim() : undefined;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function auditFilterFrom(raw: Raw): AuditFilter & { raw: Record<string, string> } {
  const type = get(raw, "type");
  const actor = get(raw, "actor");
  const taskId = get(raw, "taskId");
  const from = get(raw, "from");
  const to = get(raw, "to");
  const filter: AuditFilter & { raw: Record<string, string> } = { raw: {} };
  if (type && /^[a-z]+\.[a-z-]+$/.test(type)) (filter.type = type), (filter.raw.type = type);
  if (actor && actor.length <= 80) (filter.actor = actor), (filter.raw.actor = actor);
  if (taskId && /^[0-9a-f-]{36}$/i.test(taskId)) (filter.taskId = taskId), (filter.raw.taskId = taskId);
  if (from && DAY.test(from) && !Number.isNaN(Date.parse(`${from}T00:00:00Z`))) (filter.from = new Date(`${from}T00:00:00.000Z`)), (filter.raw.from = from);
  if (to && DAY.test(to) && !Number.isNaN(Date.parse(`${to}T00:00:00Z`))) (filter.to = new Date(`${to}T23:59:59.999Z`)), (filter.raw.to = to);
  return filter;
}
