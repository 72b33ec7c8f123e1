/**
 * Single sign-on on the database: a first sign-in creates the user (matched afterwards by issuer + subject, whatever
 * the email), every sign-in sets role and groups from the claims and records the provider as their source, a local
 * user with the same email is linked only when configured and verified, a deactivated user stays out, and a user
 * created this way has no password. The approvals a reviewer gave count at the claim only while the User row still
 * puts them in the group, so a sign-in that removes the group is enough to stop a four-eyes wire on their approval.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { checkSignIn } from "../lib/auth/sign-in";
import { signInWithIdentity } from "../lib/auth/sso-sign-in";
import { parseSsoConfig } from "../lib/auth/sso-config";
import { advanceTask } from "../lib/execution/advance";
import { decide } from "../lib/tasks/decide";
import { DEMO_PASSWORD } from "../lib/db/seed";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { MIN, T0, TREASURY, approveOnly, at, auditCount, gatedCall, sideEffects, taskRow } from "./support/proof";

const [corp] = parseSsoConfig({
  COUNTERSIGN_OIDC_PROVIDERS: JSON.stringify([
    {
      id: "corp",
      name: "Corp SSO",
      issuer: "https://id.example.com",
      clientId: "countersign",
      clientSecret: "not-used-here",
      groupMap: { "fin-approvers": "treasury", "support-team": "support-leads" },
      roleMap: { "cs-admins": "admin" },
    },
  ]),
}).providers;

const ivy = (groups: string[], extra: Record<string, unknown> = {}) => ({ sub: "ivy-0001", email: "ivy@example.com", email_verified: true, name: "Ivy", groups, ...extra });

beforeEach(resetDb);

describe("signInWithIdentity", () => {
  it("creates the user on first sign-in and sets role and groups from the claims at every sign-in", async () => {
    const first = await signInWithIdentity(corp, ivy(["fin-approvers", "support-team"]), at(0));
    expect(first).toMatchObject({ ok: true, created: true, linked: false, user: { email: "ivy@example.com", role: "reviewer", groups: ["support-leads", "treasury"] } });
    if (!first.ok) return;
    const row = await db().user.findUniqueOrThrow({ where: { id: first.user.id }, include: { identities: true } });
    expect(row).toMatchObject({ groupsSource: "corp", passwordHash: "" });
    expect(row.identities).toMatchObject([{ issuer: "https://id.example.com", subject: "ivy-0001", providerId: "corp" }]);

    // Removed from support-team at the provider: support-leads is gone at the next sign-in. Same user, by subject,
    // even with a new email; made an admin there: admin here.
    const second = await signInWithIdentity(corp, ivy(["fin-approvers", "cs-admins"], { email: "ivy.new@example.com" }), at(MIN));
    expect(second).toMatchObject({ ok: true, created: false, user: { id: first.user.id, email: "ivy.new@example.com", role: "admin", groups: ["treasury"] } });
    expect(await db().user.count({ where: { groupsSource: "corp" } })).toBe(1);
    expect(await db().externalIdentity.count()).toBe(1);
    const audit = await db().auditEvent.findMany({ where: { type: { in: ["user.created", "user.updated"] } }, orderBy: { seq: "asc" } });
    expect(audit.map((e) => [e.type, e.actor])).toEqual([["user.created", "oidc:corp"], ["user.updated", "oidc:corp"]]);

    // A sign-in that changes nothing adds no audit event.
    await signInWithIdentity(corp, ivy(["fin-approvers", "cs-admins"], { email: "ivy.new@example.com" }), at(2 * MIN));
    expect(await db().auditEvent.count({ where: { type: { in: ["user.created", "user.updated"] } } })).toBe(2);
  });

  it("no mapped group or role left: refused, and the row keeps what it had", async () => {
    const first = await signInWithIdentity(corp, ivy(["fin-approvers"]), at(0));
    expect(await signInWithIdentity(corp, ivy(["everyone"]), at(MIN))).toMatchObject({ ok: false, reason: expect.stringMatching(/none of the user's groups/) });
    expect(first.ok && (await db().user.findUniqueOrThrow({ where: { id: first.user.id } })).groups).toEqual(["treasury"]);
  });

  it("a local user with the same email is not taken over: refused unless linking is configured and the email verified", async () => {
    const lena = "lena.lead@countersign.test";
    const claims = { sub: "lena-at-corp", email: lena, groups: ["fin-approvers"] };
    expect(await signInWithIdentity(corp, { ...claims, email_verified: true }, at(0))).toMatchObject({ ok: false, reason: expect.stringMatching(/not linked/) });
    const linking = { ...corp, linkVerifiedEmail: true };
    expect(await signInWithIdentity(linking, { ...claims, email_verified: false }, at(0))).toMatchObject({ ok: false });
    expect((await db().user.findUniqueOrThrow({ where: { email: lena } })).groups).toEqual(["support-leads"]);

    const linked = await signInWithIdentity(linking, { ...claims, email_verified: true }, at(MIN));
    expect(linked).toMatchObject({ ok: true, created: false, linked: true, user: { id: await userId(lena), groups: ["treasury"] } });
    expect((await db().user.findUniqueOrThrow({ where: { email: lena } })).groupsSource).toBe("corp");
    // Her password still works (password sign-in is a separate switch).
    expect(await checkSignIn({ email: lena, password: DEMO_PASSWORD }, "203.0.113.9", at(2 * MIN))).toMatchObject({ ok: true });
  });

  it("a deactivated user stays out; a new user needs an email; a user created by sign-on has no password", async () => {
    const first = await signInWithIdentity(corp, ivy(["fin-approvers"]), at(0));
    if (!first.ok) throw new Error("expected a sign-in");
    expect(await checkSignIn({ email: "ivy@example.com", password: "" }, "203.0.113.9", at(MIN))).toMatchObject({ ok: false });
    expect(await checkSignIn({ email: "ivy@example.com", password: "anything" }, "203.0.113.9", at(MIN))).toMatchObject({ ok: false, reason: "invalid" });
    await db().user.update({ where: { id: first.user.id }, data: { active: false } });
    expect(await signInWithIdentity(corp, ivy(["fin-approvers"]), at(2 * MIN))).toMatchObject({ ok: false, reason: expect.stringMatching(/deactivated/) });
    expect(await signInWithIdentity(corp, { sub: "no-email", groups: ["fin-approvers"] }, at(0))).toMatchObject({ ok: false, reason: expect.stringMatching(/no email/) });
  });

  it("four-eyes: an approval counts at the claim only while the provider's claims keep its reviewer in the group", async () => {
    const signedIn = await signInWithIdentity(corp, ivy(["fin-approvers"]), at(0));
    if (!signedIn.ok) throw new Error("expected a sign-in");
    const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: "acct-sso-1", amount: 50_000 }, T0);
    const requestId = await requestIdOf(taskId);
    expect(await decide({ requestId, reviewerId: signedIn.user.id, decision: "approve" }, at(MIN))).toMatchObject({ ok: true, requestStatus: "pending" });

    // The provider drops her from fin-approvers; she signs in again: the row loses treasury, nothing else changes.
    expect(await signInWithIdentity(corp, ivy(["support-team"]), at(2 * MIN))).toMatchObject({ ok: true, user: { groups: ["support-leads"] } });

    // The second approval reaches the two required, but only one eligible approver remains at the claim: nothing runs.
    await approveOnly(taskId, TREASURY[0], at(3 * MIN));
    await advanceTask(taskId, at(4 * MIN));
    expect(await sideEffects(taskId)).toBe(0);
    expect(await auditCount(taskId, "execution.claimed")).toBe(0);
    expect((await taskRow(taskId)).status).toBe("working");
    // And she can no longer review it.
    const current = (await taskRow(taskId)).handle!;
    expect(await decide({ requestId: current, reviewerId: signedIn.user.id, decision: "approve" }, at(5 * MIN))).toMatchObject({ ok: false });
  });
});
