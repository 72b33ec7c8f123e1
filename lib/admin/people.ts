/** Users, their roles and approver groups (admins only; the caller checks the role). */
import { z } from "zod";
import { changesSeen } from "../auth/agent-cache";
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { withdrawTasksOf } from "../execution/withdraw";

export const UserUpdate = z.object({
  userId: z.string().uuid(),
  role: z.enum(["admin", "reviewer", "requester"]),
  groups: z.array(z.string().regex(/^[a-z0-9-]{2,40}$/)).max(20),
  active: z.boolean(),
});

/**
 * Changes take effect at once for new reviews, and at claim time for approvals already given: only approvals from
 * reviewers still eligible when the task is claimed count.
 */
export async function updateUser(input: z.infer<typeof UserUpdate>, actorUserId: string, now: Date) {
  const u = UserUpdate.parse(input);
  if (u.userId === actorUserId && (u.role !== "admin" || !u.active)) throw new Error("You cannot remove your own admin access.");
  const updated = await db().$transaction(async (tx) => {
    const before = await tx.user.findUniqueOrThrow({ where: { id: u.userId } });
    const after = await tx.user.update({ where: { id: u.userId }, data: { role: u.role, groups: [...new Set(u.groups)], active: u.active } });
    await appendAudit(tx, {
      type: "user.updated",
      actor: `user:${actorUserId}`,
      data: { userId: u.userId, before: { role: before.role, groups: before.groups, active: before.active }, after: { role: after.role, groups: after.groups, active: after.active } },
      at: now,
    });
    return after;
  });
  // This process's next request of the user's agents sees the change, from memory or not (lib/auth/agent-cache.ts).
  await changesSeen();
  // A deactivated user's agents can no longer act for them: their unclaimed tasks end now.
  if (!updated.active) {
    const agents = await db().agent.findMany({ where: { userId: updated.id }, select: { id: true } });
    await withdrawTasksOf(agents.map((a) => a.id), now);
  }
  return updated;
}
