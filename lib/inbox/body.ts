/**
 * The submission body the approval backend stores (lib/approvals/backend.ts SubmissionBody), read leniently: a
 * body redacted at the end of retention (lib/tasks/retention.ts) keeps only ids, tool, digest and policy.
 */
import { z } from "zod";
import { readableAmounts } from "../tools/money";

export const bodySchema = z.object({
  taskId: z.string().optional(),
  generation: z.number().optional(),
  tool: z.string().optional(),
  arguments: z.unknown().optional(),
  argumentsDigest: z.string().optional(),
  summary: z.string().optional(),
  requester: z
    .object({
      userId: z.string().optional(),
      userName: z.string().optional(),
      agentId: z.string().optional(),
      agentName: z.string().optional(),
    })
    .partial()
    .optional(),
  policy: z
    .object({ ruleId: z.string(), ruleKey: z.string(), version: z.number(), reason: z.string() })
    .partial()
    .optional(),
  requirements: z
    .object({
      approverGroup: z.string(),
      approvalsRequired: z.number(),
      requestDeadlineSec: z.number(),
      approvalValiditySec: z.number(),
      requireJustification: z.boolean(),
      requirePasskey: z.boolean().optional(),
    })
    .partial()
    .optional(),
  input: z.object({ justification: z.string().optional(), ticket: z.string().optional() }).partial().optional(),
  toolInfo: z.object({ title: z.string(), description: z.string() }).optional(),
  redacted: z.string().optional(),
});

export type Body = z.infer<typeof bodySchema>;

export function readBody(raw: unknown): Body {
  const parsed = bodySchema.safeParse(raw);
  return parsed.success ? parsed.data : {};
}

/** The one-line summary reviewers read, amounts with separators (also for summaries stored before they had them). */
export function summaryOf(body: Body): string {
  if (body.summary) return readableAmounts(body.summary);
  const args = body.arguments;
  if (args && typeof args === "object" && !Array.isArray(args)) {
    const parts = Object.entries(args as Record<string, unknown>)
      .slice(0, 3)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    return `${body.tool ?? "tool"}(${parts.join(", ")})`;
  }
  if (body.redacted) return `${body.tool ?? "tool"} call (details deleted at the end of retention)`;
  return body.tool ?? "tool call";
}

/** A list row's summary from the columns a list query reads (the history and the inbox). */
export function listSummary(summary: string | null, tool: string | null): string {
  return summary ? readableAmounts(summary) : `${tool ?? "tool"} call`;
}
