/**
 * A software WebAuthn authenticator for Node tests: an ES256 key pair from node:crypto, and the authenticator
 * data, client data and signatures a real one produces, so the server library verifies real signatures.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";

const b64u = (b: Buffer | Uint8Array) => Buffer.from(b).toString("base64url");

function cborBytes(b: Buffer): Buffer {
  if (b.length < 24) return Buffer.concat([Buffer.from([0x40 + b.length]), b]);
  if (b.length < 256) return Buffer.concat([Buffer.from([0x58, b.length]), b]);
  return Buffer.concat([Buffer.from([0x59, b.length >> 8, b.length & 0xff]), b]);
}
function cborText(s: string): Buffer {
  const b = Buffer.from(s, "utf8");
  if (b.length >= 24) throw new Error("short text only");
  return Buffer.concat([Buffer.from([0x60 + b.length]), b]);
}

export class SoftAuthenticator {
  readonly credentialId: Buffer = randomBytes(16);
  private readonly privateKey: KeyObject;
  readonly coseKey: Buffer;
  counter = 0;

  constructor(readonly userHandle: string) {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: "jwk" });
    const x = Buffer.from(jwk.x!, "base64url");
    const y = Buffer.from(jwk.y!, "base64url");
    // COSE_Key {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}
    this.coseKey = Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21]), cborBytes(x), Buffer.from([0x22]), cborBytes(y)]);
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  private authData(rpId: string, flags: number, attested = false): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const head = Buffer.concat([createHash("sha256").update(rpId).digest(), Buffer.from([flags]), counter]);
    if (!attested) return head;
    const len = Buffer.from([this.credentialId.length >> 8, this.credentialId.length & 0xff]);
    return Buffer.concat([head, Buffer.alloc(16), len, this.credentialId, this.coseKey]);
  }

  /** A "none" attestation for a registration challenge. */
  register(challenge: string, rp: { rpId: string; origin: string }): RegistrationResponseJSON {
    const clientDataJSON = Buffer.from(JSON.stringify({ type: "webauthn.create", challenge, origin: rp.origin, crossOrigin: false }));
    const authData = this.authData(rp.rpId, 0x45, true); // UP | UV | AT
    const attestationObject = Buffer.concat([
      Buffer.from([0xa3]),
      cborText("fmt"), cborText("none"),
      cborText("attStmt"), Buffer.from([0xa0]),
      cborText("authData"), cborBytes(authData),
    ]);
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      clientExtensionResults: {},
      response: { clientDataJSON: b64u(clientDataJSON), attestationObject: b64u(attestationObject), transports: ["internal"] },
    };
  }

  /** An assertion over `challenge`; user verified unless told otherwise; the counter moves on by one. */
  assert(challenge: string, rp: { rpId: string; origin: string }, opts: { userVerified?: boolean; counter?: number } = {}): AuthenticationResponseJSON {
    this.counter = opts.counter ?? this.counter + 1;
    const clientDataJSON = Buffer.from(JSON.stringify({ type: "webauthn.get", challenge, origin: rp.origin, crossOrigin: false }));
    const authenticatorData = this.authData(rp.rpId, opts.userVerified === false ? 0x01 : 0x05);
    const signature = sign("sha256", Buffer.concat([authenticatorData, createHash("sha256").update(clientDataJSON).digest()]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      clientExtensionResults: {},
      response: { authenticatorData: b64u(authenticatorData), clientDataJSON: b64u(clientDataJSON), signature: b64u(signature), userHandle: b64u(Buffer.from(this.userHandle)) },
    };
  }
}
