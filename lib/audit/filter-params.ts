/**
 * The audit filter from URL parameters (admin page and export alike). The actor may be given as a name or an email;
 * a value that cannot be read (a bad date, an unknown person, a malformed type or task id) is a problem the page
 * shows, never a filter silently left out.
 */
import { actorFilter, param, parseDateRange, type RawParams } from "../admin/filters";
import type { AuditFilter } from "./export";

export type AuditFilterParams = AuditFilter & { raw: Record<string, string>; problems: string[] };

export async function auditFilterFrom(raw: RawParams): Promise<AuditFilterParams> {
  const filter: AuditFilterParams = { raw: {}, problems: [] };
  for (const key of ["type", "actor", "taskId", "from", "to"]) {
    const v = param(raw, key);
    if (v) filter.raw[key] = v;
  }
  const { type, taskId } = filter.raw;
  if (type) {
    if (/^[a-z]+\.[a-z.-]+$/.test(type)) filter.type = type;
    else filter.problems.push(`The event type “${type}” is not valid: a type looks like request.created.`);
  }
  if (taskId) {
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(taskId)) filter.taskId = taskId.toLowerCase();
    else filter.problems.push(`The task id “${taskId}” is not valid: a task id looks like 0b5e…-…, 36 characters.`);
  }
  const actor = await actorFilter(filter.raw.actor);
  if (actor.actor) filter.actor = actor.actor;
  const { range, problems } = parseDateRange(raw);
  Object.assign(filter, range);
  filter.problems.push(...actor.problems, ...problems);
  return filter;
}
