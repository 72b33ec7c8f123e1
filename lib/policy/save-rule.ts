/**
 * Editing a rule never rewrites it: the edit is inserted as the next version of the rule key and the previous
 * version retired, in one transaction. Tasks keep the rule id/version they were decided under (for audit);
 * re-evaluation always reads the current version.
 */
import { z } from "zod";
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { policyTools, syncCatalog } from "../tools/catalog";
import { compilePolicy } from "./compile";
import { escalationProblem } from "./document";
import { formCondition, formPolicyId } from "./form-rules";
import { currentDocument, currentRules } from "./store";
import { failuresOf, runPolicyTests } from "./test-cases";

export class RuleRejected extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

/**
 * Why `rule` cannot be saved as the next version of its key, or null: its condition must be writable for its
 * tool (an attribute the tool's resource has, a value of that attribute's type), the whole policy with it in
 * place must still validate, and the policy document's test cases must still pass against that whole policy.
 */
export async function ruleProblem(rule: RuleInput): Promise<{ field: string; message: string } | null> {
  await syncCatalog();
  const tool = policyTools().find((t) => t.name === rule.tool);
  if (!tool) return { field: "tool", message: `there is no tool ${rule.tool}` };
  if (formCondition({ ...rule, operator: rule.operator }, tool) === null) {
    const attrs = Object.entries(tool.resourceShape).filter(([, a]) => a.type !== "Money" && a.type !== "Boolean").map(([k]) => k);
    const attr = tool.resourceShape[rule.field];
    return attr
      ? {
          field: "value",
          message:
            attr.type === "StringSet"
              ? `${rule.field} is a list of paths: it can be compared with eq (one of them is the value) or prefix with a folder ending in "/" (one of them is in it); ${rule.operator} ${rule.value} does not fit it`
              : `${rule.field} is ${attr.type === "Long" ? "a whole number" : "text"}; ${rule.operator} ${rule.value} does not fit it`,
        }
      : { field: "field", message: `${tool.name} has no attribute ${rule.field} (it has ${attrs.join(", ")})` };
  }
  const others = (await currentRules()).filter((r) => r.ruleKey !== rule.ruleKey);
  const draft = { ...rule, id: "draft", version: 0 };
  const document = await currentDocument();
  const compiled = compilePolicy({ rules: rule.active ? [...others, draft] : others, document, tools: policyTools() }, { strict: true });
  if (!compiled.ok) {
    const mine = compiled.problems.find((p) => p.policyId === formPolicyId(rule.ruleKey)) ?? compiled.problems[0];
    return { field: "form", message: mine.line ? `${mine.message} (line ${mine.line}, column ${mine.column})` : mine.message };
  }
  const failures = failuresOf(await runPolicyTests(compiled.policy, document.body.tests, { mapResource: true }));
  if (failures.length > 0) {
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more test${failures.length > 2 ? "s" : ""})` : "";
    return { field: "form", message: `With this rule in place, ${failures[0].message}${more}.` };
  }
  return null;
}

export const RuleInput = z
  .object({
    ruleKey: z.string().regex(/^[a-z0-9][a-z0-9-]{1,60}$/, "lowercase letters, digits and dashes"),
    tool: z.string().min(1).max(64),
    description: z.string().min(3).max(200),
    field: z.string().regex(/^[a-z_][a-z0-9_]{0,40}$/),
    operator: z.enum(["gt", "gte", "eq", "prefix"]),
    value: z.string().min(1).max(200),
    /** For a money threshold: the currency of `value` (minor units). A call in another currency always matches. */
    currency: z.string().regex(/^[A-Z]{3}$/, "a three-letter currency code such as EUR").nullable().default(null),
    effect: z.enum(["requestable", "deny"]),
    approverGroup: z.string().regex(/^[a-z0-9-]{2,40}$/).nullable(),
    approvalsRequired: z.number().int().min(0).max(10),
    requestDeadlineSec: z.number().int().min(0).max(30 * 24 * 3600),
    approvalValiditySec: z.number().int().min(0).max(30 * 24 * 3600),
    requireJustification: z.boolean(),
    /** Absent means false. */
    requirePasskey: z.boolean().optional(),
    /** Seconds without a decision after which a request is offered to fallbackGroup too; both null: never. */
    escalateAfterSec: z.number().int().min(60).max(30 * 24 * 3600).nullable().optional(),
    fallbackGroup: z.string().regex(/^[a-z0-9-]{2,40}$/).nullable().optional(),
    reason: z.string().min(5).max(300),
    active: z.boolean().default(true),
  })
  .superRefine((r, ctx) => {
    if (r.effect !== "requestable" && (r.escalateAfterSec != null || r.fallbackGroup != null)) {
      ctx.addIssue({ code: "custom", path: ["fallbackGroup"], message: "a deny rule cannot be approved, so it does not escalate" });
    }
    if (r.effect === "requestable") {
      const escalation = escalationProblem({ ...r, escalateAfterSec: r.escalateAfterSec ?? null, fallbackGroup: r.fallbackGroup ?? null });
      if (escalation) ctx.addIssue({ code: "custom", path: [escalation.field], message: escalation.message });
      if (!r.approverGroup) ctx.addIssue({ code: "custom", path: ["approverGroup"], message: "a requestable rule needs an approver group" });
      if (r.approvalsRequired < 1) ctx.addIssue({ code: "custom", path: ["approvalsRequired"], message: "at least one approval" });
      if (r.requestDeadlineSec < 60) ctx.addIssue({ code: "custom", path: ["requestDeadlineSec"], message: "at least 60 seconds" });
      if (r.approvalValiditySec < 60) ctx.addIssue({ code: "custom", path: ["approvalValiditySec"], message: "at least 60 seconds" });
    }
    if ((r.operator === "gt" || r.operator === "gte") && !Number.isFinite(Number(r.value))) {
      ctx.addIssue({ code: "custom", path: ["value"], message: "a number for gt/gte" });
    }
  });
export type RuleInput = z.infer<typeof RuleInput>;

/** Saves `input` as the next version of its rule key (version 1 for a new key). Returns the new row. */
export async function saveRuleVersion(input: z.input<typeof RuleInput>, actorUserId: string, now: Date) {
  const rule = RuleInput.parse(input);
  const problem = await ruleProblem(rule);
  if (problem) throw new RuleRejected(problem.message, problem.field);
  return db().$transaction(async (tx) => {
    // Serializes concurrent edits of one rule key: both cannot take the same next version.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(7240003, hashtext(${rule.ruleKey}))`;
    const last = await tx.policyRule.findFirst({ where: { ruleKey: rule.ruleKey }, orderBy: { version: "desc" } });
    await tx.policyRule.updateMany({ where: { ruleKey: rule.ruleKey, active: true }, data: { active: false } });
    const created = await tx.policyRule.create({
      data: { ...rule, version: (last?.version ?? 0) + 1, createdBy: actorUserId, createdAt: now },
    });
    await appendAudit(tx, {
      type: "policy.rule-saved",
      actor: `user:${actorUserId}`,
      data: { ruleKey: created.ruleKey, version: created.version, previous: last?.version ?? null, active: created.active },
      at: now,
    });
    return created;
  });
}
