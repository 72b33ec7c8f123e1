/**
 * Sign-in throttling on the database: a burst of wrong passwords locks the account, and the right password is then
 * refused until the lockout ends; wrong passwords spread over many accounts lock the client address; lockouts
 * double and end; concurrent failures are all counted; successful sign-ins are never throttled; every failure and
 * every lockout is in the audit trail.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { DEMO_PASSWORD } from "../db/seed";
import { resetDb } from "../../tests/support/db";
import { checkSignIn } from "./sign-in";
import { afterFailure, clientAddress, throttledMessage, throttleLimits } from "./throttle";

const LENA = "lena.lead@countersign.test";
const THEO = "theo.treasury@countersign.test";
const T0 = new Date("2026-06-01T09:00:00Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const MIN = 60_000;

beforeEach(resetDb);

const auditOf = (type: string) => db().auditEvent.findMany({ where: { type }, orderBy: { seq: "asc" } });

describe("sign-in throttling per account", () => {
  it("40 wrong passwords in a burst lock the account: the right password is then refused with the time to wait", async () => {
    const results = [];
    for (let i = 0; i < 40; i++) results.push(await checkSignIn({ email: LENA, password: `guess-${i}` }, "203.0.113.7", at(i * 100)));
    expect(results.slice(0, 4).every((r) => !r.ok && r.reason === "invalid")).toBe(true);
    expect(results[4]).toMatchObject({ ok: false, reason: "throttled" });
    expect(results.slice(5).every((r) => !r.ok && r.reason === "throttled")).toBe(true);

    const right = await checkSignIn({ email: LENA, password: DEMO_PASSWORD }, "203.0.113.7", at(7_000));
    expect(right).toMatchObject({ ok: false, reason: "throttled" });
    // From another address too: the account itself is locked.
    const elsewhere = await checkSignIn({ email: LENA, password: DEMO_PASSWORD }, "198.51.100.9", at(7_000));
    expect(elsewhere.ok).toBe(false);
    if (!right.ok && right.reason === "throttled") expect(throttledMessage(right.retryAfterMs)).toMatch(/^Too many sign-in attempts; try again in 1 minute\.$/);

    // Attempts during the lockout are refused without being counted: the lockout ends after one minute.
    expect((await checkSignIn({ email: LENA, password: DEMO_PASSWORD }, "198.51.100.9", at(0.4 * 1000 + MIN))).ok).toBe(true);
  });

  it("the lockout doubles with each further failure, up to its cap, and a success starts the count over", async () => {
    const wrong = (t: number) => checkSignIn({ email: THEO, password: "nope" }, "203.0.113.8", at(t));
    for (let i = 0; i < 5; i++) await wrong(i);
    let t = 4;
    const lockouts: number[] = [];
    for (let k = 0; k < 6; k++) {
      const row = await db().signInThrottle.findUniqueOrThrow({ where: { scope_key: { scope: "account", key: THEO } } });
      const lock = row.lockedUntil!.getTime() - at(t).getTime();
      lockouts.push(lock / MIN);
      t += lock; // the lockout has ended: one more wrong password
      const r = await wrong(t);
      expect(r).toMatchObject({ ok: false, reason: "throttled" });
    }
    expect(lockouts).toEqual([1, 2, 4, 8, 15, 15]);

    // After the last lockout, the right password works and the account's count starts over.
    const row = await db().signInThrottle.findUniqueOrThrow({ where: { scope_key: { scope: "account", key: THEO } } });
    t = row.lockedUntil!.getTime() - T0.getTime();
    expect((await checkSignIn({ email: THEO, password: DEMO_PASSWORD }, "203.0.113.8", at(t))).ok).toBe(true);
    expect(await db().signInThrottle.count({ where: { scope: "account", key: THEO } })).toBe(0);
    expect(await wrong(t + 1)).toEqual({ ok: false, reason: "invalid" });
  });

  it("an unknown account is locked exactly like a known one, so a lockout tells nothing about which accounts exist", async () => {
    const known = [];
    const unknown = [];
    for (let i = 0; i < 6; i++) {
      known.push(await checkSignIn({ email: LENA, password: "x" }, "203.0.113.10", at(i)));
      unknown.push(await checkSignIn({ email: "nobody@countersign.test", password: "x" }, "203.0.113.11", at(i)));
    }
    expect(unknown.map((r) => (r.ok ? "ok" : r.reason))).toEqual(known.map((r) => (r.ok ? "ok" : r.reason)));
  });

  it("concurrent wrong passwords are all counted (the count is serialized in the database)", async () => {
    await Promise.all(Array.from({ length: 12 }, (_, i) => checkSignIn({ email: LENA, password: `p${i}` }, "203.0.113.12", at(i))));
    const row = await db().signInThrottle.findUniqueOrThrow({ where: { scope_key: { scope: "account", key: LENA } } });
    // Failures after the lockout began are refused before being counted; at least the limit was counted, and it locked.
    expect(row.failures).toBeGreaterThanOrEqual(5);
    expect(row.lockedUntil!.getTime()).toBeGreaterThan(at(11).getTime());
    const events = await auditOf("auth.failed");
    expect(events.length).toBe(row.failures);
  });
});

describe("sign-in throttling per client address", () => {
  it("wrong passwords spread over many accounts lock the address for every account, and only that address", async () => {
    const limit = throttleLimits("address").maxFailures;
    for (let i = 0; i < limit; i++) await checkSignIn({ email: `spray-${i}@countersign.test`, password: DEMO_PASSWORD }, "203.0.113.20", at(i));
    expect(await checkSignIn({ email: LENA, password: DEMO_PASSWORD }, "203.0.113.20", at(limit))).toMatchObject({ ok: false, reason: "throttled" });
    expect((await checkSignIn({ email: LENA, password: DEMO_PASSWORD }, "203.0.113.21", at(limit))).ok).toBe(true);
    // A success of the attacker's own account does not reset the address.
    expect(await checkSignIn({ email: THEO, password: DEMO_PASSWORD }, "203.0.113.20", at(limit + 1))).toMatchObject({ ok: false, reason: "throttled" });
  });

  it("the client address is the last X-Forwarded-For entry (the one the nearest proxy saw)", () => {
    expect(clientAddress(new Headers({ "x-forwarded-for": "10.9.9.9, 203.0.113.5" }))).toBe("203.0.113.5");
    expect(clientAddress(new Headers({ "x-forwarded-for": "::ffff:127.0.0.1" }))).toBe("127.0.0.1");
    expect(clientAddress(new Headers())).toBe("unknown");
  });
});

describe("successful sign-ins", () => {
  it("are never throttled: 30 sign-ins of the demo users in a row from one address all succeed", async () => {
    for (let i = 0; i < 30; i++) {
      const email = [LENA, THEO, "admin@countersign.test"][i % 3];
      expect((await checkSignIn({ email, password: DEMO_PASSWORD }, "127.0.0.1", at(i))).ok).toBe(true);
    }
    expect(await db().signInThrottle.count()).toBe(0);
  });

  it("a few typos before the right password do not lock anyone out", async () => {
    for (let i = 0; i < 4; i++) expect(await checkSignIn({ email: LENA, password: "typo" }, "127.0.0.1", at(i))).toEqual({ ok: false, reason: "invalid" });
    expect((await checkSignIn({ email: LENA, password: DEMO_PASSWORD }, "127.0.0.1", at(5))).ok).toBe(true);
    expect(await checkSignIn({ email: LENA, password: "typo" }, "127.0.0.1", at(6))).toEqual({ ok: false, reason: "invalid" });
  });
});

describe("audit", () => {
  it("records each failed sign-in as auth.failed and each lockout as auth.throttled", async () => {
    for (let i = 0; i < 6; i++) await checkSignIn({ email: LENA, password: "wrong" }, "203.0.113.30", at(i));
    const failed = await auditOf("auth.failed");
    expect(failed).toHaveLength(5); // the sixth was refused during the lockout, without a password check
    expect(failed[0].data).toMatchObject({ account: LENA, address: "203.0.113.30", why: "invalid-credentials", accountFailures: 1 });
    const throttled = await auditOf("auth.throttled");
    expect(throttled).toHaveLength(1);
    expect(throttled[0].data).toMatchObject({ scope: "account", account: LENA, failures: 5, lockedUntil: at(4 + MIN).toISOString() });
  });
});

describe("afterFailure", () => {
  const limits = { maxFailures: 3, lockoutMs: MIN, maxLockoutMs: 10 * MIN, resetAfterMs: 60 * MIN };
  it("starts over after a quiet period", () => {
    const locked = afterFailure({ failures: 7, lastFailureAt: T0, lockedUntil: at(10 * MIN) }, at(61 * MIN), limits);
    expect(locked).toEqual({ failures: 1, lastFailureAt: at(61 * MIN), lockedUntil: null });
  });
});
