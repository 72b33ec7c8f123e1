/**
 * The one place sensitive records are sealed and opened: a Prisma client extension over every query, so domain
 * code reads and writes plain values while the database only ever holds ciphertext (lib/crypto/seal.ts) for:
 *
 *   Task.arguments                  the complete tool arguments of the call binding
 *   SubmissionIntent.body/requester the submission body (arguments, summary, input) and requester context
 *   ApprovalRequest.body            its `arguments` and `input` (justification, ticket) members; the rest (tool,
 *                                   summary, requester names, policy) stays readable for the inbox's SQL
 *   Clarification.answer            the requester's answers to reviewers' questions
 *   WebhookDelivery.payload         outbox payloads (they carry the request's summary)
 *   CallRecord.snapshot             what policy evaluated for a call (its arguments and resource), for previews
 *
 * Each ciphertext is bound to its row and column (`Model.column:<row identity>`). Reads fail closed: a record
 * that does not open throws SealedRecordError, except the call binding's arguments, which read as a value that
 * matches no digest and no tool schema, so re-evaluation denies the call (binding) and the tool never runs.
 * Raw SQL bypasses this boundary; it must not read or write these columns (lib/db/sealed-rows.ts does, for
 * migration and rotation, with the same functions).
 */
import { randomUUID } from "node:crypto";
import { open, seal, SealedRecordError } from "../crypto/seal";
import { logWarn } from "../log";

type Spec = { identity: string[]; whole: string[]; members?: Record<string, string[]> };

export const SEALED: Record<string, Spec> = {
  Task: { identity: ["id"], whole: ["arguments"] },
  SubmissionIntent: { identity: ["id"], whole: ["body", "requester"] },
  ApprovalRequest: { identity: ["id"], whole: [], members: { body: ["arguments", "input"] } },
  Clarification: { identity: ["taskId", "key"], whole: ["answer"] },
  WebhookDelivery: { identity: ["id"], whole: ["payload"] },
  CallRecord: { identity: ["id"], whole: ["snapshot"] },
};

const RELATIONS: Record<string, Record<string, string>> = {
  ApprovalRequest: { reviews: "Review" },
  Review: { request: "ApprovalRequest" },
  Webhook: { deliveries: "WebhookDelivery" },
  WebhookDelivery: { webhook: "Webhook" },
};

/** What a call binding whose sealed arguments do not open reads as: no digest and no tool schema accepts it. */
export const UNREADABLE_ARGUMENTS = Object.freeze({ "countersign:unreadable": "the stored arguments failed their integrity check" });

export function aadFor(model: string, column: string, row: Record<string, unknown>): string {
  const spec = SEALED[model];
  const ids = spec.identity.map((f) => row[f]);
  if (ids.some((v) => typeof v !== "string" || v === "")) {
    throw new Error(`${model}.${column} is sealed and needs the row's ${spec.identity.join(" and ")} to be written or read`);
  }
  return `${model}.${column}:${ids.join(":")}`;
}

type Nullish = (v: unknown) => boolean;

function sealFields(model: string, data: Record<string, unknown>, row: Record<string, unknown>, isNull: Nullish): void {
  const spec = SEALED[model];
  for (const f of spec.whole) {
    // Undefined is Prisma's "not given": nothing to seal, and the column is left as it is (null on create).
    if (data[f] === undefined || isNull(data[f])) continue;
    data[f] = seal(data[f], aadFor(model, f, row));
  }
  for (const [f, members] of Object.entries(spec.members ?? {})) {
    const v = data[f];
    if (!v || typeof v !== "object" || Array.isArray(v) || isNull(v)) continue;
    data[f] = sealMembers(model, f, v as Record<string, unknown>, members, row);
  }
}

export function sealMembers(model: string, column: string, v: Record<string, unknown>, members: string[], row: Record<string, unknown>) {
  const secret: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === "sealed") continue;
    if (members.includes(k)) secret[k] = x;
    else rest[k] = x;
  }
  return Object.keys(secret).length ? { ...rest, sealed: seal(secret, aadFor(model, column, row)) } : rest;
}

export function openMembers(model: string, column: string, v: Record<string, unknown>, members: string[], row: Record<string, unknown>) {
  const aad = aadFor(model, column, row);
  if (members.some((m) => m in v)) throw new SealedRecordError(aad, "is not sealed");
  if (!("sealed" in v)) return v;
  const secret = open(v.sealed, aad);
  if (!secret || typeof secret !== "object" || Array.isArray(secret)) throw new SealedRecordError(aad, "is malformed");
  const { sealed: _sealed, ...rest } = v;
  return { ...rest, ...(secret as Record<string, unknown>) };
}

function openRecord(model: string, rec: Record<string, unknown>): void {
  const spec = SEALED[model];
  if (spec) {
    for (const f of spec.whole) {
      if (!(f in rec) || rec[f] === null) continue;
      try {
        rec[f] = open(rec[f], aadFor(model, f, rec));
      } catch (e) {
        if (model === "Task" && f === "arguments" && e instanceof SealedRecordError) {
          // The message names the record and field (words of the code's own), never the sealed content.
          logWarn("sealed task arguments unreadable", { detail: e.message.slice(0, 200) });
          rec[f] = UNREADABLE_ARGUMENTS;
        } else throw e;
      }
    }
    for (const [f, members] of Object.entries(spec.members ?? {})) {
      const v = rec[f];
      if (v && typeof v === "object" && !Array.isArray(v)) rec[f] = openMembers(model, f, v as Record<string, unknown>, members, rec);
    }
  }
}

/** A query's plan: identity fields added to a `select` (removed again from the result), per relation below. */
type Plan = { added: string[]; rel: Record<string, Plan> };

function plan(model: string, args: Record<string, unknown> | undefined): Plan {
  const p: Plan = { added: [], rel: {} };
  if (!args) return p;
  // Copies, so that a caller's (possibly shared) select objects are never changed.
  if (args.select && typeof args.select === "object") args.select = { ...(args.select as object) };
  if (args.include && typeof args.include === "object") args.include = { ...(args.include as object) };
  const spec = SEALED[model];
  const select = args.select as Record<string, unknown> | undefined;
  if (select && spec && [...spec.whole, ...Object.keys(spec.members ?? {})].some((f) => select[f])) {
    for (const id of spec.identity) {
      if (!select[id]) {
        select[id] = true;
        p.added.push(id);
      }
    }
  }
  for (const [field, target] of Object.entries(RELATIONS[model] ?? {})) {
    for (const holder of [args.select, args.include] as (Record<string, unknown> | undefined)[]) {
      const sub = holder?.[field];
      if (sub && typeof sub === "object") {
        const clone = { ...(sub as object) } as Record<string, unknown>;
        holder![field] = clone;
        p.rel[field] = plan(target, clone);
      } else if (sub) p.rel[field] = { added: [], rel: {} };
    }
  }
  return p;
}

function walk(model: string, value: unknown, p: Plan): void {
  if (Array.isArray(value)) {
    for (const v of value) walk(model, v, p);
    return;
  }
  if (!value || typeof value !== "object") return;
  const rec = value as Record<string, unknown>;
  openRecord(model, rec);
  for (const [field, sub] of Object.entries(p.rel)) {
    if (field in rec) walk(RELATIONS[model][field], rec[field], sub);
  }
  for (const f of p.added) delete rec[f];
}

const READS = new Set([
  "findUnique", "findUniqueOrThrow", "findFirst", "findFirstOrThrow", "findMany", "create", "createManyAndReturn",
  "update", "updateManyAndReturn", "upsert", "delete",
]);

function identityOf(model: string, where: unknown): Record<string, unknown> {
  const w = (where ?? {}) as Record<string, unknown>;
  const row: Record<string, unknown> = {};
  for (const f of SEALED[model].identity) {
    const v = w[f];
    row[f] = typeof v === "string" ? v : v && typeof v === "object" && typeof (v as { equals?: unknown }).equals === "string" ? (v as { equals: string }).equals : undefined;
  }
  // A compound unique selector such as { taskId_key: { taskId, key } }.
  for (const v of Object.values(w)) {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      for (const f of SEALED[model].identity) if (row[f] === undefined && typeof (v as Record<string, unknown>)[f] === "string") row[f] = (v as Record<string, unknown>)[f];
    }
  }
  return row;
}

function prepareCreate(model: string, data: Record<string, unknown>, isNull: Nullish): void {
  if (SEALED[model].identity.length === 1 && SEALED[model].identity[0] === "id" && data.id === undefined) data.id = randomUUID();
  sealFields(model, data, data, isNull);
}

/** Seals the sealed columns in a write's arguments (in place, on a copy the caller owns). */
export function prepareWrite(model: string, operation: string, args: Record<string, unknown>, isNull: Nullish): void {
  if (!SEALED[model]) return;
  const copy = (v: unknown) => (Array.isArray(v) ? v.map((x) => ({ ...(x as object) })) : v && typeof v === "object" ? { ...(v as object) } : v);
  switch (operation) {
    case "create":
    case "createMany":
    case "createManyAndReturn": {
      args.data = copy(args.data);
      for (const d of (Array.isArray(args.data) ? args.data : [args.data]) as Record<string, unknown>[]) prepareCreate(model, d, isNull);
      return;
    }
    case "update":
    case "updateMany":
    case "updateManyAndReturn": {
      args.data = copy(args.data);
      sealFields(model, args.data as Record<string, unknown>, identityOf(model, args.where), isNull);
      return;
    }
    case "upsert": {
      args.create = copy(args.create);
      prepareCreate(model, args.create as Record<string, unknown>, isNull);
      args.update = copy(args.update);
      sealFields(model, args.update as Record<string, unknown>, identityOf(model, args.where), isNull);
      return;
    }
  }
}

type QueryParams = { model?: string; operation: string; args: unknown; query: (args: unknown) => Promise<unknown> };

/** The extension's query hook (see lib/db/client.ts). */
export function sealedQuery(isNull: Nullish) {
  return async ({ model, operation, args, query }: QueryParams): Promise<unknown> => {
    if (!model) return query(args);
    const a = { ...((args ?? {}) as Record<string, unknown>) };
    prepareWrite(model, operation, a, isNull);
    const p = READS.has(operation) ? plan(model, a) : null;
    const result = await query(a);
    if (p) walk(model, result, p);
    return result;
  };
}
