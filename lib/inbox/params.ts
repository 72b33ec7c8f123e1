/**
 * The inbox's and history's URL parameters (filters, search, sort, page cursor), parsed once for the page and its
 * JSON route alike. Anything unreadable falls back to the default rather than failing the page.
 */
import { z } from "zod";

export type RawParams = Record<string, string | string[] | undefined> | URLSearchParams;

function get(raw: RawParams, key: string): string | undefined {
  if (raw instanceof URLSearchParams) return raw.get(key) ?? undefined;
  const v = raw[key];
  return Array.isArray(v) ? v[0] : v;
}

const opt = <T extends z.ZodType>(s: T) => s.optional().catch(undefined);
const TOOL = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/);
const GROUP = z.string().regex(/^[a-z0-9-]{2,40}$/);
const SEARCH = z.string().trim().min(1).max(100);
const CURSOR = z.string().max(200);

export const INBOX_STATUSES = ["all", "new", "partly-approved", "question-open"] as const;
export type InboxStatus = (typeof INBOX_STATUSES)[number];
export const INBOX_SORTS = ["newest", "expiring"] as const;
export type InboxSort = (typeof INBOX_SORTS)[number];

const inboxSchema = z.object({
  tool: opt(TOOL),
  group: opt(GROUP),
  status: z.enum(INBOX_STATUSES).catch("all"),
  q: opt(SEARCH),
  sort: z.enum(INBOX_SORTS).catch("newest"),
  after: opt(CURSOR),
  before: opt(CURSOR),
});
export type InboxParams = z.infer<typeof inboxSchema>;

export function parseInboxParams(raw: RawParams): InboxParams {
  const keys = ["tool", "group", "status", "q", "sort", "after", "before"] as const;
  return inboxSchema.parse(Object.fromEntries(keys.map((k) => [k, get(raw, k) || undefined])));
}

export const OUTCOMES = ["executed", "denied", "expired", "cancelled", "error", "unknown", "in-progress"] as const;
export type Outcome = (typeof OUTCOMES)[number];

const historySchema = z.object({
  tool: opt(TOOL),
  group: opt(GROUP),
  outcome: opt(z.enum(OUTCOMES)),
  q: opt(SEARCH),
  after: opt(CURSOR),
  before: opt(CURSOR),
});
export type HistoryParams = z.infer<typeof historySchema>;

export function parseHistoryParams(raw: RawParams): HistoryParams {
  const keys = ["tool", "group", "outcome", "q", "after", "before"] as const;
  return historySchema.parse(Object.fromEntries(keys.map((k) => [k, get(raw, k) || undefined])));
}

/** The same parameters as a query string (undefined and defaults left out), with `extra` overriding. */
export function toQuery(params: Record<string, string | undefined>, extra: Record<string, string | undefined> = {}): string {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...params, ...extra })) {
    if (v === undefined || v === "" || (k === "status" && v === "all") || (k === "sort" && v === "newest")) continue;
    out.set(k, v);
  }
  const s = out.toString();
  return s ? `?${s}` : "";
}
