/**
 * Sign-in throttling: failed sign-ins are counted per account (the normalized email, whether or not such an
 * account exists, so a lockout tells nothing about which accounts exist) and per client address. A key that
 * reaches its limit is locked out, for a period that doubles with every further failure up to a cap. While either
 * key is locked, every attempt is refused before the password is checked, the right password included.
 *
 * Successful sign-ins are never counted; one resets its account's counter (never the address's, so an attacker's
 * own account cannot launder an address that sprays guesses at others). A counter starts over after a quiet period.
 *
 * The state lives in the database and each failure is applied under a row lock, so every process and replica
 * enforces one count. `now` is passed in.
 */
import type { Tx } from "../audit/append";
import { appendAudit } from "../audit/append";
import { db } from "../db/client";

export type ThrottleScope = "account" | "address";

export type ThrottleLimits = {
  /** Failures allowed before the key is locked out. */
  maxFailures: number;
  /** The first lockout; each further failure doubles it. */
  lockoutMs: number;
  /** The longest lockout. */
  maxLockoutMs: number;
  /** After this long without a failure, the counter starts over. */
  resetAfterMs: number;
};

export type ThrottleRow = { failures: number; lastFailureAt: Date; lockedUntil: Date | null };

function envNumber(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/** The limits in force (environment overrides; see README). */
export function throttleLimits(scope: ThrottleScope): ThrottleLimits {
  const common = {
    lockoutMs: envNumber("COUNTERSIGN_SIGNIN_LOCKOUT_MS", 60_000),
    maxLockoutMs: envNumber("COUNTERSIGN_SIGNIN_MAX_LOCKOUT_MS", 15 * 60_000),
    resetAfterMs: envNumber("COUNTERSIGN_SIGNIN_RESET_MS", 24 * 3600_000),
  };
  return scope === "account"
    ? { ...common, maxFailures: envNumber("COUNTERSIGN_SIGNIN_MAX_FAILURES", 5) }
    : { ...common, maxFailures: envNumber("COUNTERSIGN_SIGNIN_MAX_FAILURES_PER_ADDRESS", 20) };
}

/** The counter after one more failure at `now`: the lockout begins at the limit and doubles after it. */
export function afterFailure(prev: ThrottleRow | null, now: Date, limits: ThrottleLimits): ThrottleRow {
  const startOver = !prev || now.getTime() - prev.lastFailureAt.getTime() >= limits.resetAfterMs;
  const failures = startOver ? 1 : prev.failures + 1;
  let lockedUntil = startOver ? null : prev.lockedUntil;
  if (failures >= limits.maxFailures) {
    const lockMs = Math.min(limits.lockoutMs * 2 ** Math.min(failures - limits.maxFailures, 30), limits.maxLockoutMs);
    lockedUntil = new Date(now.getTime() + lockMs);
  }
  return { failures, lastFailureAt: now, lockedUntil };
}

/** How long the key stays locked after `now` (0: not locked). */
export function lockRemainingMs(row: Pick<ThrottleRow, "lockedUntil"> | null, now: Date): number {
  return row?.lockedUntil ? Math.max(row.lockedUntil.getTime() - now.getTime(), 0) : 0;
}

/** "try again in 3 minutes": whole minutes, rounded up, at least one. */
export function retryAfterText(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}

export function throttledMessage(ms: number): string {
  return `Too many sign-in attempts; try again in ${retryAfterText(ms)}.`;
}

/**
 * The client address of a request: the last X-Forwarded-For entry, which is the one the nearest proxy saw (a
 * reverse proxy appends the peer it accepted the connection from; Next.js sets the socket's address when no proxy
 * did). "unknown" if there is none.
 */
export function clientAddress(headers: Headers): string {
  const forwarded = (headers.get("x-forwarded-for") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  const last = forwarded.at(-1) ?? headers.get("x-real-ip")?.trim() ?? "";
  const address = last.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "").slice(0, 64).toLowerCase();
  return address || "unknown";
}

export type Keys = { account: string; address: string };

/** How long sign-in stays refused for this account and address (0: not throttled). */
export async function throttledForMs(keys: Keys, now: Date): Promise<number> {
  const rows = await db().signInThrottle.findMany({
    where: { OR: [{ scope: "account", key: keys.account }, { scope: "address", key: keys.address }] },
    select: { lockedUntil: true },
  });
  return Math.max(0, ...rows.map((r) => lockRemainingMs(r, now)));
}


async function bump(tx: Tx, scope: ThrottleScope, key: string, now: Date): Promise<{ row: ThrottleRow; lockStarted: boolean }> {
  // Create the counter if missing, then lock its row: concurrent failures (any process) are applied one at a time.
  await tx.$executeRaw`INSERT INTO "SignInThrottle" ("scope", "key", "failures", "lastFailureAt") VALUES (${scope}, ${key}, 0, ${now}) ON CONFLICT DO NOTHING`;
  const [locked] = await tx.$queryRaw<ThrottleRow[]>`
    SELECT "failures", "lastFailureAt", "lockedUntil" FROM "SignInThrottle" WHERE "scope" = ${scope} AND "key" = ${key} FOR UPDATE`;
  const prev: ThrottleRow | null =
    locked && locked.failures > 0
      ? { failures: Number(locked.failures), lastFailureAt: new Date(locked.lastFailureAt), lockedUntil: locked.lockedUntil ? new Date(locked.lockedUntil) : null }
      : null;
  const row = afterFailure(prev, now, throttleLimits(scope));
  await tx.signInThrottle.update({ where: { scope_key: { scope, key } }, data: row });
  const lockStarted = lockRemainingMs(row, now) > 0 && lockRemainingMs(prev, now) === 0;
  return { row, lockStarted };
}

/**
 * Records one failed sign-in for the account and the address, with its audit events (`auth.failed`, and
 * `auth.throttled` for each key whose lockout begins). Returns how long sign-in is now refused (0: not yet).
 */
export async function recordFailure(keys: Keys, now: Date, why: "invalid-credentials" | "inactive"): Promise<number> {
  return db().$transaction(async (tx) => {
    const account = await bump(tx, "account", keys.account, now);
    const address = await bump(tx, "address", keys.address, now);
    await appendAudit(tx, {
      type: "auth.failed",
      actor: "system",
      at: now,
      data: { account: keys.account, address: keys.address, why, accountFailures: account.row.failures, addressFailures: address.row.failures },
    });
    for (const [scope, r] of [["account", account], ["address", address]] as const) {
      if (!r.lockStarted) continue;
      await appendAudit(tx, {
        type: "auth.throttled",
        actor: "system",
        at: now,
        data: { scope, account: keys.account, address: keys.address, failures: r.row.failures, lockedUntil: r.row.lockedUntil!.toISOString() },
      });
    }
    // Counters quiet for the reset period and not locked are dropped: they would start over anyway.
    const stale = new Date(now.getTime() - throttleLimits("account").resetAfterMs);
    await tx.signInThrottle.deleteMany({ where: { lastFailureAt: { lt: stale }, OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }] } });
    return Math.max(lockRemainingMs(account.row, now), lockRemainingMs(address.row, now));
  });
}

/** A successful sign-in: the account's counter starts over (the address's does not); a lockout that began meanwhile stays. */
export async function recordSuccess(keys: Keys, now: Date): Promise<void> {
  await db().signInThrottle.deleteMany({
    where: { scope: "account", key: keys.account, OR: [{ lockedUntil: null }, { lockedUntil: { lte: now } }] },
  });
}
