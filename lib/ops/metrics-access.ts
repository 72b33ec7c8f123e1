/**
 * Who may read /metrics. With COUNTERSIGN_METRICS_TOKEN set, a request needs `Authorization: Bearer <token>`
 * (compared in constant time; the token must be at least 16 characters, else the endpoint stays closed). Without
 * a token the endpoint does not exist (404), unless COUNTERSIGN_METRICS_OPEN=1 opens it to anyone who can reach
 * it, for a deployment where only the admin network can. A token, when set, always wins over OPEN.
 */
import { createHash, timingSafeEqual } from "node:crypto";

export type MetricsAccess = "allowed" | "unauthorized" | "not-found";

export const MIN_TOKEN_LENGTH = 16;

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Constant-time equality of two strings of any lengths (both are hashed to a fixed length first). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b)) && a.length === b.length;
}

export function metricsAccess(authorization: string | null, env: NodeJS.ProcessEnv = process.env): MetricsAccess {
  const token = env.COUNTERSIGN_METRICS_TOKEN;
  if (token !== undefined && token !== "") {
    if (token.length < MIN_TOKEN_LENGTH) return "not-found";
    const m = /^Bearer ([^\s]+)$/.exec(authorization ?? "");
    return m && sameSecret(m[1], token) ? "allowed" : "unauthorized";
  }
  return env.COUNTERSIGN_METRICS_OPEN === "1" ? "allowed" : "not-found";
}
