/** Test data helpers: a clean demo database per test, principals and reviewers by demo email. */
import { db } from "../../lib/db/client";
import { DEMO_AGENTS, seedDemo } from "../../lib/db/seed";
import { authenticateAgent } from "../../lib/auth/agents";
import type { RuleInput } from "../../lib/policy/save-rule";
import type { Principal } from "../../lib/tasks/types";
import type { Viewer } from "../../lib/inbox/inbox";
import { callTool } from "../../lib/tasks/call";

export async function resetDb(): Promise<void> {
  const tables = await db().$queryRaw<{ tablename: string }[]>`
    SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`;
  await db().$executeRawUnsafe(`TRUNCATE ${tables.map((t) => `"${t.tablename}"`).join(", ")} RESTART IDENTITY CASCADE`);
  await seedDemo(db(), { steadyClock: true });
}

export async function principal(agentName: (typeof DEMO_AGENTS)[number]["name"] = "support-bot"): Promise<Principal> {
  const a = DEMO_AGENTS.find((x) => x.name === agentName)!;
  const p = await authenticateAgent(a.token);
  if (!p) throw new Error(`demo agent ${agentName} did not authenticate`);
  return p;
}

/** The active version of a rule key as the editor sends it back: its fields without id, version and authorship. */
export async function activeRuleFields(ruleKey: string): Promise<RuleInput> {
  const { id, version, createdAt, createdBy, ...fields } = await db().policyRule.findFirstOrThrow({ where: { ruleKey, active: true } });
  void id, version, createdAt, createdBy;
  return fields as RuleInput;
}

export async function userId(email: string): Promise<string> {
  return (await db().user.findUniqueOrThrow({ where: { email } })).id;
}

export async function requestIdOf(taskId: string): Promise<string> {
  return (await db().task.findUniqueOrThrow({ where: { id: taskId } })).handle!;
}

export async function refundsFor(orderId: string) {
  return db().refund.findMany({ where: { orderId } });
}

/** Rows a call can leave behind: tasks, submission intents, approval requests, audit events and side effects. */
export async function rowsWritten() {
  const [tasks, intents, requests, audit, refunds, transfers, deployments] = await Promise.all([
    db().task.count(),
    db().submissionIntent.count(),
    db().approvalRequest.count(),
    db().auditEvent.count(),
    db().refund.count(),
    db().transfer.count(),
    db().deployment.count(),
  ]);
  return { tasks, intents, requests, audit, refunds, transfers, deployments };
}

/** A demo user as the inbox and request page see them. */
export async function viewer(email: string): Promise<Viewer> {
  const u = await db().user.findUniqueOrThrow({ where: { email } });
  return { id: u.id, role: u.role, groups: u.groups };
}

/** A call that policy holds for approval, as a task and its approval request. */
export async function gated(agent: Principal, tool: string, args: unknown, now: Date): Promise<{ taskId: string; requestId: string }> {
  const out = await callTool(agent, tool, args, { tasks: true }, now);
  if (out.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(out)}`);
  return { taskId: out.task.taskId, requestId: await requestIdOf(out.task.taskId) };
}
