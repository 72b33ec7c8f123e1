/** A person's notification preference (email on or off), read and changed by themselves; the change is audited. */
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { smtpUrl } from "./settings";

export type NotificationPreference = { email: boolean; emailConfigured: boolean };

export async function notificationPreference(userId: string): Promise<NotificationPreference> {
  const u = await db().user.findUniqueOrThrow({ where: { id: userId }, select: { emailNotifications: true } });
  return { email: u.emailNotifications, emailConfigured: smtpUrl() !== null };
}

/** Sets the preference; true when it changed. Emails already queued for this person are skipped at delivery once off. */
export async function setEmailNotifications(userId: string, on: boolean, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const n = await tx.user.updateMany({ where: { id: userId, active: true, emailNotifications: !on }, data: { emailNotifications: on } });
    if (n.count !== 1) return false;
    await appendAudit(tx, { type: on ? "notifications.email-on" : "notifications.email-off", actor: `user:${userId}`, data: { userId }, at: now });
    return true;
  });
}
