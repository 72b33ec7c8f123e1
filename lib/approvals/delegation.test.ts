/**
 * Out of office: an active delegation lends the delegate the delegator's approver groups for its period. The
 * delegate reviews as themselves (one review row, counted once), is never eligible for their own request nor for
 * the delegator's, and the delegator stays eligible. Eligibility is judged at each check's time, the claim's
 * recount included. Creating and ending a delegation are audited.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { createAgent } from "../admin/agents";
import { authenticateAgent } from "../auth/agents";
import { claim } from "../execution/claim";
import { reviewRequest } from "./review";
import { createDelegation, delegateCandidates, delegationsOf, endDelegation, withDelegatedGroups } from "./delegation";
import { eligibleReviewerIds, isEligibleReviewer } from "./eligibility";
import { inboxPage } from "../inbox/inbox";
import { parseInboxParams } from "../inbox/params";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { HOUR, LEADS, MIN, T0, TREASURY, at, gatedCall, sideEffects } from "../../tests/support/proof";

const ADMIN = "admin@countersign.test";

let tara: string;
let theo: string;
let lena: string;

beforeEach(async () => {
  await resetDb();
  tara = await userId(TREASURY[0]);
  theo = await userId(TREASURY[1]);
  lena = await userId(LEADS[0]);
  // Tara reviews for treasury and support leads; Lena (support leads) is her stand-in while she is away.
  await db().user.update({ where: { id: tara }, data: { groups: ["treasury", "support-leads"] } });
});

/** USD 50,000 through the ops bot: two distinct treasury approvals. */
async function bigWire(now = T0, agent?: Awaited<ReturnType<typeof principal>>): Promise<{ taskId: string; requestId: string }> {
  const taskId = await gatedCall(agent ?? (await principal("ops-bot")), "wire_transfer", { to: "acct-991", amount: 50_000 }, now);
  return { taskId, requestId: await requestIdOf(taskId) };
}

async function decide(requestId: string, reviewerId: string, now: Date) {
  return reviewRequest({ requestId, reviewerId, decision: "approve" }, now);
}

async function delegate(from: string, to: string, startsAt: Date, endsAt: Date, now = T0): Promise<string> {
  const res = await createDelegation({ delegatorId: from, delegateId: to, startsAt, endsAt }, now);
  if (!res.ok) throw new Error(res.error);
  return res.id;
}

describe("delegating reviews for a period (out of office)", () => {
  it("a delegation grants the delegate eligibility only within its period", async () => {
    await delegate(tara, lena, at(HOUR), at(3 * HOUR));
    const { requestId } = await bigWire();
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(await isEligibleReviewer(lena, req, at(HOUR - 1))).toBe(false);
    expect(await isEligibleReviewer(lena, req, at(HOUR))).toBe(true);
    expect(await isEligibleReviewer(lena, req, at(3 * HOUR - 1))).toBe(true);
    expect(await isEligibleReviewer(lena, req, at(3 * HOUR))).toBe(false);

    expect(await decide(requestId, lena, at(HOUR - MIN))).toEqual({ ok: false, error: "Only active treasury reviewers can review this request." });
    expect(await decide(requestId, lena, at(HOUR + MIN))).toMatchObject({ ok: true, requestStatus: "pending" });
    // The delegator keeps her own eligibility: her approval completes the quorum with her delegate's.
    expect(await decide(requestId, tara, at(HOUR + 2 * MIN))).toMatchObject({ ok: true, requestStatus: "approved" });
    const approved = await db().auditEvent.findFirstOrThrow({ where: { requestId, type: "review.approved", actor: `user:${lena}` } });
    expect(approved.data).toMatchObject({ standingInFor: [TREASURY[0]] });
  });

  it("a delegation ended early grants nothing from then on; ending it is audited once", async () => {
    const id = await delegate(tara, lena, T0, at(3 * HOUR));
    const { requestId } = await bigWire();
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(await isEligibleReviewer(lena, req, at(MIN))).toBe(true);
    expect(await endDelegation(id, lena, at(2 * MIN))).toBe(false);
    expect(await endDelegation(id, tara, at(2 * MIN))).toBe(true);
    expect(await endDelegation(id, tara, at(3 * MIN))).toBe(false);
    expect(await isEligibleReviewer(lena, req, at(4 * MIN))).toBe(false);
    expect(await db().auditEvent.count({ where: { type: "delegation.created" } })).toBe(1);
    expect(await db().auditEvent.count({ where: { type: "delegation.ended" } })).toBe(1);
  });

  it("a delegate standing in for two people is still one approver: never counted twice", async () => {
    await db().user.update({ where: { id: theo }, data: { groups: ["treasury", "support-leads"] } });
    await delegate(tara, lena, T0, at(HOUR));
    await delegate(theo, lena, T0, at(HOUR));
    const { requestId } = await bigWire();
    expect(await decide(requestId, lena, at(MIN))).toMatchObject({ ok: true, requestStatus: "pending" });
    expect(await decide(requestId, lena, at(2 * MIN))).toEqual({ ok: false, error: "You have already reviewed this request." });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ status: "pending" });
  });

  it("the delegate who is the requester is refused; so is the delegate of the requester", async () => {
    await delegate(tara, lena, T0, at(HOUR));
    // Lena's own agent asks: her delegation makes her a treasury reviewer, never of her own request.
    const { token } = await createAgent({ name: "lena-own-bot", userId: lena }, await userId(ADMIN), T0);
    const own = await bigWire(T0, (await authenticateAgent(token))!);
    expect(await decide(own.requestId, lena, at(MIN))).toEqual({ ok: false, error: "You cannot review your own request." });
    // Tara's own agent asks: her delegate does not approve on her behalf.
    const taras = await createAgent({ name: "tara-own-bot", userId: tara }, await userId(ADMIN), T0);
    const hers = await bigWire(at(MIN), (await authenticateAgent(taras.token))!);
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: hers.requestId } });
    expect(await eligibleReviewerIds(req, at(2 * MIN))).toEqual([theo]);
    expect(await decide(hers.requestId, lena, at(2 * MIN))).toEqual({ ok: false, error: "Only active treasury reviewers can review this request." });
    // Her inbox lists what she may decide: the ops bot's transfer, not Tara's own nor her own.
    const ops = await bigWire(at(MIN));
    const lenaViewer = { id: lena, role: "reviewer", groups: ["support-leads"] };
    const listed = (await inboxPage(lenaViewer, parseInboxParams({}), at(2 * MIN))).items.map((i) => i.id);
    expect(listed).toEqual([ops.requestId]);
    // Theo (treasury in his own right) lists both transfers he may decide.
    const theoListed = (await inboxPage({ id: theo, role: "reviewer", groups: ["treasury"] }, parseInboxParams({}), at(2 * MIN))).items.map((i) => i.id);
    expect(theoListed.sort()).toEqual([ops.requestId, hers.requestId, own.requestId].sort());
  });

  it("an expired delegation at the claim's recount is not counted: the approval it carried no longer executes", async () => {
    await delegate(tara, lena, T0, at(10 * MIN));
    const { taskId, requestId } = await bigWire();
    expect(await decide(requestId, lena, at(MIN))).toMatchObject({ ok: true });
    expect(await decide(requestId, theo, at(2 * MIN))).toMatchObject({ ok: true, requestStatus: "approved" });
    await db().task.update({ where: { id: taskId }, data: { approvalExpiresAt: at(HOUR) } });
    const recount = { approverGroup: "treasury", approverIds: [lena, theo], approvalsRequired: 2, requesterUserId: (await db().task.findUniqueOrThrow({ where: { id: taskId } })).principalUserId };
    expect(await claim(taskId, 1, at(10 * MIN), recount)).toBeNull();
    expect(await sideEffects(taskId)).toBe(0);
    expect(await claim(taskId, 1, at(10 * MIN - 1), recount)).not.toBeNull();
  });

  it("refuses a delegation to oneself, to someone outside one's groups, or one whose end is not after its start", async () => {
    const sid = await userId("sid.sre@countersign.test");
    const refused = (delegateId: string, startsAt: Date, endsAt: Date) => createDelegation({ delegatorId: tara, delegateId, startsAt, endsAt }, T0);
    expect(await refused(tara, T0, at(HOUR))).toEqual({ ok: false, error: "You cannot delegate to yourself." });
    expect(await refused(sid, T0, at(HOUR))).toEqual({ ok: false, error: "You can only delegate to an active reviewer of one of your groups." });
    expect(await refused(lena, at(HOUR), at(HOUR))).toEqual({ ok: false, error: "The end of the delegation must be after its start." });
    expect(await refused(lena, at(HOUR), at(MIN))).toEqual({ ok: false, error: "The end of the delegation must be after its start." });
    expect(await db().delegation.count()).toBe(0);
    expect(await db().auditEvent.count({ where: { type: "delegation.created" } })).toBe(0);
  });

  it("refuses a delegation that has already ended, from anyone but an active reviewer, or to an inactive one", async () => {
    const rita = await userId("rita.requester@countersign.test");
    const create = (delegatorId: string, delegateId: string, startsAt = T0, endsAt = at(HOUR)) => createDelegation({ delegatorId, delegateId, startsAt, endsAt }, at(MIN));
    expect(await create(tara, lena, at(-HOUR), at(MIN))).toEqual({ ok: false, error: "The end of the delegation has already passed." });
    expect(await create(rita, lena)).toEqual({ ok: false, error: "Only an active reviewer can delegate." });
    expect(await create(tara, rita)).toEqual({ ok: false, error: "You can only delegate to an active reviewer of one of your groups." });
    // Not a reviewer, whatever groups the row holds.
    await db().user.update({ where: { id: rita }, data: { groups: ["treasury"] } });
    expect(await create(tara, rita)).toEqual({ ok: false, error: "You can only delegate to an active reviewer of one of your groups." });
    await db().user.update({ where: { id: lena }, data: { active: false } });
    expect(await create(tara, lena)).toEqual({ ok: false, error: "You can only delegate to an active reviewer of one of your groups." });
    await db().user.update({ where: { id: tara }, data: { active: false } });
    expect(await create(tara, theo)).toEqual({ ok: false, error: "Only an active reviewer can delegate." });
    expect(await db().delegation.count()).toBe(0);
  });

  it("offers as delegates the active reviewers sharing one of one's groups, never oneself; nobody to a non-reviewer", async () => {
    const emails = async (id: string) => (await delegateCandidates(id)).map((c) => c.email);
    // Tara holds treasury and support leads: Theo, and both leads.
    expect((await emails(tara)).sort()).toEqual([LEADS[0], LEADS[1], TREASURY[1]].sort());
    expect(await emails(theo)).toEqual([TREASURY[0]]);
    // Each candidate comes with the groups they review for, so the form can say what the delegation covers.
    expect(await delegateCandidates(theo)).toEqual([{ id: tara, name: expect.any(String), email: TREASURY[0], groups: ["treasury", "support-leads"] }]);
    await db().user.update({ where: { id: lena }, data: { active: false } });
    expect((await emails(tara)).sort()).toEqual([LEADS[1], TREASURY[1]].sort());
    const rita = await userId("rita.requester@countersign.test");
    expect(await emails(rita)).toEqual([]);
    // Not a reviewer, whatever groups the row holds.
    await db().user.update({ where: { id: rita }, data: { groups: ["treasury"] } });
    expect(await emails(rita)).toEqual([]);
    expect(await emails(await userId(ADMIN))).toEqual([]);
    await db().user.update({ where: { id: theo }, data: { active: false } });
    expect(await emails(theo)).toEqual([]);
    await db().user.update({ where: { id: theo }, data: { active: true, groups: [] } });
    expect(await emails(theo)).toEqual([]);
  });

  it("offers the candidates in the order of their names", async () => {
    // Renaming rewrites a row, so the order the rows are stored in is no longer the order of their names.
    await db().user.update({ where: { id: theo }, data: { name: "Aaron Zed" } });
    await db().user.update({ where: { id: lena }, data: { name: "Zoe Able" } });
    const offered = await delegateCandidates(tara);
    expect(offered.map((c) => c.email)).toEqual([TREASURY[1], LEADS[1], LEADS[0]]);
    expect(offered.map((c) => c.name)).toEqual(offered.map((c) => c.name).sort());
  });

  it("creating and ending a delegation are audited as the delegator's acts: to whom, the groups it lends, its period", async () => {
    const id = await delegate(tara, lena, at(HOUR), at(3 * HOUR), at(MIN));
    const created = await db().auditEvent.findFirstOrThrow({ where: { type: "delegation.created" } });
    expect(created).toMatchObject({ actor: `user:${tara}`, at: at(MIN) });
    expect(created.data).toEqual({
      delegationId: id,
      delegator: TREASURY[0],
      delegate: LEADS[0],
      groups: ["treasury", "support-leads"],
      startsAt: at(HOUR).toISOString(),
      endsAt: at(3 * HOUR).toISOString(),
    });
    expect(await endDelegation(id, tara, at(2 * MIN))).toBe(true);
    const ended = await db().auditEvent.findFirstOrThrow({ where: { type: "delegation.ended" } });
    expect(ended).toMatchObject({ actor: `user:${tara}`, at: at(2 * MIN) });
    expect(ended.data).toEqual({ delegationId: id });
  });

  it("a delegation that has already run out cannot be ended: it stays as it was and nothing is audited", async () => {
    const id = await delegate(tara, lena, T0, at(HOUR));
    expect(await endDelegation(id, tara, at(HOUR))).toBe(false);
    expect(await db().delegation.findUniqueOrThrow({ where: { id } })).toMatchObject({ endedAt: null });
    expect(await db().auditEvent.count({ where: { type: "delegation.ended" } })).toBe(0);
  });

  it("lists only one's own delegations, neither ended nor run out, soonest first, each under given or received", async () => {
    const now = at(MIN);
    const sam = await userId(LEADS[1]);
    await db().user.update({ where: { id: theo }, data: { groups: ["treasury", "support-leads"] } });
    // Created out of the order they start in.
    const later = await delegate(sam, lena, at(2 * HOUR), at(3 * HOUR));
    const soon = await delegate(theo, lena, at(30 * MIN), at(HOUR));
    const active = await delegate(tara, lena, T0, at(HOUR));
    const givenLater = await delegate(lena, tara, at(HOUR), at(2 * HOUR));
    const given = await delegate(lena, sam, T0, at(HOUR));
    // Not Lena's: ended early, run out at `now`, and one between two others.
    await endDelegation(await delegate(theo, lena, T0, at(HOUR)), theo, now);
    await delegate(sam, lena, T0, now);
    await delegate(theo, tara, T0, at(HOUR));
    const lenas = await delegationsOf(lena, now);
    expect(lenas.received.map((d) => [d.id, d.delegator.email, d.active])).toEqual([
      [active, TREASURY[0], true],
      [soon, TREASURY[1], false],
      [later, LEADS[1], false],
    ]);
    expect(lenas.given.map((d) => [d.id, d.delegate.email, d.active])).toEqual([
      [given, LEADS[1], true],
      [givenLater, TREASURY[0], false],
    ]);
  });

  it("a delegation whose person no longer has a user row is still listed, naming an unknown user", async () => {
    // A delegation holds user ids, not references the database enforces: the row can outlive a user's.
    const sam = await userId(LEADS[1]);
    const id = await delegate(tara, sam, T0, at(HOUR));
    await db().user.delete({ where: { id: sam } });
    expect((await delegationsOf(tara, at(MIN))).given).toEqual([
      { id, delegator: { id: tara, name: expect.any(String), email: TREASURY[0] }, delegate: { id: sam, name: "unknown user", email: "" }, startsAt: T0, endsAt: at(HOUR), active: true },
    ]);
  });

  it("a delegation is active from the very instant it starts, not before", async () => {
    const id = await delegate(tara, lena, at(MIN), at(HOUR));
    expect((await delegationsOf(lena, at(MIN))).received.map((d) => [d.id, d.active])).toEqual([[id, true]]);
    expect((await delegationsOf(lena, at(MIN - 1))).received.map((d) => [d.id, d.active])).toEqual([[id, false]]);
  });

  it("lists the delegations given and received that are active or start later, and lends their groups to the delegate", async () => {
    const now = at(MIN);
    const active = await delegate(tara, lena, T0, at(HOUR));
    const sam = await userId(LEADS[1]);
    const later = await delegate(sam, lena, at(2 * HOUR), at(3 * HOUR));
    const ended = await delegate(theo, tara, T0, at(HOUR));
    await endDelegation(ended, theo, now);
    const lenas = await delegationsOf(lena, now);
    expect(lenas.given).toEqual([]);
    expect(lenas.received.map((d) => [d.id, d.delegator.email, d.active])).toEqual([
      [active, TREASURY[0], true],
      [later, LEADS[1], false],
    ]);
    expect((await delegationsOf(tara, now)).given.map((d) => [d.id, d.delegate.email])).toEqual([[active, LEADS[0]]]);
    // Lena holds support leads; Tara's active delegation lends her treasury, Sam's later one nothing yet.
    const viewer = { id: lena, role: "reviewer", groups: ["support-leads"] };
    expect((await withDelegatedGroups(viewer, now)).groups).toEqual(["support-leads", "treasury"]);
    expect(await withDelegatedGroups(viewer, at(HOUR))).toBe(viewer);
    expect(await withDelegatedGroups({ ...viewer, role: "admin" }, now)).toEqual({ ...viewer, role: "admin" });
  });
});
