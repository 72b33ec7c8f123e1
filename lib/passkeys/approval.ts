/**
 * Passkey-confirmed approvals: a single-use challenge bound to one reviewer, one request and its argument digest,
 * and the check an approval of a passkey request must pass before it is recorded (inside the review's transaction).
 */
import { randomBytes } from "node:crypto";
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { db } from "../db/client";
import type { Tx } from "../audit/append";
import { isEligibleReviewer, offeredGroupsWords } from "../approvals/eligibility";
import type { RelyingParty } from "./relying-party";
import { approvalChallenge, storedAssertion, verifyApprovalAssertion, type StoredAssertion } from "./approval-assertion";

/** How long a reviewer has to answer an approval challenge (COUNTERSIGN_PASSKEY_CHALLENGE_TTL_SEC, seconds). */
export function challengeTtlSec(): number {
  const v = Number(process.env.COUNTERSIGN_PASSKEY_CHALLENGE_TTL_SEC);
  return Number.isFinite(v) && v > 0 ? v : 300;
}

export const NO_PASSKEY = "This approval needs a passkey: register a passkey on your profile page first.";

/** What comes with an approval of a passkey request: the challenge's nonce and the browser's assertion. */
export type PasskeyProof = { nonce: string; response: AuthenticationResponseJSON; rp: RelyingParty };

/** What the audit event of the approval keeps, so an auditor can recompute the challenge and verify the signature. */
export type PasskeyEvidence = {
  requestId: string;
  argumentDigest: string;
  nonce: string;
  rpId: string;
  origin: string;
  counter: number;
  assertion: StoredAssertion;
};

export type IssuedChallenge =
  | { ok: true; nonce: string; options: PublicKeyCredentialRequestOptionsJSON }
  | { ok: false; error: string };

/** The argument digest of a request as it was submitted (the digest the reviewer's approval is bound to). */
export function argumentDigestOf(body: unknown): string {
  const d = (body as { argumentsDigest?: unknown } | null)?.argumentsDigest;
  return typeof d === "string" ? d : "";
}

/** A fresh challenge for `userId` to approve `requestId`, stored single-use with a short expiry. */
export async function issueApprovalChallenge(userId: string, requestId: string, rp: RelyingParty, now: Date): Promise<IssuedChallenge> {
  const req = await db().approvalRequest.findUnique({
    where: { id: requestId },
    select: { id: true, status: true, requirePasskey: true, body: true, approverGroup: true, fallbackGroup: true, escalatedAt: true, requesterUserId: true },
  });
  const user = await db().user.findUnique({ where: { id: userId } });
  if (!req || !user) return { ok: false, error: "No such request." };
  // Only someone who could approve it gets a challenge for it (the review checks again).
  if (!(await isEligibleReviewer(user.id, req, now))) return { ok: false, error: `Only active ${offeredGroupsWords(req)} reviewers can review this request.` };
  if (!req.requirePasskey) return { ok: false, error: "This request needs no passkey." };
  if (req.status !== "pending") return { ok: false, error: `This request is already ${req.status}.` };
  const keys = await db().passkey.findMany({ where: { userId }, select: { id: true, transports: true }, orderBy: { createdAt: "asc" } });
  if (keys.length === 0) return { ok: false, error: NO_PASSKEY };
  const nonce = randomBytes(32).toString("base64url");
  const digest = argumentDigestOf(req.body);
  const challenge = approvalChallenge(req.id, digest, nonce);
  await db().$transaction(async (tx) => {
    // Challenges expire; the expired ones of anyone go with each new one, so the table stays small.
    await tx.passkeyChallenge.deleteMany({ where: { expiresAt: { lt: now } } });
    await tx.passkeyChallenge.create({
      data: { nonce, userId, purpose: "approve", requestId: req.id, digest, challenge, expiresAt: new Date(now.getTime() + challengeTtlSec() * 1000), createdAt: now },
    });
  });
  return {
    ok: true,
    nonce,
    options: {
      challenge,
      rpId: rp.rpId,
      timeout: challengeTtlSec() * 1000,
      userVerification: "required",
      allowCredentials: keys.map((k) => ({ id: k.id, type: "public-key" as const, ...(Array.isArray(k.transports) ? { transports: k.transports as never } : {}) })),
    },
  };
}

export class PasskeyRefused extends Error {}

/**
 * The passkey rule of an approval, in the review's transaction: the nonce is this reviewer's, for this request and
 * this digest, unused and unexpired (and is used up here); the credential is the reviewer's own; the assertion is a
 * user-verified signature over the challenge; the sign counter moves forward. Throws PasskeyRefused otherwise.
 */
export async function consumeApprovalPasskey(
  tx: Tx,
  input: { requestId: string; argumentDigest: string; reviewerId: string; proof: PasskeyProof | undefined },
  now: Date,
): Promise<PasskeyEvidence> {
  const { proof } = input;
  if (!proof) {
    const has = await tx.passkey.count({ where: { userId: input.reviewerId } });
    throw new PasskeyRefused(has > 0 ? "This approval needs your passkey. Confirm with your passkey, then approve." : NO_PASSKEY);
  }
  const used = await tx.passkeyChallenge.updateMany({
    where: {
      nonce: proof.nonce,
      userId: input.reviewerId,
      purpose: "approve",
      requestId: input.requestId,
      digest: input.argumentDigest,
      usedAt: null,
      expiresAt: { gt: now },
    },
    data: { usedAt: now },
  });
  if (used.count !== 1) throw new PasskeyRefused("That passkey confirmation is not for this request, was already used, or has expired. Confirm again.");
  const key = await tx.passkey.findFirst({ where: { id: proof.response.id, userId: input.reviewerId } });
  if (!key) throw new PasskeyRefused("That passkey is not registered to you.");
  const assertion = storedAssertion(proof.response);
  const v = await verifyApprovalAssertion({
    requestId: input.requestId,
    argumentDigest: input.argumentDigest,
    nonce: proof.nonce,
    assertion,
    publicKey: key.publicKey,
    counter: key.counter,
    rpId: proof.rp.rpId,
    origin: proof.rp.origin,
  });
  if (!v.ok) throw new PasskeyRefused("The passkey confirmation could not be verified. Confirm again.");
  if (!signCounterAdvances(key.counter, v.newCounter)) throw new PasskeyRefused("The passkey's sign counter went backwards, so this confirmation is refused.");
  // Conditional on the counter read: a concurrent use of the same credential cannot both pass.
  const moved = await tx.passkey.updateMany({ where: { id: key.id, counter: key.counter }, data: { counter: v.newCounter, lastUsedAt: now } });
  if (moved.count !== 1) throw new PasskeyRefused("The passkey was used at the same moment elsewhere. Confirm again.");
  return { requestId: input.requestId, argumentDigest: input.argumentDigest, nonce: proof.nonce, rpId: proof.rp.rpId, origin: proof.rp.origin, counter: v.newCounter, assertion };
}

/** A counter in use (non-zero) must grow; an authenticator that keeps no counter reports 0 each time. */
export function signCounterAdvances(stored: number, reported: number): boolean {
  if (stored === 0 && reported === 0) return true;
  return reported > stored;
}
