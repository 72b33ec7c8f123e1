/**
 * The cryptographic core of a passkey-confirmed approval, free of the database so an auditor can run it on an
 * audit event alone: the challenge is derived from the request id, the argument digest and a server nonce, and
 * the assertion must be a user-verified signature by the stored public key over exactly that challenge.
 */
import { createHash } from "node:crypto";
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from "@simplewebauthn/server";

/** base64url(SHA-256("countersign-approval\n<requestId>\n<argumentDigest>\n<nonce>")). */
export function approvalChallenge(requestId: string, argumentDigest: string, nonce: string): string {
  return createHash("sha256").update(`countersign-approval\n${requestId}\n${argumentDigest}\n${nonce}`).digest("base64url");
}

/** The parts of an assertion the audit trail keeps (all base64url, as the browser sent them). */
export type StoredAssertion = {
  credentialId: string;
  authenticatorData: string;
  clientDataJSON: string;
  signature: string;
  userHandle: string | null;
};

export function storedAssertion(response: AuthenticationResponseJSON): StoredAssertion {
  return {
    credentialId: response.id,
    authenticatorData: response.response.authenticatorData,
    clientDataJSON: response.response.clientDataJSON,
    signature: response.response.signature,
    userHandle: response.response.userHandle ?? null,
  };
}

export type ApprovalAssertionCheck = {
  requestId: string;
  argumentDigest: string;
  nonce: string;
  assertion: StoredAssertion;
  /** The credential's COSE public key, base64url, as registered. */
  publicKey: string;
  /** The counter stored before this assertion (0 for an auditor who only checks the signature). */
  counter: number;
  rpId: string;
  origin: string;
};

export type ApprovalAssertionResult = { ok: true; newCounter: number } | { ok: false; error: string };

/**
 * Whether `assertion` is the holder of `publicKey` confirming the approval of `requestId` with arguments
 * `argumentDigest` under `nonce`: signature, challenge, RP ID, origin, user presence and verification, and a sign
 * counter that moved forward when it is in use.
 */
export async function verifyApprovalAssertion(check: ApprovalAssertionCheck): Promise<ApprovalAssertionResult> {
  const a = check.assertion;
  const response: AuthenticationResponseJSON = {
    id: a.credentialId,
    rawId: a.credentialId,
    type: "public-key",
    clientExtensionResults: {},
    response: {
      authenticatorData: a.authenticatorData,
      clientDataJSON: a.clientDataJSON,
      signature: a.signature,
      ...(a.userHandle ? { userHandle: a.userHandle } : {}),
    },
  };
  try {
    const v = await verifyAuthenticationResponse({
      response,
      expectedChallenge: approvalChallenge(check.requestId, check.argumentDigest, check.nonce),
      expectedOrigin: check.origin,
      expectedRPID: check.rpId,
      credential: { id: a.credentialId, publicKey: new Uint8Array(Buffer.from(check.publicKey, "base64url")), counter: check.counter },
      requireUserVerification: true,
    });
    if (!v.verified || !v.authenticationInfo.userVerified) return { ok: false, error: "the assertion is not user-verified" };
    return { ok: true, newCounter: v.authenticationInfo.newCounter };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : "the assertion does not verify" };
  }
}
