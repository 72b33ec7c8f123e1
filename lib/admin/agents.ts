/** Agents and their bearer tokens (admins only; the caller checks the role). */
import { z } from "zod";
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { changesSeen } from "../auth/agent-cache";
import { hashToken, newAgentToken } from "../auth/agents";
import { withdrawTasksOf } from "../execution/withdraw";

export const AgentInput = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{1,40}$/, "lowercase letters, digits and dashes"),
  userId: z.string().uuid("Choose whom the agent acts for."),
});

/**
 * The "Acts for" choice of the new-agent form: nobody is chosen until the admin picks someone (an agent acting for
 * the admin by default would run with the admin's standing), among active users.
 */
export function agentOwnerChoice<U extends { id: string; active: boolean }>(users: U[]): { defaultUserId: ""; options: U[] } {
  return { defaultUserId: "", options: users.filter((u) => u.active) };
}

/** Creates an agent for a user. The token is returned once; only its hash is stored. */
export async function createAgent(input: z.infer<typeof AgentInput>, actorUserId: string, now: Date) {
  const { name, userId } = AgentInput.parse(input);
  const owner = await db().user.findUnique({ where: { id: userId } });
  if (!owner || !owner.active) throw new Error("The agent must act for an active user.");
  const token = newAgentToken();
  return db().$transaction(async (tx) => {
    const agent = await tx.agent.create({ data: { name, userId, tokenHash: hashToken(token), tokenPrefix: token.slice(0, 10), createdAt: now } });
    await appendAudit(tx, { type: "agent.created", actor: `user:${actorUserId}`, data: { agentId: agent.id, name, userId }, at: now });
    return { agent: { id: agent.id, name, userId, tokenPrefix: agent.tokenPrefix }, token };
  });
}

/**
 * Revokes an agent's token: its next MCP request is refused (401), and its pending tasks can no longer execute
 * (re-evaluation and the execution claim both require a valid principal): they are completed denied-not-executed
 * at once and withdrawn from the inbox.
 */
export async function revokeAgent(agentId: string, actorUserId: string, now: Date): Promise<boolean> {
  const revoked = await db().$transaction(async (tx) => {
    const n = await tx.agent.updateMany({ where: { id: agentId, revokedAt: null }, data: { revokedAt: now } });
    if (n.count === 1) await appendAudit(tx, { type: "agent.revoked", actor: `user:${actorUserId}`, data: { agentId }, at: now });
    return n.count === 1;
  });
  if (revoked) {
    // The token is refused by this process's next request, from memory or not (lib/auth/agent-cache.ts).
    await changesSeen();
    await withdrawTasksOf([agentId], now);
  }
  return revoked;
}

export const EnableInput = z.object({ agentId: z.uuid(), userId: z.uuid() });

/**
 * Enables a pending OAuth agent to act for an active user: its client's next token is accepted. Refuses an agent
 * that is not pending (already enabled, revoked, or a token agent).
 */
export async function enableAgent(input: z.infer<typeof EnableInput>, actorUserId: string, now: Date): Promise<boolean> {
  const { agentId, userId } = EnableInput.parse(input);
  return db().$transaction(async (tx) => {
    const owner = await tx.user.findUnique({ where: { id: userId }, select: { active: true } });
    if (!owner?.active) throw new Error("The agent must act for an active user.");
    const n = await tx.agent.updateMany({ where: { id: agentId, revokedAt: null, pendingSince: { not: null } }, data: { pendingSince: null, userId } });
    if (n.count === 1) await appendAudit(tx, { type: "agent.enabled", actor: `user:${actorUserId}`, data: { agentId, userId }, at: now });
    return n.count === 1;
  });
}
