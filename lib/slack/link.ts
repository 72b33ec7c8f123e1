/**
 * Linking a Slack account to a Countersign user, safely: the user's profile page shows a one-time code (stored only
 * as a hash, short-lived, one per user), and the user sends it from Slack as `/countersign link <code>`. The Slack
 * user id linked is the one in Slack's signed command payload, never one the user typed, so nobody can claim
 * another person's Slack account. A Slack user names at most one Countersign user. Every change is audited.
 */
import { randomInt } from "node:crypto";
import { appendAudit } from "../audit/append";
import { sha256Hex } from "../canonical";
import { db, Prisma } from "../db/client";

export const LINK_CODE_TTL_MS = 10 * 60_000;
/** No 0/O, 1/I/L: a code is read off a screen and typed. */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 10;

export type SlackIdentity = { teamId: string; userId: string };

export function slackKey(who: SlackIdentity): string {
  return `${who.teamId}:${who.userId}`;
}

function hashCode(code: string): string {
  return sha256Hex(`slack-link:${code.trim().toUpperCase().replace(/[\s-]/g, "")}`);
}

/** A fresh one-time code for the user (replacing any earlier one), to send from Slack before it expires. */
export async function issueSlackLinkCode(userId: string, now: Date): Promise<{ code: string; expiresAt: Date }> {
  let code = "";
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  const expiresAt = new Date(now.getTime() + LINK_CODE_TTL_MS);
  await db().$transaction(async (tx) => {
    await tx.slackLinkCode.deleteMany({ where: { OR: [{ userId }, { expiresAt: { lte: now } }] } });
    await tx.slackLinkCode.create({ data: { codeHash: hashCode(code), userId, expiresAt } });
  });
  return { code: `${code.slice(0, 5)}-${code.slice(5)}`, expiresAt };
}

export type LinkResult = { ok: true; userName: string } | { ok: false; error: string };

/** Links the Slack user of a signed command to the user whose code it carries; the code is spent either way. */
export async function linkSlackAccount(code: string, who: SlackIdentity, now: Date): Promise<LinkResult> {
  const key = slackKey(who);
  try {
    return await db().$transaction(async (tx): Promise<LinkResult> => {
      const row = await tx.slackLinkCode.findUnique({ where: { codeHash: hashCode(code) } });
      // Spending it is the conditional delete: a code links once.
      const spent = row ? await tx.slackLinkCode.deleteMany({ where: { codeHash: row.codeHash } }) : { count: 0 };
      if (!row || spent.count !== 1 || row.expiresAt.getTime() <= now.getTime()) {
        return { ok: false, error: "That code is not valid or has expired. Get a new one on your Countersign profile page." };
      }
      const user = await tx.user.findUnique({ where: { id: row.userId }, select: { id: true, name: true, active: true } });
      if (!user?.active) return { ok: false, error: "That Countersign account is not active." };
      const taken = await tx.slackLink.findUnique({ where: { slackUserId: key } });
      if (taken && taken.userId !== user.id) {
        return { ok: false, error: "This Slack account is already linked to another Countersign user. Unlink it there first (`/countersign unlink`)." };
      }
      await tx.slackLink.upsert({ where: { userId: user.id }, create: { userId: user.id, slackUserId: key, linkedAt: now }, update: { slackUserId: key, linkedAt: now } });
      await appendAudit(tx, { type: "slack.linked", actor: `user:${user.id}`, data: { userId: user.id, slackUser: key }, at: now });
      return { ok: true, userName: user.name };
    });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") {
      return { ok: false, error: "This Slack account is already linked to another Countersign user." };
    }
    throw e;
  }
}

/** Removes the user's link (from their profile page); true when there was one. */
export async function unlinkSlackAccount(userId: string, actor: string, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const link = await tx.slackLink.findUnique({ where: { userId } });
    if (!link) return false;
    const n = await tx.slackLink.deleteMany({ where: { userId, slackUserId: link.slackUserId } });
    if (n.count !== 1) return false;
    await appendAudit(tx, { type: "slack.unlinked", actor, data: { userId, slackUser: link.slackUserId }, at: now });
    return true;
  });
}

/** The Countersign user a Slack user is linked to, if any. */
export async function linkedUserId(who: SlackIdentity): Promise<string | null> {
  return (await db().slackLink.findUnique({ where: { slackUserId: slackKey(who) }, select: { userId: true } }))?.userId ?? null;
}

export async function slackLinkOf(userId: string): Promise<{ slackUser: string; linkedAt: Date } | null> {
  const l = await db().slackLink.findUnique({ where: { userId } });
  return l ? { slackUser: l.slackUserId, linkedAt: l.linkedAt } : null;
}
