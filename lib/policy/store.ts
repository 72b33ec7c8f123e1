/**
 * The stored policy: the active version of each form rule plus the highest version of the policy document,
 * compiled once per distinct content and kept compiled. Every evaluation reads which versions are current (so a
 * save on one replica is seen by all at the next call) but compiles only when they changed.
 */
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";
import { digest } from "../canonical";
import { CATALOG_FINGERPRINT_SQL, policyTools, syncCatalog } from "../tools/catalog";
import type { PolicyProblem } from "./cedar";
import { compilePolicy, type StoredDocument } from "./compile";
import { LEGACY_DOCUMENT, PolicyDocument } from "./document";
import type { CompiledPolicy, Rule } from "./evaluate";
import type { PolicyTool } from "./schema";
import { failuresOf, runPolicyTests } from "./test-cases";

export async function currentRules(tool?: string): Promise<Rule[]> {
  return db().policyRule.findMany({ where: { active: true, ...(tool ? { tool } : {}) }, orderBy: { ruleKey: "asc" } });
}

export async function currentDocument(): Promise<StoredDocument> {
  const row = await db().policyDocument.findFirst({ orderBy: { version: "desc" } });
  if (!row) return { id: "legacy", version: 0, body: LEGACY_DOCUMENT };
  return { id: row.id, version: row.version, body: PolicyDocument.parse(row.body) };
}

export async function documentVersion(version: number): Promise<StoredDocument | null> {
  const row = await db().policyDocument.findUnique({ where: { version } });
  return row ? { id: row.id, version: row.version, body: PolicyDocument.parse(row.body) } : null;
}

const cache = new Map<string, CompiledPolicy>();

function remember(key: string, policy: CompiledPolicy): CompiledPolicy {
  if (cache.size >= 16) cache.delete(cache.keys().next().value!);
  cache.set(key, policy);
  return policy;
}

/** A policy that denies every call: what runs when the stored policy cannot be compiled at all. */
function denyAll(document: StoredDocument): CompiledPolicy {
  const r = compilePolicy({ rules: [], document: { ...document, body: PolicyDocument.parse({}) }, tools: [] }, { strict: false });
  if (!r.ok) throw new Error("The deny-all policy does not compile.");
  return r.policy;
}

/** Compiles leniently (see compile.ts): a stored policy that no longer validates denies what it covered. */
export function compileStored(rules: Rule[], document: StoredDocument, tools: PolicyTool[] = policyTools()): CompiledPolicy {
  const r = compilePolicy({ rules, document, tools }, { strict: false });
  return r.ok ? r.policy : denyAll(document);
}

const toolKeys = new WeakMap<PolicyTool[], string>();

function catalogKey(tools: PolicyTool[]): string {
  let key = toolKeys.get(tools);
  if (!key) {
    key = digest(tools.map((t) => [t.name, t.inputSchema, t.resourceEntity, t.resourceShape]));
    toolKeys.set(tools, key);
  }
  return key;
}

/** Which versions of policy and catalog are current: what currentPolicy reads before anything else. */
export type PolicyHead = { doc: string | null; rules: string | null; catalog: string | null };

/**
 * The policy head as columns another statement can carry (`doc`, `rules`, `catalog`), so a request that reads
 * something else first (its agent) learns the policy's version in the same round trip.
 */
export const POLICY_HEAD_COLUMNS = Prisma.sql`(SELECT id FROM "PolicyDocument" ORDER BY version DESC LIMIT 1) AS doc,
           (SELECT value::text FROM "ChangeEpoch" WHERE name = 'rules') AS rules,
           ${CATALOG_FINGERPRINT_SQL} AS catalog`;

/**
 * The current policy, compiled, and the tool catalog it was compiled for brought up to date. One statement tells
 * which versions are current (the document's id, the form rules' change epoch and the catalog's: see ChangeEpoch in
 * prisma/schema.prisma); only when they changed are the rows read and compiled again. `known` is that head when the
 * request's first statement already read it (POLICY_HEAD_COLUMNS), so the policy costs no statement of its own.
 */
export async function currentPolicy(known?: PolicyHead): Promise<CompiledPolicy> {
  const head = known ?? (await db().$queryRaw<PolicyHead[]>`SELECT ${POLICY_HEAD_COLUMNS}`)[0];
  // The same statement brings the tool catalog's fingerprint: the catalog is current too, at no extra statement.
  await syncCatalog(head?.catalog ?? null);
  const tools = policyTools();
  const key = `${head?.doc ?? "legacy"}:${head?.rules}:${catalogKey(tools)}`;
  // The rules' epoch names one state of the rules; without it (its row deleted) nothing may be cached under it.
  const cacheable = !!head?.rules;
  const hit = cacheable ? cache.get(key) : undefined;
  if (hit) return hit;
  const [rules, document] = await Promise.all([currentRules(), head?.doc ? currentDocument() : Promise.resolve({ id: "legacy", version: 0, body: LEGACY_DOCUMENT })]);
  const policy = compileStored(rules, document, tools);
  return cacheable ? remember(key, policy) : policy;
}

/** The body's own test cases against the policy it would make (a case without a resource reads it through the tool's mapping). */
async function bodyTests(policy: CompiledPolicy, body: PolicyDocument): Promise<PolicyProblem[]> {
  return failuresOf(await runPolicyTests(policy, body.tests, { mapResource: true })).map((f) => ({ message: f.message }));
}

export type SaveDocumentResult = { ok: true; version: number; unchanged: boolean } | { ok: false; problems: PolicyProblem[] };

/**
 * Saves `body` as the next version of the policy document, after strict compilation with the current form rules
 * and after its test cases pass against that whole policy (`check` replaces the run of the body's test cases: it
 * returns the failures). Nothing is saved on any problem. A body equal to the current version saves nothing.
 */
export async function saveDocument(
  input: unknown,
  actor: string,
  now: Date,
  opts: { note?: string; check?: (policy: CompiledPolicy, body: PolicyDocument) => Promise<PolicyProblem[]> } = {},
): Promise<SaveDocumentResult> {
  const parsed = PolicyDocument.safeParse(input);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => ({ message: `${i.path.join(".") || "document"}: ${i.message}` })) };
  }
  const body = parsed.data;
  const bodyDigest = digest(body);
  await syncCatalog();
  const rules = await currentRules();
  const compiled = compilePolicy({ rules, document: { id: "draft", version: 0, body }, tools: policyTools() }, { strict: true });
  if (!compiled.ok) return { ok: false, problems: compiled.problems };
  const check = opts.check ?? bodyTests;
  const failures = await check(compiled.policy, body);
  if (failures.length > 0) return { ok: false, problems: failures };
  return db().$transaction(async (tx) => {
    // Serializes concurrent saves: both cannot take the same next version.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(7240004, 1)`;
    const last = await tx.policyDocument.findFirst({ orderBy: { version: "desc" }, select: { version: true, digest: true } });
    if (last && last.digest === bodyDigest) return { ok: true as const, version: last.version, unchanged: true };
    const version = (last?.version ?? 0) + 1;
    await tx.policyDocument.create({ data: { version, body: body as object, digest: bodyDigest, note: opts.note ?? null, createdBy: actor, createdAt: now } });
    await appendAudit(tx, {
      type: "policy.document-saved",
      actor: actor.includes(":") ? actor : `user:${actor}`,
      data: { version, previous: last?.version ?? null, digest: bodyDigest },
      at: now,
    });
    return { ok: true as const, version, unchanged: false };
  });
}
