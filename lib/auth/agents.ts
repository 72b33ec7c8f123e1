/** Agents authenticate to the MCP endpoint with bearer tokens; only a SHA-256 of each token is stored. */
import { randomBytes } from "node:crypto";
import { db } from "../db/client";
import { sha256Hex } from "../canonical";
import type { Principal } from "../tasks/types";

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
  return { agentId: agent.id, agentName: agent.name, userId: agent.userId, userName: agent.user.name };
}

/** Whether the principal is still valid now (checked again at execution, long after the call). */
export async function principalStillValid(agentId: string): Promise<boolean> {
  const agent = await db().agent.findUnique({ where: { id: agentId }, include: { user: true } });
  return !!agent && !agent.revokedAt && agent.user.active;
}
