/**
 * Out of office: a reviewer delegates to another active reviewer of one of their groups, from a time until a time.
 * While the delegation is active, the delegate holds the delegator's approver groups for eligibility
 * (lib/approvals/eligibility.ts), and so may decide those groups' requests, as themselves:
 *  - the delegate's review is their own row, counted once however many people they stand in for;
 *  - the delegate is never eligible for their own request, nor for a request the delegator asked for;
 *  - the delegator stays eligible on their own account (the delegation adds a reviewer, it removes none);
 *  - delegations do not chain: a delegate holds the delegator's own groups, not groups delegated to the delegator;
 *  - eligibility is judged at each check's time, the claim's recount included: a delegation that has ended by then
 *    no longer counts, and the approval it carried is not counted.
 * Creating and ending a delegation are audited (`delegation.created`, `delegation.ended`).
 */
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { delegatedGroups } from "./eligibility";

export type DelegationInput = { delegatorId: string; delegateId: string; startsAt: Date; endsAt: Date };
export type DelegationResult = { ok: true; id: string } | { ok: false; error: string };

export type DelegationView = {
  id: string;
  delegator: { id: string; name: string; email: string };
  delegate: { id: string; name: string; email: string };
  startsAt: Date;
  endsAt: Date;
  /** Whether it is active at the time it was read (else it starts later). */
  active: boolean;
};

const PERSON = { id: true, name: true, email: true } as const;

/** The active reviewers `userId` may delegate to: those sharing one of their approver groups, themselves excepted. */
export async function delegateCandidates(userId: string): Promise<{ id: string; name: string; email: string; groups: string[] }[]> {
  const me = await db().user.findUnique({ where: { id: userId }, select: { groups: true, role: true, active: true } });
  if (!me || !me.active || me.role !== "reviewer" || me.groups.length === 0) return [];
  return db().user.findMany({
    where: { id: { not: userId }, active: true, role: "reviewer", groups: { hasSome: me.groups } },
    select: { ...PERSON, groups: true },
    orderBy: { name: "asc" },
  });
}

/** Creates a delegation after checking who, to whom and when; audited. */
export async function createDelegation(input: DelegationInput, now: Date): Promise<DelegationResult> {
  if (input.delegateId === input.delegatorId) return { ok: false, error: "You cannot delegate to yourself." };
  if (input.endsAt.getTime() <= input.startsAt.getTime()) return { ok: false, error: "The end of the delegation must be after its start." };
  if (input.endsAt.getTime() <= now.getTime()) return { ok: false, error: "The end of the delegation has already passed." };
  return db().$transaction(async (tx) => {
    const [delegator, delegate] = await Promise.all([
      tx.user.findUnique({ where: { id: input.delegatorId }, select: { ...PERSON, role: true, active: true, groups: true } }),
      tx.user.findUnique({ where: { id: input.delegateId }, select: { ...PERSON, role: true, active: true, groups: true } }),
    ]);
    if (!delegator || !delegator.active || delegator.role !== "reviewer") return { ok: false as const, error: "Only an active reviewer can delegate." };
    const shared = delegate ? delegate.groups.filter((g) => delegator.groups.includes(g)) : [];
    if (!delegate || !delegate.active || delegate.role !== "reviewer" || shared.length === 0) {
      return { ok: false as const, error: "You can only delegate to an active reviewer of one of your groups." };
    }
    const row = await tx.delegation.create({
      data: { delegatorId: delegator.id, delegateId: delegate.id, startsAt: input.startsAt, endsAt: input.endsAt, createdAt: now },
      select: { id: true },
    });
    await appendAudit(tx, {
      type: "delegation.created",
      actor: `user:${delegator.id}`,
      data: {
        delegationId: row.id,
        delegator: delegator.email,
        delegate: delegate.email,
        groups: delegator.groups,
        startsAt: input.startsAt.toISOString(),
        endsAt: input.endsAt.toISOString(),
      },
      at: now,
    });
    return { ok: true as const, id: row.id };
  });
}

/** The delegator ends their delegation now (one conditional update: ending it twice ends it once); audited. */
export async function endDelegation(id: string, delegatorId: string, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const n = await tx.delegation.updateMany({ where: { id, delegatorId, endedAt: null, endsAt: { gt: now } }, data: { endedAt: now } });
    if (n.count !== 1) return false;
    await appendAudit(tx, { type: "delegation.ended", actor: `user:${delegatorId}`, data: { delegationId: id }, at: now });
    return true;
  });
}

/** The delegations given by and to `userId` that are active at `now` or start later, soonest first. */
export async function delegationsOf(userId: string, now: Date): Promise<{ given: DelegationView[]; received: DelegationView[] }> {
  const rows = await db().delegation.findMany({
    where: { OR: [{ delegatorId: userId }, { delegateId: userId }], endedAt: null, endsAt: { gt: now } },
    orderBy: [{ startsAt: "asc" }, { id: "asc" }],
  });
  const people = await db().user.findMany({ where: { id: { in: rows.flatMap((r) => [r.delegatorId, r.delegateId]) } }, select: PERSON });
  const byId = new Map(people.map((p) => [p.id, p]));
  const unknown = (id: string) => ({ id, name: "unknown user", email: "" });
  const views = rows.map((r) => ({
    id: r.id,
    delegator: byId.get(r.delegatorId) ?? unknown(r.delegatorId),
    delegate: byId.get(r.delegateId) ?? unknown(r.delegateId),
    startsAt: r.startsAt,
    endsAt: r.endsAt,
    active: r.startsAt.getTime() <= now.getTime(),
  }));
  return { given: views.filter((v) => v.delegator.id === userId), received: views.filter((v) => v.delegate.id === userId) };
}

/**
 * A signed-in reviewer with the approver groups their active delegations lend them at `now` added to their own:
 * what the inbox lists and the request page shows them. Whether they may decide a given request is still
 * isEligibleReviewer's answer (it also refuses a request whose requester is the delegator).
 */
export async function withDelegatedGroups<V extends { id: string; role: string; groups: string[] }>(viewer: V, now: Date): Promise<V> {
  if (viewer.role !== "reviewer") return viewer;
  const lent = await delegatedGroups(viewer.id, now);
  const extra = lent.filter((g) => !viewer.groups.includes(g));
  return extra.length ? { ...viewer, groups: [...viewer.groups, ...extra] } : viewer;
}
