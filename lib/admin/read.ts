/**
 * What the admin console reads: people, agents (never token hashes), webhooks (never secrets), the delivery log
 * and a rule's versions. Read-only; the caller checks the admin role.
 */
import { db } from "../db/client";

export async function listUsers() {
  return db().user.findMany({
    orderBy: [{ role: "asc" }, { name: "asc" }],
    select: { id: true, name: true, email: true, role: true, groups: true, active: true, groupsSource: true, createdAt: true },
  });
}

export async function listAgents() {
  return db().agent.findMany({
    orderBy: [{ revokedAt: { sort: "asc", nulls: "first" } }, { pendingSince: { sort: "desc", nulls: "last" } }, { createdAt: "desc" }],
    select: { id: true, name: true, tokenPrefix: true, createdAt: true, revokedAt: true, oauthIssuer: true, oauthClientId: true, pendingSince: true, user: { select: { id: true, name: true, email: true } } },
  });
}

export async function listWebhooks() {
  return db().webhook.findMany({
    orderBy: [{ active: "desc" }, { createdAt: "desc" }],
    select: { id: true, url: true, events: true, active: true, createdAt: true, createdBy: true },
  });
}

/** The delivery log, newest first. */
export async function recentDeliveries(limit = 50) {
  return db().webhookDelivery.findMany({
    orderBy: { createdAt: "desc" },
    take: limit,
    select: {
      id: true, eventType: true, status: true, attempts: true, nextAttemptAt: true, lastStatus: true, lastError: true, deliveredAt: true, createdAt: true,
      webhook: { select: { url: true } },
    },
  });
}

/** Every version of one rule key, newest first (previous versions stay readable). */
export async function ruleVersions(ruleKey: string) {
  return db().policyRule.findMany({ where: { ruleKey }, orderBy: { version: "desc" } });
}

/**
 * The latest version of every rule key (active, or retired when its latest save switched it off), by tool then key,
 * with how many versions the key has.
 */
export async function currentPolicy() {
  const all = await db().policyRule.findMany({ orderBy: [{ tool: "asc" }, { ruleKey: "asc" }, { version: "desc" }] });
  const latest = new Map<string, (typeof all)[number] & { versions: number }>();
  for (const r of all) {
    const seen = latest.get(r.ruleKey);
    if (seen) seen.versions++;
    else latest.set(r.ruleKey, { ...r, versions: 1 });
  }
  return [...latest.values()];
}

/** Names of users, for "created by" columns. */
export async function userNames(ids: string[]): Promise<Map<string, string>> {
  const users = await db().user.findMany({ where: { id: { in: [...new Set(ids)] } }, select: { id: true, name: true } });
  return new Map(users.map((u) => [u.id, u.name]));
}
