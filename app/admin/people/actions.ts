"use server";

import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import { z } from "zod";
import { AgentInput, EnableInput, createAgent, enableAgent, revokeAgent } from "@/lib/admin/agents";
import { mcpClientConfig, serverBaseUrl } from "@/lib/admin/client-config";
import { endsSentence, pendingEndedByDeactivating, pendingEndedByRevoking } from "@/lib/admin/ends";
import { updateUser, UserUpdate } from "@/lib/admin/people";
import { ADMIN_ROLES, authorizeAction } from "@/lib/auth/session";
import { endSessions } from "@/lib/auth/sessions";

/** `confirm`: a destructive change was asked for; nothing changed yet, and `message` says what it would end. */
export type FormState =
  | { status: "idle" }
  | { status: "error"; message: string }
  | { status: "done"; message: string }
  | { status: "confirm"; message: string };
export type AgentFormState =
  | { status: "idle" }
  | { status: "error"; message: string }
  | { status: "done"; name: string; token: string; owner: string; config: string };

/** The confirming submit button of a destructive action carries confirmed=yes; the first press only asks. */
const confirmed = (f: FormData) => f.get("confirmed") === "yes";

const text = (f: FormData, k: string) => {
  const v = f.get(k);
  return typeof v === "string" ? v.trim() : "";
};

/** Change a user's role, approver groups and active flag (admins only; effective at once for new reviews). */
export async function updateUserAction(_prev: FormState, formData: FormData): Promise<FormState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = UserUpdate.safeParse({
    userId: text(formData, "userId"),
    role: text(formData, "role"),
    groups: text(formData, "groups")
      .split(/[,\s]+/)
      .map((g) => g.trim().toLowerCase())
      .filter(Boolean),
    active: formData.get("active") === "on",
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { status: "error", message: issue?.path[0] === "groups" ? "Groups are lowercase names like treasury or support-leads, separated by commas." : "That change could not be read." };
  }
  if (!parsed.data.active && !confirmed(formData)) {
    const ends = await pendingEndedByDeactivating(parsed.data.userId);
    if (ends !== null) return { status: "confirm", message: `They can no longer sign in, and their agents can no longer act. ${endsSentence(ends)}` };
  }
  try {
    const after = await updateUser(parsed.data, who.user.id, new Date());
    revalidatePath("/admin/people");
    return { status: "done", message: `Saved ${after.name}: ${after.role}${after.groups.length ? ` in ${after.groups.join(", ")}` : ""}${after.active ? "" : ", deactivated"}.` };
  } catch (e) {
    return { status: "error", message: e instanceof Error && /own admin/.test(e.message) ? e.message : "That user could not be updated." };
  }
}

/** Create an agent acting for a user; its bearer token is returned here once and never again. */
export async function createAgentAction(_prev: AgentFormState, formData: FormData): Promise<AgentFormState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = AgentInput.safeParse({ name: text(formData, "name"), userId: text(formData, "userId") });
  if (!parsed.success) {
    return { status: "error", message: parsed.error.issues[0]?.path[0] === "name" ? "Name the agent with lowercase letters, digits and dashes (2 to 41 characters)." : "Choose whom the agent acts for." };
  }
  try {
    const created = await createAgent(parsed.data, who.user.id, new Date());
    revalidatePath("/admin/people");
    const base = serverBaseUrl(process.env.COUNTERSIGN_PUBLIC_URL, (await headers()).get("origin"));
    return { status: "done", name: created.agent.name, token: created.token, owner: parsed.data.userId, config: mcpClientConfig(created.agent.name, created.token, base) };
  } catch (e) {
    return { status: "error", message: e instanceof Error && /active user/.test(e.message) ? e.message : "The agent could not be created." };
  }
}

const revokeSchema = z.object({ agentId: z.uuid() });

/** Revoke an agent's token: its next MCP request gets 401; its pending tasks end denied-not-executed. */
export async function revokeAgentAction(_prev: FormState, formData: FormData): Promise<FormState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = revokeSchema.safeParse({ agentId: text(formData, "agentId") });
  if (!parsed.success) return { status: "error", message: "That agent could not be read." };
  if (!confirmed(formData)) return { status: "confirm", message: `Its next request is refused. ${endsSentence(await pendingEndedByRevoking(parsed.data.agentId))}` };
  const revoked = await revokeAgent(parsed.data.agentId, who.user.id, new Date());
  revalidatePath("/admin/people");
  return revoked ? { status: "done", message: "Revoked. Its next request is refused." } : { status: "error", message: "No such active agent (already revoked?)." };
}

/** Enable a pending OAuth agent for a user: its client's next token is accepted (audited). */
export async function enableAgentAction(_prev: FormState, formData: FormData): Promise<FormState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = EnableInput.safeParse({ agentId: text(formData, "agentId"), userId: text(formData, "userId") });
  if (!parsed.success) return { status: "error", message: "Choose whom the agent acts for." };
  try {
    const enabled = await enableAgent(parsed.data, who.user.id, new Date());
    revalidatePath("/admin/people");
    return enabled ? { status: "done", message: "Enabled. Its client's tokens are accepted now." } : { status: "error", message: "No such pending agent (already enabled or revoked?)." };
  } catch (e) {
    return { status: "error", message: e instanceof Error && /active user/.test(e.message) ? e.message : "The agent could not be enabled." };
  }
}

const endSessionsSchema = z.object({ userId: z.uuid() });

/** End every session of a user: each browser they are signed in with is signed out at its next request (audited). */
export async function endSessionsAction(_prev: FormState, formData: FormData): Promise<FormState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = endSessionsSchema.safeParse({ userId: text(formData, "userId") });
  if (!parsed.success) return { status: "error", message: "That user could not be read." };
  const ended = await endSessions(parsed.data.userId, `user:${who.user.id}`, new Date());
  return ended ? { status: "done", message: "Their sessions end at their next request." } : { status: "error", message: "No such user." };
}
