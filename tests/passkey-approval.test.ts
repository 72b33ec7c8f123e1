/**
 * Passkey-verified approvals: a rule that requires a passkey has each approval confirmed with WebAuthn, bound to
 * the request's id and argument digest through a single-use server nonce, and the assertion kept in the audit
 * trail so an auditor can verify who approved what. Real ES256 signatures from a software authenticator.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { reviewRequest } from "../lib/approvals/review";
import { decide } from "../lib/tasks/decide";
import { saveRuleVersion } from "../lib/policy/save-rule";
import { beginPasskeyRegistration, finishPasskeyRegistration, listPasskeys, removePasskey } from "../lib/passkeys/registration";
import { challengeTtlSec, consumeApprovalPasskey, issueApprovalChallenge, PasskeyRefused, signCounterAdvances, type PasskeyEvidence } from "../lib/passkeys/approval";
import { approvalChallenge, verifyApprovalAssertion } from "../lib/passkeys/approval-assertion";
import { relyingParty, type RelyingParty } from "../lib/passkeys/relying-party";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { MIN, SEC, T0, TREASURY, at, gatedCall, sideEffects, taskRow } from "./support/proof";
import { SoftAuthenticator } from "./support/authenticator";

const RP: RelyingParty = { rpId: "localhost", origin: "http://localhost:3000", rpName: "Countersign" };
/** USD 12,345.67: the one amount the passkey rule of this file matches (no demo rule does). */
const AMOUNT = 12_345.67;

let tara: string;
let theo: string;
const taraKey = new SoftAuthenticator("tara");
const theoKey = new SoftAuthenticator("theo");
let n = 0;

async function register(user: string, key: SoftAuthenticator, now: Date) {
  const u = await db().user.findUniqueOrThrow({ where: { id: user } });
  const begun = await beginPasskeyRegistration(u, RP, now);
  const r = await finishPasskeyRegistration({ userId: user, name: `${u.name}'s key`, nonce: begun.nonce, response: key.register(begun.options.challenge, RP) }, RP, now);
  if (!r.ok) throw new Error(r.error);
}

/** A fresh wire transfer the passkey rule gates: its request id and argument digest. */
async function passkeyRequest(): Promise<{ taskId: string; requestId: string; digest: string }> {
  const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: `acct-pk-${++n}`, amount: AMOUNT }, T0);
  const requestId = await requestIdOf(taskId);
  const task = await taskRow(taskId);
  return { taskId, requestId, digest: task.argumentsDigest };
}

async function challengeFor(user: string, requestId: string, now: Date) {
  const c = await issueApprovalChallenge(user, requestId, RP, now);
  if (!c.ok) throw new Error(c.error);
  return c;
}

beforeAll(async () => {
  await resetDb();
  tara = await userId(TREASURY[0]);
  theo = await userId(TREASURY[1]);
  await saveRuleVersion(
    {
      ruleKey: "wire-passkey-test",
      tool: "wire_transfer",
      description: "One exact amount needs a treasury approval confirmed by passkey",
      field: "amount_cents",
      operator: "eq",
      value: String(Math.round(AMOUNT * 100)),
      currency: "USD",
      effect: "requestable",
      approverGroup: "treasury",
      approvalsRequired: 1,
      requestDeadlineSec: 24 * 3600,
      approvalValiditySec: 3600,
      requireJustification: false,
      requirePasskey: true,
      reason: "This transfer needs a treasury approval confirmed with a passkey.",
    },
    await userId("admin@countersign.test"),
    T0,
  );
  await register(tara, taraKey, T0);
  await register(theo, theoKey, T0);
});

describe("passkey-verified approvals", () => {
  it("a rule that requires a passkey marks its approval request; other requests do not", async () => {
    const { requestId } = await passkeyRequest();
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).requirePasskey).toBe(true);
    const other = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: "acct-plain", amount: 50_000 }, T0);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: await requestIdOf(other) } })).requirePasskey).toBe(false);
  });

  it("an approval without the passkey step is refused, and nothing runs", async () => {
    const { taskId, requestId } = await passkeyRequest();
    const r = await decide({ requestId, reviewerId: tara, decision: "approve" }, at(MIN));
    expect(r).toEqual({ ok: false, error: "This approval needs your passkey. Confirm with your passkey, then approve." });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("pending");
    expect(await db().review.count({ where: { requestId } })).toBe(0);
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("only a reviewer who could approve the request gets a challenge for it", async () => {
    const { requestId } = await passkeyRequest();
    const lena = await userId("lena.lead@countersign.test");
    expect(await issueApprovalChallenge(lena, requestId, RP, at(MIN))).toEqual({ ok: false, error: "Only active treasury reviewers can review this request." });
    expect(await db().passkeyChallenge.count({ where: { userId: lena } })).toBe(0);
  });

  it("a reviewer with no passkey is told to register one on the profile page first", async () => {
    const { requestId } = await passkeyRequest();
    const noKey = await db().user.create({ data: { email: "tess.treasury@countersign.test", name: "Tess Treasury", role: "reviewer", groups: ["treasury"], passwordHash: "x" } });
    expect(await issueApprovalChallenge(noKey.id, requestId, RP, at(MIN))).toEqual({ ok: false, error: expect.stringMatching(/register a passkey on your profile page first/) });
    expect(await reviewRequest({ requestId, reviewerId: noKey.id, decision: "approve" }, at(MIN))).toEqual({ ok: false, error: expect.stringMatching(/register a passkey on your profile page first/) });
  });

  it("a passkey assertion for another request is refused", async () => {
    const a = await passkeyRequest();
    const b = await passkeyRequest();
    const cb = await challengeFor(tara, b.requestId, at(MIN));
    const r = await reviewRequest({ requestId: a.requestId, reviewerId: tara, decision: "approve", passkey: { nonce: cb.nonce, response: taraKey.assert(cb.options.challenge, RP), rp: RP } }, at(MIN));
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/not for this request/) });
    // A's own nonce with a signature over B's challenge: the signed challenge is not this request's.
    const ca = await challengeFor(tara, a.requestId, at(MIN));
    const r2 = await reviewRequest({ requestId: a.requestId, reviewerId: tara, decision: "approve", passkey: { nonce: ca.nonce, response: taraKey.assert(cb.options.challenge, RP), rp: RP } }, at(MIN));
    expect(r2).toEqual({ ok: false, error: expect.stringMatching(/could not be verified/) });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: a.requestId } })).status).toBe("pending");
  });

  it("an assertion over another argument digest is refused", async () => {
    const a = await passkeyRequest();
    const c = await challengeFor(tara, a.requestId, at(MIN));
    const forged = approvalChallenge(a.requestId, "sha256:" + "0".repeat(64), c.nonce);
    const r = await reviewRequest({ requestId: a.requestId, reviewerId: tara, decision: "approve", passkey: { nonce: c.nonce, response: taraKey.assert(forged, RP), rp: RP } }, at(MIN));
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/could not be verified/) });
  });

  it("a nonce works once: a reused nonce is refused", async () => {
    const a = await passkeyRequest();
    const c = await challengeFor(tara, a.requestId, at(MIN));
    const proof = { nonce: c.nonce, response: taraKey.assert(c.options.challenge, RP), rp: RP };
    const input = { requestId: a.requestId, argumentDigest: a.digest, reviewerId: tara, proof };
    await db().$transaction((tx) => consumeApprovalPasskey(tx, input, at(MIN)));
    const again = { ...proof, response: taraKey.assert(c.options.challenge, RP) };
    await expect(db().$transaction((tx) => consumeApprovalPasskey(tx, { ...input, proof: again }, at(MIN)))).rejects.toThrow(PasskeyRefused);
    await expect(db().$transaction((tx) => consumeApprovalPasskey(tx, { ...input, proof: again }, at(MIN)))).rejects.toThrow(/already used/);
  });

  it("an expired nonce is refused", async () => {
    const a = await passkeyRequest();
    const c = await challengeFor(tara, a.requestId, at(MIN));
    const late = at(MIN + challengeTtlSec() * SEC + SEC);
    const r = await reviewRequest({ requestId: a.requestId, reviewerId: tara, decision: "approve", passkey: { nonce: c.nonce, response: taraKey.assert(c.options.challenge, RP), rp: RP } }, late);
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/expired/) });
  });

  it("someone else's credential is refused, and so is another reviewer's nonce", async () => {
    const a = await passkeyRequest();
    const c = await challengeFor(tara, a.requestId, at(MIN));
    const r = await reviewRequest({ requestId: a.requestId, reviewerId: tara, decision: "approve", passkey: { nonce: c.nonce, response: theoKey.assert(c.options.challenge, RP), rp: RP } }, at(MIN));
    expect(r).toEqual({ ok: false, error: "That passkey is not registered to you." });
    const c2 = await challengeFor(tara, a.requestId, at(MIN));
    const r2 = await reviewRequest({ requestId: a.requestId, reviewerId: theo, decision: "approve", passkey: { nonce: c2.nonce, response: theoKey.assert(c2.options.challenge, RP), rp: RP } }, at(MIN));
    expect(r2).toEqual({ ok: false, error: expect.stringMatching(/not for this request/) });
  });

  it("an assertion without user verification is refused", async () => {
    const a = await passkeyRequest();
    const c = await challengeFor(tara, a.requestId, at(MIN));
    const r = await reviewRequest({ requestId: a.requestId, reviewerId: tara, decision: "approve", passkey: { nonce: c.nonce, response: taraKey.assert(c.options.challenge, RP, { userVerified: false }), rp: RP } }, at(MIN));
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/could not be verified/) });
  });

  it("a sign counter that goes backwards is refused; one that keeps no counter (always 0) is not", async () => {
    expect(signCounterAdvances(0, 0)).toBe(true);
    expect(signCounterAdvances(5, 6)).toBe(true);
    expect(signCounterAdvances(5, 5)).toBe(false);
    expect(signCounterAdvances(5, 3)).toBe(false);
    const a = await passkeyRequest();
    await db().passkey.update({ where: { id: taraKey.id }, data: { counter: 1000 } });
    const c = await challengeFor(tara, a.requestId, at(MIN));
    const r = await reviewRequest({ requestId: a.requestId, reviewerId: tara, decision: "approve", passkey: { nonce: c.nonce, response: taraKey.assert(c.options.challenge, RP, { counter: 999 }), rp: RP } }, at(MIN));
    expect(r.ok).toBe(false);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: a.requestId } })).status).toBe("pending");
    taraKey.counter = 1000;
  });

  it("a denial needs no passkey", async () => {
    const a = await passkeyRequest();
    const r = await decide({ requestId: a.requestId, reviewerId: theo, decision: "deny", comment: "Unknown beneficiary" }, at(MIN));
    expect(r).toMatchObject({ ok: true, requestStatus: "denied" });
  });

  it("the right assertion is accepted: the approval is recorded, the tool runs once, the counter moves on, and the audit trail lets an auditor re-verify it alone", async () => {
    const a = await passkeyRequest();
    const before = (await db().passkey.findUniqueOrThrow({ where: { id: taraKey.id } })).counter;
    const c = await challengeFor(tara, a.requestId, at(MIN));
    expect(c.options.challenge).toBe(approvalChallenge(a.requestId, a.digest, c.nonce));
    expect(c.options.userVerification).toBe("required");
    expect(c.options.allowCredentials?.map((k) => k.id)).toEqual([taraKey.id]);
    const r = await decide({ requestId: a.requestId, reviewerId: tara, decision: "approve", passkey: { nonce: c.nonce, response: taraKey.assert(c.options.challenge, RP), rp: RP } }, at(MIN));
    expect(r).toMatchObject({ ok: true, requestStatus: "approved" });
    expect(await sideEffects(a.taskId)).toBe(1);
    const key = await db().passkey.findUniqueOrThrow({ where: { id: taraKey.id } });
    expect(key.counter).toBeGreaterThan(before);
    expect(key.lastUsedAt).toEqual(at(MIN));

    // The auditor: the approval's audit event and the registration's audit event, nothing else.
    const ev = await db().auditEvent.findFirstOrThrow({ where: { requestId: a.requestId, type: "review.approved" } });
    const evidence = (ev.data as { passkey: PasskeyEvidence }).passkey;
    expect(evidence).toMatchObject({ requestId: a.requestId, argumentDigest: a.digest, nonce: c.nonce, rpId: RP.rpId, origin: RP.origin, assertion: { credentialId: taraKey.id } });
    const registered = await db().auditEvent.findMany({ where: { type: "passkey.registered" } });
    const reg = registered.find((e) => (e.data as { credentialId: string }).credentialId === evidence.assertion.credentialId)!;
    expect(reg.actor).toBe(ev.actor);
    const check = { requestId: evidence.requestId, argumentDigest: evidence.argumentDigest, nonce: evidence.nonce, assertion: evidence.assertion, publicKey: (reg.data as { publicKey: string }).publicKey, counter: 0, rpId: evidence.rpId, origin: evidence.origin };
    expect(await verifyApprovalAssertion(check)).toMatchObject({ ok: true });
    // ... and the same evidence does not verify for any other request or arguments.
    expect(await verifyApprovalAssertion({ ...check, requestId: (await passkeyRequest()).requestId })).toMatchObject({ ok: false });
    expect(await verifyApprovalAssertion({ ...check, argumentDigest: "sha256:other" })).toMatchObject({ ok: false });
  });

  it("passkeys are listed and removed by their owner only; a removed passkey no longer approves", async () => {
    const list = await listPasskeys(theo);
    expect(list).toEqual([{ id: theoKey.id, name: "Theo Treasury's key", createdAt: T0.toISOString(), lastUsedAt: null }]);
    expect(await removePasskey(tara, theoKey.id, at(MIN))).toBe(false);
    expect(await listPasskeys(theo)).toHaveLength(1);
    const a = await passkeyRequest();
    const c = await challengeFor(theo, a.requestId, at(MIN));
    expect(await removePasskey(theo, theoKey.id, at(MIN))).toBe(true);
    const r = await reviewRequest({ requestId: a.requestId, reviewerId: theo, decision: "approve", passkey: { nonce: c.nonce, response: theoKey.assert(c.options.challenge, RP), rp: RP } }, at(MIN));
    expect(r).toEqual({ ok: false, error: "That passkey is not registered to you." });
  });

  it("a registration answered for another challenge is refused", async () => {
    const u = await db().user.findUniqueOrThrow({ where: { id: tara } });
    const begun = await beginPasskeyRegistration(u, RP, at(MIN));
    const other = new SoftAuthenticator("tara");
    const r = await finishPasskeyRegistration({ userId: tara, name: "x", nonce: begun.nonce, response: other.register("not-the-challenge", RP) }, RP, at(MIN));
    expect(r).toEqual({ ok: false, error: "The passkey could not be verified." });
    const begun2 = await beginPasskeyRegistration(u, RP, at(MIN));
    expect(await finishPasskeyRegistration({ userId: theo, name: "x", nonce: begun2.nonce, response: other.register(begun2.options.challenge, RP) }, RP, at(MIN))).toMatchObject({ ok: false });
  });

  it("the relying party comes from COUNTERSIGN_PASSKEY_ORIGIN / _RP_ID, else AUTH_URL, else the request's origin", () => {
    const saved = { o: process.env.COUNTERSIGN_PASSKEY_ORIGIN, r: process.env.COUNTERSIGN_PASSKEY_RP_ID, a: process.env.AUTH_URL };
    try {
      delete process.env.COUNTERSIGN_PASSKEY_ORIGIN;
      delete process.env.COUNTERSIGN_PASSKEY_RP_ID;
      delete process.env.AUTH_URL;
      expect(relyingParty("http://localhost:3500")).toMatchObject({ rpId: "localhost", origin: "http://localhost:3500" });
      expect(relyingParty(null)).toBeNull();
      process.env.AUTH_URL = "https://approvals.example.com/app";
      expect(relyingParty("http://localhost:3500")).toMatchObject({ rpId: "approvals.example.com", origin: "https://approvals.example.com" });
      process.env.COUNTERSIGN_PASSKEY_ORIGIN = "https://review.example.com";
      process.env.COUNTERSIGN_PASSKEY_RP_ID = "example.com";
      expect(relyingParty("http://localhost:3500")).toMatchObject({ rpId: "example.com", origin: "https://review.example.com" });
    } finally {
      for (const [k, v] of [["COUNTERSIGN_PASSKEY_ORIGIN", saved.o], ["COUNTERSIGN_PASSKEY_RP_ID", saved.r], ["AUTH_URL", saved.a]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
