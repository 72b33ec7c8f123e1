/** A reviewer's passkeys: register one (WebAuthn attestation, user verification required), list them, remove one. */
import { randomBytes } from "node:crypto";
import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import type { RelyingParty } from "./relying-party";
import { challengeTtlSec } from "./approval";

export type PasskeyView = { id: string; name: string; createdAt: string; lastUsedAt: string | null };

export async function listPasskeys(userId: string): Promise<PasskeyView[]> {
  const rows = await db().passkey.findMany({ where: { userId }, orderBy: { createdAt: "asc" } });
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.createdAt.toISOString(), lastUsedAt: r.lastUsedAt?.toISOString() ?? null }));
}

export async function beginPasskeyRegistration(
  user: { id: string; email: string; name: string },
  rp: RelyingParty,
  now: Date,
): Promise<{ nonce: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  const existing = await db().passkey.findMany({ where: { userId: user.id }, select: { id: true } });
  const options = await generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpId,
    userName: user.email,
    userDisplayName: user.name,
    userID: new TextEncoder().encode(user.id),
    attestationType: "none",
    excludeCredentials: existing.map((k) => ({ id: k.id })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "required" },
    timeout: challengeTtlSec() * 1000,
  });
  const nonce = randomBytes(32).toString("base64url");
  await db().$transaction(async (tx) => {
    await tx.passkeyChallenge.deleteMany({ where: { expiresAt: { lt: now } } });
    await tx.passkeyChallenge.create({
      data: { nonce, userId: user.id, purpose: "register", challenge: options.challenge, expiresAt: new Date(now.getTime() + challengeTtlSec() * 1000), createdAt: now },
    });
  });
  return { nonce, options };
}

export type RegistrationResult = { ok: true; passkey: PasskeyView } | { ok: false; error: string };

export async function finishPasskeyRegistration(
  input: { userId: string; name: string; nonce: string; response: RegistrationResponseJSON },
  rp: RelyingParty,
  now: Date,
): Promise<RegistrationResult> {
  return db().$transaction(async (tx): Promise<RegistrationResult> => {
    const row = await tx.passkeyChallenge.findUnique({ where: { nonce: input.nonce } });
    const used = await tx.passkeyChallenge.updateMany({
      where: { nonce: input.nonce, userId: input.userId, purpose: "register", usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (!row || used.count !== 1) return { ok: false, error: "That registration has expired. Start again." };
    let info;
    try {
      const v = await verifyRegistrationResponse({
        response: input.response,
        expectedChallenge: row.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        requireUserVerification: true,
      });
      if (!v.verified) return { ok: false, error: "The passkey could not be verified." };
      info = v.registrationInfo;
    } catch {
      return { ok: false, error: "The passkey could not be verified." };
    }
    if (await tx.passkey.findUnique({ where: { id: info.credential.id } })) return { ok: false, error: "That passkey is already registered." };
    const created = await tx.passkey.create({
      data: {
        id: info.credential.id,
        userId: input.userId,
        name: input.name,
        publicKey: Buffer.from(info.credential.publicKey).toString("base64url"),
        counter: info.credential.counter,
        transports: (input.response.response.transports ?? []) as string[],
        createdAt: now,
      },
    });
    await appendAudit(tx, { type: "passkey.registered", actor: `user:${input.userId}`, data: { credentialId: created.id, name: created.name, publicKey: created.publicKey }, at: now });
    return { ok: true, passkey: { id: created.id, name: created.name, createdAt: created.createdAt.toISOString(), lastUsedAt: null } };
  });
}

/** Removes one of the user's own passkeys; another user's passkey is never touched. */
export async function removePasskey(userId: string, passkeyId: string, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const res = await tx.passkey.deleteMany({ where: { id: passkeyId, userId } });
    if (res.count === 1) await appendAudit(tx, { type: "passkey.removed", actor: `user:${userId}`, data: { credentialId: passkeyId }, at: now });
    return res.count === 1;
  });
}
