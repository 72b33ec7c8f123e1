/**
 * Demo data: reviewers, an admin, requesters with their agents, the demo shop's orders and the seeded policy.
 * Idempotent: re-running changes nothing that exists (an admin's later policy edits are kept).
 * DEMO ONLY: these passwords and tokens are published in README.md.
 */
import bcrypt from "bcryptjs";
import type { PrismaClient } from "./generated/client";
import { hashToken } from "../auth/agents";
import { seedSandbox } from "../tools/delete-path";
import { digest } from "../canonical";
import { DEMO_DOCUMENT, withoutPolicy } from "../policy/demo-policy";
import { PolicyDocument } from "../policy/document";

export const DEMO_PASSWORD = "countersign-demo";

export const DEMO_USERS = [
  { email: "admin@countersign.test", name: "Ada Admin", role: "admin", groups: [] },
  { email: "lena.lead@countersign.test", name: "Lena Lead", role: "reviewer", groups: ["support-leads"] },
  { email: "sam.lead@countersign.test", name: "Sam Lead", role: "reviewer", groups: ["support-leads"] },
  { email: "tara.treasury@countersign.test", name: "Tara Treasury", role: "reviewer", groups: ["treasury"] },
  { email: "theo.treasury@countersign.test", name: "Theo Treasury", role: "reviewer", groups: ["treasury"] },
  { email: "sasha.sre@countersign.test", name: "Sasha SRE", role: "reviewer", groups: ["sre"] },
  { email: "sid.sre@countersign.test", name: "Sid SRE", role: "reviewer", groups: ["sre"] },
  { email: "rita.requester@countersign.test", name: "Rita Requester", role: "requester", groups: [] },
  { email: "otto.ops@countersign.test", name: "Otto Ops", role: "requester", groups: [] },
] as const;

export const DEMO_AGENTS = [
  { name: "support-bot", owner: "rita.requester@countersign.test", token: "cs_demo-support-bot-token-not-for-production-0001" },
  { name: "ops-bot", owner: "otto.ops@countersign.test", token: "cs_demo-ops-bot-token-not-for-production-000002" },
] as const;

export const DEMO_ORDERS = [
  { id: "O-2289", customer: "M. Keller", totalCents: 18000, currency: "EUR" },
  { id: "O-1021", customer: "J. Novak", totalCents: 4250, currency: "EUR" },
  { id: "O-1145", customer: "A. Rossi", totalCents: 34349, currency: "EUR" },
  { id: "O-3107", customer: "L. Martin", totalCents: 12999, currency: "EUR" },
  { id: "O-4410", customer: "K. Okafor", totalCents: 52000, currency: "EUR" },
] as const;

export const DEMO_RULES = [
  {
    ruleKey: "refund-over-limit",
    tool: "issue_refund",
    description: "Refunds above EUR 150.00 need one support lead",
    field: "amount_cents",
    currency: "EUR",
    operator: "gt",
    value: "15000",
    effect: "requestable",
    approverGroup: "support-leads",
    approvalsRequired: 1,
    requestDeadlineSec: 24 * 3600,
    approvalValiditySec: 3600,
    reason: "Refunds above EUR 150.00 need a support lead's approval.",
  },
  {
    ruleKey: "wire-over-1m",
    tool: "wire_transfer",
    description: "Transfers above USD 1,000,000 are refused",
    field: "amount_cents",
    currency: "USD",
    operator: "gt",
    value: "100000000",
    effect: "deny",
    approverGroup: null,
    approvalsRequired: 0,
    requestDeadlineSec: 0,
    approvalValiditySec: 0,
    reason: "Transfers above USD 1,000,000 are not allowed through this channel.",
  },
  {
    ruleKey: "wire-over-25k",
    tool: "wire_transfer",
    description: "Transfers above USD 25,000 need two treasury approvals",
    field: "amount_cents",
    currency: "USD",
    operator: "gt",
    value: "2500000",
    effect: "requestable",
    approverGroup: "treasury",
    approvalsRequired: 2,
    requestDeadlineSec: 2 * 24 * 3600,
    approvalValiditySec: 4 * 3600,
    reason: "Transfers over USD 25,000 require two treasury approvals.",
  },
  {
    ruleKey: "delete-prod",
    tool: "delete_path",
    description: "Deleting prod/ or anything in it needs two SREs",
    field: "path",
    operator: "prefix",
    value: "prod/",
    effect: "requestable",
    approverGroup: "sre",
    approvalsRequired: 2,
    requestDeadlineSec: 8 * 3600,
    approvalValiditySec: 3600,
    reason: "Deleting production paths requires two SRE approvals.",
  },
  {
    ruleKey: "deploy-production",
    tool: "deploy_service",
    description: "Production deploys need one SRE",
    field: "environment",
    operator: "eq",
    value: "production",
    effect: "requestable",
    approverGroup: "sre",
    approvalsRequired: 1,
    requestDeadlineSec: 8 * 3600,
    approvalValiditySec: 2 * 3600,
    reason: "Production deploys require an SRE's approval.",
  },
] as const;

export type SeedOptions = {
  /**
   * Leaves out the demo policy's business-hours rule. The test suites seed this way so that their outcomes do not
   * depend on the hour they run; the business-hours rule has tests of its own with fixed clocks.
   */
  steadyClock?: boolean;
};

/** The demo policy document, once: written as the next version unless the seed wrote one before. */
async function seedDemoDocument(db: PrismaClient, opts: SeedOptions): Promise<void> {
  if (await db.policyDocument.findFirst({ where: { createdBy: "seed" } })) return;
  const body = PolicyDocument.parse(opts.steadyClock ? withoutPolicy(DEMO_DOCUMENT, "deploy-production-after-hours") : DEMO_DOCUMENT);
  const last = await db.policyDocument.findFirst({ orderBy: { version: "desc" }, select: { version: true } });
  try {
    await db.policyDocument.create({
      data: { version: (last?.version ?? 0) + 1, body: body as object, digest: digest(body), note: "The demo policy.", createdBy: "seed" },
    });
  } catch (e) {
    // Two processes seeding at once: the other one wrote it.
    if (!(e instanceof Error && /Unique constraint/i.test(e.message))) throw e;
  }
}

export async function seedDemo(db: PrismaClient, opts: SeedOptions = {}): Promise<void> {
  const passwordHash = await bcrypt.hash(DEMO_PASSWORD, 10);
  for (const u of DEMO_USERS) {
    await db.user.upsert({
      where: { email: u.email },
      update: {},
      create: { email: u.email, name: u.name, role: u.role, groups: [...u.groups], passwordHash },
    });
  }
  for (const a of DEMO_AGENTS) {
    const owner = await db.user.findUniqueOrThrow({ where: { email: a.owner } });
    await db.agent.upsert({
      where: { tokenHash: hashToken(a.token) },
      update: {},
      create: { name: a.name, userId: owner.id, tokenHash: hashToken(a.token), tokenPrefix: a.token.slice(0, 10) },
    });
  }
  for (const o of DEMO_ORDERS) {
    await db.order.upsert({ where: { id: o.id }, update: {}, create: { ...o } });
  }
  for (const r of DEMO_RULES) {
    const exists = await db.policyRule.findFirst({ where: { ruleKey: r.ruleKey } });
    if (!exists) await db.policyRule.create({ data: { ...r, version: 1, createdBy: "seed" } });
  }
  await seedDemoDocument(db, opts);
  await seedSandbox();
}
