/**
 * The filters of History and the audit trail beyond those of lib/inbox/params.ts: a reviewer or an actor given by
 * name or email, and a date range. A value that cannot be read is reported, so the page says so instead of
 * silently showing everything.
 */
import type { HistoryFilters } from "../inbox/history";
import { OUTCOMES, parseHistoryParams } from "../inbox/params";
import { findPerson } from "./find-person";

export type RawParams = Record<string, string | string[] | undefined> | URLSearchParams;

export function param(raw: RawParams, key: string): string | undefined {
  const v = raw instanceof URLSearchParams ? raw.get(key) ?? undefined : raw[key];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? s.trim() : undefined;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * A calendar day (YYYY-MM-DD, UTC) as the first or last millisecond of that day, or an error naming the field.
 * Rejects days that do not exist (2026-02-30), which Date.parse would roll over.
 */
export function parseDay(value: string, label: string, end: "start" | "end"): { ok: true; at: Date } | { ok: false; error: string } {
  const m = DAY.exec(value);
  const bad = { ok: false as const, error: `${label} must be a date like 2026-03-31, not “${value}”.` };
  if (!m) return bad;
  const at = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (at.getUTCFullYear() !== Number(m[1]) || at.getUTCMonth() !== Number(m[2]) - 1 || at.getUTCDate() !== Number(m[3])) return bad;
  return { ok: true, at: end === "start" ? at : new Date(at.getTime() + 86_400_000 - 1) };
}

export type DateRange = { from?: Date; to?: Date };

/** `from` and `to` parameters as a range of whole UTC days; errors for unreadable days and a range that ends before it starts. */
export function parseDateRange(raw: RawParams): { range: DateRange; problems: string[] } {
  const range: DateRange = {};
  const problems: string[] = [];
  const from = param(raw, "from");
  const to = param(raw, "to");
  if (from) {
    const d = parseDay(from, "From", "start");
    if (d.ok) range.from = d.at;
    else problems.push(d.error);
  }
  if (to) {
    const d = parseDay(to, "To", "end");
    if (d.ok) range.to = d.at;
    else problems.push(d.error);
  }
  if (range.from && range.to && range.from > range.to) problems.push("From is after To: no day is in that range.");
  return { range, problems };
}

/**
 * Values that a zod-parsed parameter set left out although they were given: each is a problem to show.
 * `allowed` names what each key accepts, in words.
 */
export function rejectedValues(raw: RawParams, parsed: Record<string, unknown>, allowed: Record<string, string>): string[] {
  return Object.entries(allowed).flatMap(([key, words]) => {
    const given = param(raw, key);
    return given !== undefined && parsed[key] === undefined ? [`The ${key} “${given}” is not valid: ${words}.`] : [];
  });
}

/** The History reviewer filter: whom it names (a user id), or why it names nobody. */
export async function reviewerFilter(raw: RawParams): Promise<{ reviewerId?: string; reviewerText?: string; problems: string[] }> {
  const text = param(raw, "reviewer");
  if (!text) return { problems: [] };
  const found = await findPerson(text);
  if (!found.ok) return { reviewerText: text, problems: [found.error] };
  return { reviewerId: found.id, reviewerText: text, problems: [] };
}

const RAW_ACTOR = /^(system|backend|(user|agent|oidc|slack):[A-Za-z0-9._:@-]{1,80})$/;

/**
 * The audit actor filter: an actor id as the trail records it (`user:<id>`, `agent:<id>`, `system`), or a person's
 * name or email, or an agent's name, resolved to that actor id.
 */
export async function actorFilter(text: string | undefined): Promise<{ actor?: string; problems: string[] }> {
  if (!text) return { problems: [] };
  if (RAW_ACTOR.test(text)) return { actor: text, problems: [] };
  const found = await findPerson(text, { agents: true });
  if (!found.ok) return { problems: [found.error] };
  return { actor: `${found.kind}:${found.id}`, problems: [] };
}

/**
 * History's filters from the URL: tool, group, outcome and search (lib/inbox/params.ts), a reviewer by name or
 * email, and a range of decision days; with every value that could not be read, in words.
 */
export async function historyFiltersFrom(raw: RawParams): Promise<{ filters: HistoryFilters; problems: string[] }> {
  const params = parseHistoryParams(raw);
  const problems = rejectedValues(raw, params, {
    tool: "a tool name looks like issue_refund",
    group: "a group is lowercase letters, digits and dashes",
    outcome: `choose one of ${OUTCOMES.join(", ")}`,
    q: "search for at most 100 characters",
  });
  const [reviewer, dates] = [await reviewerFilter(raw), parseDateRange(raw)];
  problems.push(...reviewer.problems, ...dates.problems);
  return { filters: { ...params, ...dates.range, ...(reviewer.reviewerId ? { reviewerId: reviewer.reviewerId } : {}) }, problems };
}
