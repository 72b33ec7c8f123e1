import { describe, expect, it } from "vitest";
import { describeSessionSettings, newSessionTimes, parseSessionDuration, renewSession, sessionLifetime, sessionLimits } from "./session-lifetime";

const LIMITS = { idleSec: 30 * 60, maxSec: 12 * 3600 };
const SIGNED_IN = new Date("2026-12-01T08:00:00Z");
const at = (sec: number) => new Date(SIGNED_IN.getTime() + sec * 1000);
const s = (d: Date) => d.getTime() / 1000;

describe("a reviewer's session: an idle limit renewed by activity, and an absolute limit from the sign-in", () => {
  it("a session just signed in may be used; it carries when it was signed in and last used", () => {
    const times = newSessionTimes(SIGNED_IN);
    expect(times).toEqual({ signedInAt: s(SIGNED_IN), seenAt: s(SIGNED_IN) });
    expect(sessionLifetime(times, SIGNED_IN, LIMITS)).toEqual({ ok: true });
  });

  it("idle limit: usable one second before it, over at exactly the limit and after", () => {
    const times = newSessionTimes(SIGNED_IN);
    expect(sessionLifetime(times, at(30 * 60 - 1), LIMITS)).toEqual({ ok: true });
    expect(sessionLifetime(times, at(30 * 60), LIMITS)).toEqual({ ok: false, reason: "idle" });
    expect(sessionLifetime(times, at(30 * 60 + 1), LIMITS)).toEqual({ ok: false, reason: "idle" });
  });

  it("activity renews the idle limit: used every 29 minutes, the session lives on", () => {
    let claims: { signedInAt: number; seenAt: number } | null = newSessionTimes(SIGNED_IN);
    for (let i = 1; i <= 20; i++) {
      claims = renewSession(claims!, at(i * 29 * 60), LIMITS);
      expect(claims, `use ${i}`).not.toBeNull();
      expect(claims!.seenAt).toBe(s(at(i * 29 * 60)));
      // The sign-in time never moves.
      expect(claims!.signedInAt).toBe(s(SIGNED_IN));
    }
  });

  it("absolute limit: however active, the session is over 12 hours after the sign-in", () => {
    const justUsed = { signedInAt: s(SIGNED_IN), seenAt: s(at(12 * 3600 - 1)) };
    expect(sessionLifetime(justUsed, at(12 * 3600 - 1), LIMITS)).toEqual({ ok: true });
    expect(sessionLifetime(justUsed, at(12 * 3600), LIMITS)).toEqual({ ok: false, reason: "absolute" });
    expect(renewSession({ ...justUsed }, at(12 * 3600), LIMITS)).toBeNull();
    // The absolute limit wins over a fresh use.
    expect(sessionLifetime({ signedInAt: s(SIGNED_IN), seenAt: s(at(13 * 3600)) }, at(13 * 3600), LIMITS)).toEqual({ ok: false, reason: "absolute" });
  });

  it("a session over its idle limit is not renewed by a late use", () => {
    const claims = newSessionTimes(SIGNED_IN);
    expect(renewSession({ ...claims }, at(31 * 60), LIMITS)).toBeNull();
  });

  it("a session without its times (signed in before they existed) is refused", () => {
    expect(sessionLifetime({}, SIGNED_IN, LIMITS)).toEqual({ ok: false, reason: "undated" });
    expect(sessionLifetime({ signedInAt: s(SIGNED_IN) }, SIGNED_IN, LIMITS)).toEqual({ ok: false, reason: "undated" });
    expect(sessionLifetime({ signedInAt: String(s(SIGNED_IN)), seenAt: s(SIGNED_IN) }, SIGNED_IN, LIMITS)).toEqual({ ok: false, reason: "undated" });
    expect(sessionLifetime({ signedInAt: Number.NaN, seenAt: s(SIGNED_IN) }, SIGNED_IN, LIMITS)).toEqual({ ok: false, reason: "undated" });
  });

  it("a last use dated before the sign-in does not stretch the idle limit backwards or forwards", () => {
    expect(sessionLifetime({ signedInAt: s(SIGNED_IN), seenAt: s(SIGNED_IN) - 3600 }, at(60), LIMITS)).toEqual({ ok: true });
    expect(sessionLifetime({ signedInAt: s(SIGNED_IN), seenAt: s(SIGNED_IN) - 3600 }, at(30 * 60), LIMITS)).toEqual({ ok: false, reason: "idle" });
  });
});

describe("the limits' settings", () => {
  it("default to 30 minutes idle and 12 hours absolute; read durations like 15m and 8h", () => {
    expect(sessionLimits({})).toEqual({ idleSec: 1800, maxSec: 43200 });
    expect(sessionLimits({ COUNTERSIGN_SESSION_IDLE: "15m", COUNTERSIGN_SESSION_MAX: "8h" })).toEqual({ idleSec: 900, maxSec: 28800 });
    expect(sessionLimits({ COUNTERSIGN_SESSION_IDLE: "90" })).toEqual({ idleSec: 90, maxSec: 43200 });
  });

  it("an unreadable or zero value is the default; the idle limit is never longer than the absolute one", () => {
    expect(sessionLimits({ COUNTERSIGN_SESSION_IDLE: "soon", COUNTERSIGN_SESSION_MAX: "0" })).toEqual({ idleSec: 1800, maxSec: 43200 });
    expect(sessionLimits({ COUNTERSIGN_SESSION_IDLE: "2d", COUNTERSIGN_SESSION_MAX: "1h" })).toEqual({ idleSec: 3600, maxSec: 3600 });
    expect(parseSessionDuration("-5m")).toBeNull();
    expect(parseSessionDuration("1w")).toBeNull();
  });
});

describe("the limits at start-up", () => {
  it("are described; a value that is set but is no duration stops the start, naming the setting", () => {
    expect(describeSessionSettings({})).toBe("browser sessions: signed out after 30m without activity, and 12h after signing in");
    expect(describeSessionSettings({ COUNTERSIGN_SESSION_IDLE: "90" })).toMatch(/after 90s without activity/);
    expect(() => describeSessionSettings({ COUNTERSIGN_SESSION_MAX: "twelve hours" })).toThrow(/^COUNTERSIGN_SESSION_MAX: "twelve hours" is not a duration/);
    expect(() => describeSessionSettings({ COUNTERSIGN_SESSION_IDLE: "0" })).toThrow(/^COUNTERSIGN_SESSION_IDLE/);
  });
});
