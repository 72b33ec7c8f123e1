/** Agents authenticate to the MCP endpoint with bearer tokens; only a SHA-256 of each token is stored. */
import { randomBytes } from "node:crypto";
import { db, direct, Prisma } from "../db/client";
import { sha256Hex } from "../canonical";
import type { Principal } from "../tasks/types";
import type { Subject } from "../policy/evaluate";

const TOKEN = /^cs_[A-Za-z0-9_-]{32,128}$/;

export function hashToken(token: string): string {
  return sha256Hex(token);
}

/** A fresh high-entropy token; shown once to whoever creates the agent. */
export function newAgentToken(): string {
  return `cs_${randomBytes(32).toString("base64url")}`;
}

type AgentRow = {
  id: string;
  name: string;
  userId: string;
  userName: string;
  userEmail: string;
  userRole: string;
  userGroups: string[];
};

/**
 * An agent with its user, in one statement, when the agent is neither revoked nor pending and its user is active; else null. By
 * token hash (authentication) or by id (checks at execution).
 */
async function liveAgent(by: { tokenHash: string; also?: Prisma.Sql } | { id: string; also?: Prisma.Sql }): Promise<AgentRow | null> {
  // On the pool directly: the statement of every MCP request (lib/db/client.ts, direct).
  const rows =
    "tokenHash" in by
      ? await direct().query<AgentRow>(Prisma.sql`
          SELECT a.id, a.name, a."userId", u.name AS "userName", u.email AS "userEmail", u.role::text AS "userRole", u.groups AS "userGroups"
                 ${by.also ? Prisma.sql`, ${by.also}` : Prisma.empty}
          FROM "Agent" a JOIN "User" u ON u.id = a."userId"
          WHERE a."tokenHash" = ${by.tokenHash} AND a."revokedAt" IS NULL AND a."pendingSince" IS NULL AND u.active`)
      : await direct().query<AgentRow>(Prisma.sql`
          SELECT a.id, a.name, a."userId", u.name AS "userName", u.email AS "userEmail", u.role::text AS "userRole", u.groups AS "userGroups"
                 ${by.also ? Prisma.sql`, ${by.also}` : Prisma.empty}
          FROM "Agent" a JOIN "User" u ON u.id = a."userId"
          WHERE a.id = ${by.id} AND a."revokedAt" IS NULL AND a."pendingSince" IS NULL AND u.active`);
  return rows[0] ?? null;
}

/** The principal behind a token, or null when the token is malformed, unknown, revoked or its user inactive. */
export async function authenticateAgent(token: string): Promise<Principal | null> {
  return (await authenticateAgentWith<Record<string, never>>(token, null))?.principal ?? null;
}

/**
 * authenticateAgent, with `also` (columns of scalar subqueries, e.g. the policy's head) read in the same statement:
 * what the request reads next costs no round trip of its own. `also` is null when the token is refused.
 */
export async function authenticateAgentWith<T extends Record<string, unknown>>(token: string, also: Prisma.Sql | null): Promise<{ principal: Principal; also: T } | null> {
  if (!TOKEN.test(token)) return null;
  const agent = await liveAgent({ tokenHash: hashToken(token), also: also ?? undefined });
  if (!agent) return null;
  return { principal: principalOfRow(agent), also: agent as unknown as T };
}

function principalOfRow(agent: AgentRow): Principal {
  return {
    agentId: agent.id,
    agentName: agent.name,
    userId: agent.userId,
    userName: agent.userName,
    userEmail: agent.userEmail,
    userRole: agent.userRole,
    userGroups: agent.userGroups,
  };
}

/** Whether the principal is still valid now (checked again at execution, long after the call). */
export async function principalStillValid(agentId: string): Promise<boolean> {
  return (await liveAgent({ id: agentId })) !== null;
}

/** The principal as policy reads it now (agent, user, role, groups), or null when the agent or its user is no longer valid. */
export async function currentSubject(agentId: string): Promise<Subject | null> {
  return (await currentSubjectWith<Record<string, never>>(agentId, null))?.subject ?? null;
}

/** currentSubject, with `also` (columns of scalar subqueries, e.g. the policy's head) read in the same statement. */
export async function currentSubjectWith<T extends Record<string, unknown>>(agentId: string, also: Prisma.Sql | null): Promise<{ subject: Subject; also: T } | null> {
  const a = await liveAgent({ id: agentId, also: also ?? undefined });
  if (!a) return null;
  return { subject: subjectFrom(a, { id: a.userId, email: a.userEmail, name: a.userName, role: a.userRole, groups: a.userGroups }), also: a as unknown as T };
}

export function subjectFrom(agent: { id: string; name: string }, user: { id: string; email: string; name: string; role: string; groups: string[] }): Subject {
  return { agentId: agent.id, agentName: agent.name, user: { id: user.id, email: user.email, name: user.name, role: user.role, groups: [...user.groups] } };
}

/** The subject of an authenticated principal, reading the user only when the principal does not carry it. */
export async function subjectOf(p: Principal): Promise<Subject> {
  if (p.userEmail !== undefined && p.userRole !== undefined && p.userGroups !== undefined) {
    return { agentId: p.agentId, agentName: p.agentName, user: { id: p.userId, email: p.userEmail, name: p.userName, role: p.userRole, groups: [...p.userGroups] } };
  }
  const user = await db().user.findUniqueOrThrow({ where: { id: p.userId } });
  return subjectFrom({ id: p.agentId, name: p.agentName }, user);
}
