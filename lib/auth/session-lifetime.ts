/**
 * How long a reviewer's session lives: an idle limit, renewed by activity, and an absolute limit from the sign-in,
 * after which the person signs in again whatever their activity. The session token carries `signedInAt` (set at
 * sign-in, never changed) and `seenAt` (the last time the session was used), both in seconds since the epoch.
 *
 * No database and no Next.js here: the proxy (proxy.ts), the Auth.js callbacks and `currentUser` all apply this one
 * rule, so it can be imported wherever the session token is read.
 */

export type SessionLimits = { idleSec: number; maxSec: number };

/** The times a session token carries (unknown: they come out of a decoded token). */
export type SessionTimes = { signedInAt?: unknown; seenAt?: unknown };

export type SessionVerdict = { ok: true } | { ok: false; reason: "undated" | "absolute" | "idle" };

export const DEFAULT_SESSION_IDLE_SEC = 30 * 60;
export const DEFAULT_SESSION_MAX_SEC = 12 * 60 * 60;

/** "90s", "30m", "12h", "1d" or a number of seconds; null when it is none of these or zero. */
export function parseSessionDuration(text: string | undefined): number | null {
  const m = /^\s*(\d{1,7})\s*([smhd]?)\s*$/.exec(text ?? "");
  if (!m) return null;
  const sec = Number(m[1]) * ({ "": 1, s: 1, m: 60, h: 3600, d: 86400 } as const)[m[2] as "" | "s" | "m" | "h" | "d"];
  return sec > 0 ? sec : null;
}

/**
 * The limits from COUNTERSIGN_SESSION_IDLE (default 30m) and COUNTERSIGN_SESSION_MAX (default 12h); an unreadable
 * value is the default. The idle limit is never longer than the absolute one.
 */
export function sessionLimits(env: Record<string, string | undefined> = process.env): SessionLimits {
  const maxSec = parseSessionDuration(env.COUNTERSIGN_SESSION_MAX) ?? DEFAULT_SESSION_MAX_SEC;
  const idleSec = Math.min(parseSessionDuration(env.COUNTERSIGN_SESSION_IDLE) ?? DEFAULT_SESSION_IDLE_SEC, maxSec);
  return { idleSec, maxSec };
}

/** A session setting that is set but is no duration; `npm start` stops with it. */
export class SessionSettingsError extends Error {
  override name = "SessionSettingsError";
}

/** The session limits for the start-up log; throws a SessionSettingsError naming a setting that is set but unreadable. */
export function describeSessionSettings(env: Record<string, string | undefined> = process.env): string {
  for (const name of ["COUNTERSIGN_SESSION_IDLE", "COUNTERSIGN_SESSION_MAX"]) {
    const raw = env[name];
    if (raw !== undefined && raw !== "" && parseSessionDuration(raw) === null) {
      throw new SessionSettingsError(`${name}: "${raw.slice(0, 40)}" is not a duration; expected e.g. 30m, 12h or 1d.`);
    }
  }
  const { idleSec, maxSec } = sessionLimits(env);
  const text = (sec: number) => (sec % 3600 === 0 ? `${sec / 3600}h` : sec % 60 === 0 ? `${sec / 60}m` : `${sec}s`);
  return `browser sessions: signed out after ${text(idleSec)} without activity, and ${text(maxSec)} after signing in`;
}

const isTime = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0;

/**
 * Whether a session may be used at `now`: it names when it was signed in and last used; less than `maxSec` has
 * passed since the sign-in, and less than `idleSec` since it was last used. A session at exactly a limit is over.
 * A session without these times (signed in before they existed, or not by this app) is refused.
 */
export function sessionLifetime(times: SessionTimes, now: Date, limits: SessionLimits): SessionVerdict {
  const { signedInAt, seenAt } = times;
  if (!isTime(signedInAt) || !isTime(seenAt)) return { ok: false, reason: "undated" };
  const nowSec = now.getTime() / 1000;
  if (nowSec - signedInAt >= limits.maxSec) return { ok: false, reason: "absolute" };
  if (nowSec - Math.max(seenAt, signedInAt) >= limits.idleSec) return { ok: false, reason: "idle" };
  return { ok: true };
}

/** The times of a session signed in at `now`. */
export function newSessionTimes(now: Date): { signedInAt: number; seenAt: number } {
  const sec = Math.floor(now.getTime() / 1000);
  return { signedInAt: sec, seenAt: sec };
}

/**
 * A session used at `now`: the same claims with `seenAt` moved to `now` when the session may still be used, else
 * null (the session is over; Auth.js then deletes its cookie). `signedInAt` never moves.
 */
export function renewSession<T extends SessionTimes>(claims: T, now: Date, limits: SessionLimits): (T & { seenAt: number }) | null {
  if (!sessionLifetime(claims, now, limits).ok) return null;
  return Object.assign(claims, { seenAt: Math.max(Math.floor(now.getTime() / 1000), claims.seenAt as number) });
}
