/**
 * The policy document: everything about policy that is not a form rule. Cedar policies (with the requirements of
 * a requestable denial as annotations), the default postures, the history windows policy reads, the time zones it
 * reads local time in, and test cases. Stored as immutable versions; the current version is the highest.
 */
import { z } from "zod";
import type { Requirements } from "./evaluate";
import { validTimeZone } from "./schema";

export const GROUP = /^[a-z0-9][a-z0-9-]{1,39}$/;
export const HISTORY_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** "90s", "30m", "8h", "2d" or a number of seconds. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d{1,7})\s*([smhd]?)\s*$/.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  return n * ({ "": 1, s: 1, m: 60, h: 3600, d: 86400 } as const)[m[2] as "" | "s" | "m" | "h" | "d"];
}

export function formatDuration(sec: number): string {
  if (sec >= 86400 && sec % 86400 === 0) return `${sec / 86400}d`;
  if (sec >= 3600 && sec % 3600 === 0) return `${sec / 3600}h`;
  if (sec >= 60 && sec % 60 === 0) return `${sec / 60}m`;
  return `${sec}s`;
}

const Duration = (min: number, max: number) =>
  z.string().refine((s) => {
    const v = parseDuration(s);
    return v !== null && v >= min && v <= max;
  }, `a duration such as 30m, 8h or 2d, between ${formatDuration(min)} and ${formatDuration(max)}`);

export const RequestableSpec = z
  .object({
    approvers: z.string().regex(GROUP, "an approver group: lowercase letters, digits and dashes"),
    quorum: z.number().int().min(1).max(10).default(1),
    deadline: Duration(60, 30 * 86400).default("24h"),
    validity: Duration(60, 30 * 86400).default("1h"),
    justification: z.boolean().default(false),
    /**
     * Each approval is confirmed with the reviewer's own passkey (WebAuthn), bound to the request and its arguments.
     * Absent means false, so documents written before it read (and digest) as they did.
     */
    passkey: z.boolean().optional(),
    /** Without a decision after this long, the request is offered to `fallback` too (and the admins are told). */
    escalate: Duration(60, 30 * 86400).optional(),
    fallback: z.string().regex(GROUP, "an approver group: lowercase letters, digits and dashes").optional(),
    reason: z.string().min(5).max(300),
  })
  .strict()
  .superRefine((s, ctx) => {
    const problem = escalationProblem({ approverGroup: s.approvers, fallbackGroup: s.fallback ?? null, escalateAfterSec: s.escalate === undefined ? null : parseDuration(s.escalate), requestDeadlineSec: parseDuration(s.deadline) });
    if (problem) ctx.addIssue({ code: "custom", path: [problem.field === "fallbackGroup" ? "fallback" : "escalate"], message: problem.message });
  });

export const PostureSpec = z.union([z.literal("allow"), z.literal("deny"), z.object({ requestable: RequestableSpec }).strict()]);
export type PostureSpec = z.infer<typeof PostureSpec>;

export const HistoryDef = z
  .object({
    name: z.string().regex(HISTORY_NAME, "a name of lowercase letters, digits and underscores"),
    tool: z.string().min(1).max(128),
    window: Duration(60, 400 * 86400),
    /** The group key: the same resource (an account, an order, a path), the same agent, the same user, or the whole tool. */
    per: z.enum(["resource", "agent", "user", "tool"]),
  })
  .strict();
export type HistoryDefSpec = z.infer<typeof HistoryDef>;

export const PolicyTest = z
  .object({
    name: z.string().min(1).max(200),
    call: z.object({ tool: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}) }).strict(),
    principal: z
      .object({
        agent: z.string().min(1).default("test-agent"),
        user: z.string().min(1).default("test-user@example.com"),
        role: z.string().default("requester"),
        groups: z.array(z.string()).default([]),
      })
      .strict()
      .default({ agent: "test-agent", user: "test-user@example.com", role: "requester", groups: [] }),
    /** The resource as the tool's mapping would read it; when absent, the mapping reads the current state. */
    resource: z.object({ type: z.string(), id: z.string(), properties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string()).max(1000)])) }).strict().optional(),
    history: z.record(z.string(), z.object({ total: z.number().int(), count: z.number().int() }).strict()).default({}),
    at: z.string().datetime({ offset: true }).optional(),
    expect: z.enum(["allow", "deny", "requestable"]),
    /** The policy that should decide (an @id, rule:<key> or default:...), optional. */
    by: z.string().optional(),
  })
  .strict();
export type PolicyTest = z.infer<typeof PolicyTest>;

export const PolicyDocument = z
  .object({
    policies: z.string().max(2_000_000).default(""),
    defaults: z
      .object({
        posture: PostureSpec.default("deny"),
        tools: z.record(z.string(), PostureSpec).default({}),
        agents: z.record(z.string(), PostureSpec).default({}),
      })
      .strict()
      .default({ posture: "deny", tools: {}, agents: {} }),
    history: z.array(HistoryDef).max(100).default([]),
    timeZones: z.array(z.string().refine(validTimeZone, "an IANA time zone such as Europe/Berlin")).max(20).default([]),
    tests: z.array(PolicyTest).max(2000).default([]),
  })
  .strict()
  .superRefine((d, ctx) => {
    const names = new Set<string>();
    d.history.forEach((h, i) => {
      if (names.has(h.name)) ctx.addIssue({ code: "custom", path: ["history", i, "name"], message: `two history windows are named ${h.name}` });
      names.add(h.name);
    });
  });
export type PolicyDocument = z.infer<typeof PolicyDocument>;

export function requirementsOf(spec: z.infer<typeof RequestableSpec>): Requirements {
  return {
    approverGroup: spec.approvers,
    approvalsRequired: spec.quorum,
    requestDeadlineSec: parseDuration(spec.deadline)!,
    approvalValiditySec: parseDuration(spec.validity)!,
    requireJustification: spec.justification,
    ...(spec.passkey ? { requirePasskey: true } : {}),
    ...(spec.escalate && spec.fallback ? { escalateAfterSec: parseDuration(spec.escalate)!, fallbackGroup: spec.fallback } : {}),
  };
}

/**
 * What is wrong with a rule's escalation, if anything: the escalation time and the fallback group come together,
 * the fallback is another group than the approvers, and escalation happens before the request's deadline.
 */
export function escalationProblem(r: {
  approverGroup: string | null;
  fallbackGroup: string | null;
  escalateAfterSec: number | null;
  requestDeadlineSec: number | null;
}): { field: "fallbackGroup" | "escalateAfterSec"; message: string } | null {
  const after = r.escalateAfterSec;
  if (!r.fallbackGroup && after === null) return null;
  if (!r.fallbackGroup) return { field: "fallbackGroup", message: "an escalation needs a fallback group" };
  if (after === null) return { field: "escalateAfterSec", message: "a fallback group needs an escalation time" };
  if (r.fallbackGroup === r.approverGroup) return { field: "fallbackGroup", message: "the fallback group must differ from the approver group" };
  if (r.requestDeadlineSec !== null && after >= r.requestDeadlineSec) return { field: "escalateAfterSec", message: "escalation must come before the request deadline" };
  return null;
}

/** The document of a database that predates the policy language: no Cedar policies, and a call no rule matches runs. */
export const LEGACY_DOCUMENT: PolicyDocument = PolicyDocument.parse({ defaults: { posture: "allow" } });
