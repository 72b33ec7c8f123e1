/**
 * Slack's request signing: X-Slack-Signature is `v0=` + hex HMAC-SHA256, keyed with the app's signing secret, over
 * `v0:<X-Slack-Request-Timestamp>:<raw body>`. A request is genuine only with a matching signature (compared in
 * constant time) and a timestamp within five minutes of now.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SLACK_TIMESTAMP_WINDOW_SEC = 300;

export type SignatureCheck = { ok: true } | { ok: false; reason: "missing signature" | "stale timestamp" | "bad signature" };

export function slackSignature(secret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${rawBody}`).digest("hex")}`;
}

export function verifySlackSignature(
  input: { secret: string; timestamp: string | null; signature: string | null; rawBody: string },
  now: Date,
): SignatureCheck {
  const { timestamp, signature } = input;
  if (!timestamp || !signature) return { ok: false, reason: "missing signature" };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "stale timestamp" };
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > SLACK_TIMESTAMP_WINDOW_SEC) return { ok: false, reason: "stale timestamp" };
  const expected = Buffer.from(slackSignature(input.secret, timestamp, input.rawBody), "utf8");
  const given = Buffer.from(signature, "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "bad signature" };
  return { ok: true };
}
