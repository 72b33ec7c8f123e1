/** The approver groups in use: named by any policy rule version or held by any user. */
import { db } from "@/lib/db/client";

export async function approverGroups(): Promise<string[]> {
  const [rules, users] = await Promise.all([
    db().policyRule.findMany({ where: { approverGroup: { not: null } }, distinct: ["approverGroup"], select: { approverGroup: true } }),
    db().user.findMany({ select: { groups: true } }),
  ]);
  return [...new Set([...rules.map((r) => r.approverGroup!), ...users.flatMap((u) => u.groups)])].sort();
}
