/** Agents authenticate to the MCP endpoint with bearer tokens; only a SHA-256 of each token is stored. */
import { randomBytes } from "node:crypto";
import { db } from "../db/client";
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

/** The principal behind a token, or null when the token is malformed, unknown, revoked or its user inactive. */
export async function authenticateAgent(token: string): Promise<Principal | null> {
  if (!TOKEN.test(token)) return null;
  const agent = await db().agent.findUnique({ where: { tokenHash: hashToken(token) }, include: { user: true } });
  if (!agent || agent.revokedAt || !agent.user.active) return null;
  return {
    agentId: agent.id,
    agentName: agent.name,
    userId: agent.userId,
    userName: agent.user.name,
    userEmail: agent.user.email,
    userRole: agent.user.role,
    userGroups: agent.user.groups,
  };
}

/** Whether the principal is still valid now (checked again at execution, long after the call). */
export async function principalStillValid(agentId: string): Promise<boolean> {
  const agent = await db().agent.findUnique({ where: { id: agentId }, include: { user: true } });
  return !!agent && !agent.revokedAt && agent.user.active;
}

/** The principal as policy reads it now (agent, user, role, groups), or null when the agent or its user is no longer valid. */
export async function currentSubject(agentId: string): Promise<Subject | null> {
  const agent = await db().agent.findUnique({ where: { id: agentId }, include: { user: true } });
  if (!agent || agent.revokedAt || !agent.user.active) return null;
  return subjectFrom(agent, agent.user);
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
