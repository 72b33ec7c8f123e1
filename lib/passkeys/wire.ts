/** The browser's WebAuthn answers as the routes accept them (shape only: the server library verifies the content). */
import { z } from "zod";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";

const b64u = z.string().max(20_000).regex(/^[A-Za-z0-9_-]*$/, "base64url");

const AssertionJson = z.object({
  id: b64u.min(1),
  rawId: b64u.min(1),
  type: z.literal("public-key"),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  response: z.object({
    authenticatorData: b64u,
    clientDataJSON: b64u,
    signature: b64u,
    userHandle: b64u.optional(),
  }),
});

const AttestationJson = z.object({
  id: b64u.min(1),
  rawId: b64u.min(1),
  type: z.literal("public-key"),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  response: z
    .object({
      clientDataJSON: b64u,
      attestationObject: b64u,
      transports: z.array(z.string().max(32)).max(10).optional(),
    })
    .passthrough(),
});

export const PasskeyNonce = b64u.min(16).max(100);

function parseJson(text: unknown): unknown {
  if (typeof text !== "string" || text.length > 50_000) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An assertion as JSON text (what the decision form carries), or null when it is not one. */
export function readAssertion(text: unknown): AuthenticationResponseJSON | null {
  const r = AssertionJson.safeParse(parseJson(text));
  return r.success ? (r.data as AuthenticationResponseJSON) : null;
}

export function readAttestation(value: unknown): RegistrationResponseJSON | null {
  const r = AttestationJson.safeParse(typeof value === "string" ? parseJson(value) : value);
  return r.success ? (r.data as unknown as RegistrationResponseJSON) : null;
}
