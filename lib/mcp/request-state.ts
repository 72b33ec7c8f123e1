/**
 * MRTR requestState (SEP-2322) for Countersign: sealed with the SDK's `createRequestStateCodec` (HMAC-SHA256,
 * signed, not encrypted: nothing secret goes in), bound by the codec to the method and the authenticated agent,
 * and bound by the payload to the principal, the tool and the argument digest (the codec's bind sees only method
 * and auth). Short-lived (config.requestStateTtlSec) and single-use: the payload carries a random nonce that
 * lib/tasks/request-state.ts consumes once when the answer is accepted.
 *
 * Keys: COUNTERSIGN_REQUEST_STATE_KEYS, comma-separated, each at least 32 bytes. The first key seals; every key
 * opens, so a key rotates by putting the new one first and dropping the old one after the TTL. Unset: one key
 * derived from AUTH_SECRET (which scripts/start.ts generates and keeps in the data folder), so every instance
 * of one deployment opens the others' states. Neither set (a bare test process): a random key for this process.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { createRequestStateCodec, ProtocolError, ProtocolErrorCode, type RequestStateCodec, type ServerContext } from "@modelcontextprotocol/server";
import { digest } from "../canonical";
import { config } from "../config";
import { logWarn } from "../log";
import type { Principal } from "../tasks/types";

/** What a sealed state of a gated tool call carries. Short keys: the client can read it (signed, not encrypted). */
export type SealedCall = {
  kind: "call";
  /** agent id and user id of the principal the question was asked of */
  a: string;
  u: string;
  /** tool name and the digest (JCS, SHA-256) of its arguments */
  t: string;
  d: string;
  /** the inputRequests key the answer must arrive under */
  k: string;
  /** single-use nonce and expiry (ms since epoch) */
  n: string;
  x: number;
};

/** A conformance fixture's state (lib/mcp/conformance): same codec, same keys, its own payload. */
export type SealedFixture = { kind: "fixture"; tool: string; round: number; a: string; data?: Record<string, unknown> };

export type SealedState = SealedCall | SealedFixture;

/** The SDK's frozen message for a refused requestState; we use it for our own refusals too, so they look alike. */
export const INVALID_STATE_MESSAGE = "Invalid or expired requestState";

let cached: { source: string; codecs: RequestStateCodec<SealedState>[] } | null = null;
let warned = false;

function keys(): { source: string; keys: string[] } {
  const listed = (process.env.COUNTERSIGN_REQUEST_STATE_KEYS ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  if (listed.length) return { source: `env:${listed.join(",")}`, keys: listed };
  const secret = process.env.AUTH_SECRET;
  if (secret) {
    const derived = createHmac("sha256", secret).update("countersign/mcp/requestState/v1").digest("base64url");
    return { source: `auth:${secret}`, keys: [derived] };
  }
  if (!warned) {
    warned = true;
    logWarn("neither COUNTERSIGN_REQUEST_STATE_KEYS nor AUTH_SECRET is set: requestState uses a per-process key");
  }
  return { source: "process", keys: [processKey] };
}

const processKey = randomBytes(32).toString("base64url");

/** Binds a state to the JSON-RPC method and the authenticated agent (the SDK keeps only an HMAC tag of this). */
function bind(ctx: BindingContext): string {
  return `${ctx.mcpReq.method}\u0000${ctx.http?.authInfo?.clientId ?? ""}`;
}

function codecs(): RequestStateCodec<SealedState>[] {
  const k = keys();
  // The cache is keyed by a digest of the key material, so a rotation in the environment takes effect at once.
  const source = createHash("sha256").update(k.source).digest("hex");
  if (cached?.source !== source) {
    for (const key of k.keys) {
      if (Buffer.byteLength(key, "utf8") < 32) throw new Error("COUNTERSIGN_REQUEST_STATE_KEYS: every key must be at least 32 bytes");
    }
    cached = { source, codecs: k.keys.map((key) => createRequestStateCodec<SealedState>({ key, ttlSeconds: config.requestStateTtlSec, bind })) };
  }
  return cached.codecs;
}

/** What a state is bound to: the request's method and the authenticated agent (`bind`). */
export type BindingContext = { mcpReq: { method: string }; http?: { authInfo?: { clientId?: string } } };

export function sealState(payload: SealedState, ctx: BindingContext): Promise<string> {
  // The codec reads the context only through `bind`, which reads no more than BindingContext holds.
  return codecs()[0].mint(payload, ctx as ServerContext);
}

/** `ServerOptions.requestState.verify`: any configured key may open a state; all failing refuses it (-32602). */
export async function openState(state: string, ctx: ServerContext): Promise<SealedState> {
  for (const codec of codecs()) {
    try {
      return await codec.verify(state, ctx);
    } catch {
      // try the next key
    }
  }
  throw new Error("requestState refused");
}

export function argumentsDigest(args: unknown): string {
  return digest(args ?? {});
}

/** A fresh state for a question about this exact call. */
export function newCallState(principal: Principal, tool: string, args: unknown, key: string, now: Date): SealedCall {
  return {
    kind: "call",
    a: principal.agentId,
    u: principal.userId,
    t: tool,
    d: argumentsDigest(args),
    k: key,
    n: randomBytes(18).toString("base64url"),
    x: now.getTime() + config.requestStateTtlSec * 1000,
  };
}

/**
 * The echoed state must be a call state for this principal, this tool and these exact arguments, not expired.
 * Anything else is refused exactly like a tampered state: -32602 with the SDK's message.
 */
export function requireMatchingCall(state: unknown, principal: Principal, tool: string, args: unknown, now: Date): SealedCall {
  const s = state as Partial<SealedCall> | undefined;
  const ok =
    !!s &&
    s.kind === "call" &&
    s.a === principal.agentId &&
    s.u === principal.userId &&
    s.t === tool &&
    s.d === argumentsDigest(args) &&
    typeof s.k === "string" &&
    typeof s.n === "string" &&
    typeof s.x === "number" &&
    s.x > now.getTime();
  if (!ok) throw invalidState();
  return s as SealedCall;
}

export function invalidState(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, INVALID_STATE_MESSAGE);
}
