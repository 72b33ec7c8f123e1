/**
 * Short, renewable reviewer sessions through the real Auth.js: session tokens encrypted with the server's secret
 * (forged here with an old sign-in or last use) are refused by `currentUser`; the session endpoint and the proxy's
 * wrapper re-issue a session within its limits with a later expiry and a later last use, and delete the cookie of
 * a session that is over. The rule itself is lib/auth/session-lifetime.ts (its edges: session-lifetime.test.ts).
 */
import { beforeEach, describe, expect, it, vi } from "vitest";

const state = vi.hoisted(() => {
  process.env.AUTH_SECRET ??= "a-session-secret-of-the-session-limits-test-000000";
  process.env.AUTH_TRUST_HOST = "true";
  return { headers: new Headers() };
});
vi.mock("next/headers", () => ({ headers: async () => state.headers, cookies: async () => new Map() }));

import { NextRequest } from "next/server";
import { decode, encode } from "next-auth/jwt";
import { handlers } from "../lib/auth/auth";
import { currentUser } from "../lib/auth/session";
import { sessionLimits } from "../lib/auth/session-lifetime";
import { endSession, purgeEndedSessions } from "../lib/auth/sessions";
import { proxy } from "../proxy";
import { resetDb, userId } from "./support/db";

const COOKIE = "authjs.session-token";
const SECRET = process.env.AUTH_SECRET!;
// What Next.js's server adds to every request before the proxy and the page see it.
const NEXT_HEADERS = { host: "localhost:3000", "x-forwarded-host": "localhost:3000", "x-forwarded-proto": "http" };
const nowSec = () => Math.floor(Date.now() / 1000);

/** A session token as Auth.js would have issued it for `email`, with the given times (seconds before now). */
async function sessionToken(email: string, times: { signedInAgo?: number; seenAgo?: number }): Promise<string> {
  const claims: Record<string, unknown> = { uid: await userId(email), email, role: "reviewer", groups: [], epoch: 0 };
  if (times.signedInAgo !== undefined) claims.signedInAt = nowSec() - times.signedInAgo;
  if (times.seenAgo !== undefined) claims.seenAt = nowSec() - times.seenAgo;
  return encode({ token: claims, secret: SECRET, salt: COOKIE, maxAge: 24 * 3600 });
}

function signedInWith(token: string): void {
  state.headers = new Headers({ ...NEXT_HEADERS, cookie: `${COOKIE}=${token}` });
}

/** The session cookie a response sets: its value and expiry (null value: the cookie is deleted). */
function sessionCookieOf(res: Response): { value: string | null; expires: number } {
  const set = res.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
  expect(set, "a Set-Cookie for the session").toBeDefined();
  const value = set!.slice(COOKIE.length + 1).split(";")[0];
  const expires = /;\s*Expires=([^;]+)/i.exec(set!)?.[1];
  const maxAge = /;\s*Max-Age=(\d+)/i.exec(set!)?.[1];
  return { value: value && maxAge !== "0" ? value : null, expires: expires ? Date.parse(expires) : 0 };
}

const SAM = "sam.lead@countersign.test";
const { idleSec, maxSec } = sessionLimits();

beforeEach(resetDb);

describe("currentUser refuses a session past its limits", () => {
  it("a session signed in a minute ago and just used is the user's", async () => {
    signedInWith(await sessionToken(SAM, { signedInAgo: 60, seenAgo: 5 }));
    expect((await currentUser())?.email).toBe(SAM);
  });

  it("past the absolute limit, even though it was used seconds ago", async () => {
    signedInWith(await sessionToken(SAM, { signedInAgo: maxSec + 1, seenAgo: 5 }));
    expect(await currentUser()).toBeNull();
  });

  it("past the idle limit, though its token has not expired", async () => {
    signedInWith(await sessionToken(SAM, { signedInAgo: idleSec + 120, seenAgo: idleSec + 60 }));
    expect(await currentUser()).toBeNull();
  });

  it("a session token without the times (signed in before sessions had limits)", async () => {
    signedInWith(await sessionToken(SAM, {}));
    expect(await currentUser()).toBeNull();
  });
});

describe("renewal: the session cookie is re-issued with a later expiry by activity", () => {
  it("the session endpoint renews a live session: later last use, same sign-in, expiry one idle limit ahead", async () => {
    const signedInAt = nowSec() - 600;
    const token = await sessionToken(SAM, { signedInAgo: 600, seenAgo: 300 });
    const res = await handlers.GET(new NextRequest("http://localhost:3000/api/auth/session", { headers: { ...NEXT_HEADERS, cookie: `${COOKIE}=${token}` } }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { user?: { email?: string } }).user?.email).toBe(SAM);
    const cookie = sessionCookieOf(res);
    expect(cookie.value).not.toBeNull();
    expect(cookie.expires).toBeGreaterThan(Date.now() + (idleSec - 60) * 1000);
    expect(cookie.expires).toBeLessThanOrEqual(Date.now() + idleSec * 1000 + 1000);
    const renewed = await decode({ token: cookie.value!, secret: SECRET, salt: COOKIE });
    expect(renewed?.signedInAt).toBe(signedInAt);
    expect(renewed?.seenAt as number).toBeGreaterThanOrEqual(nowSec() - 1);
  });

  it("the session endpoint deletes the cookie of a session that is over", async () => {
    const token = await sessionToken(SAM, { signedInAgo: maxSec + 1, seenAgo: 5 });
    const res = await handlers.GET(new NextRequest("http://localhost:3000/api/auth/session", { headers: { ...NEXT_HEADERS, cookie: `${COOKIE}=${token}` } }));
    expect(await res.json()).toBeNull();
    expect(sessionCookieOf(res).value).toBeNull();
  });

  it("the proxy re-issues the cookie of a page visit and keeps its security headers; it decides nothing else", async () => {
    const token = await sessionToken(SAM, { signedInAgo: 600, seenAgo: 300 });
    const visit = (cookie: string | null) =>
      proxy(new NextRequest("http://localhost:3000/inbox", { headers: cookie ? { ...NEXT_HEADERS, cookie: `${COOKIE}=${cookie}` } : NEXT_HEADERS }), {} as never) as Promise<Response>;
    const res = await visit(token);
    expect(res.headers.get("content-security-policy")).toMatch(/nonce-/);
    expect(res.headers.get("x-middleware-next")).toBe("1");
    const cookie = sessionCookieOf(res);
    expect((await decode({ token: cookie.value!, secret: SECRET, salt: COOKIE }))?.seenAt as number).toBeGreaterThanOrEqual(nowSec() - 1);
    // An ended session, and no session at all, go on to the page too (which sends the visitor to sign in).
    const over = await visit(await sessionToken(SAM, { signedInAgo: idleSec + 120, seenAgo: idleSec + 60 }));
    expect(over.headers.get("x-middleware-next")).toBe("1");
    expect(sessionCookieOf(over).value).toBeNull();
    const none = await visit(null);
    expect(none.headers.get("x-middleware-next")).toBe("1");
    expect(none.headers.getSetCookie().some((c) => c.startsWith(`${COOKIE}=`))).toBe(false);
  });
});

describe("signing out of one browser ends that session server-side", () => {
  it("a session whose id was signed out is refused, even with a cookie a request in flight brought back; other sessions are not", async () => {
    const sid = "sid-of-this-browser";
    const other = "sid-of-another-browser";
    const token = async (id: string) =>
      encode({ token: { uid: await userId(SAM), email: SAM, role: "reviewer", groups: [], epoch: 0, sid: id, signedInAt: nowSec() - 60, seenAt: nowSec() - 5 }, secret: SECRET, salt: COOKIE, maxAge: 24 * 3600 });
    signedInWith(await token(sid));
    expect((await currentUser())?.email).toBe(SAM);
    await endSession(sid, nowSec() - 60, new Date());
    signedInWith(await token(sid));
    expect(await currentUser()).toBeNull();
    signedInWith(await token(other));
    expect((await currentUser())?.email).toBe(SAM);
    // Forgotten once past its absolute limit: by then the session's own limits refuse it anyway.
    expect(await purgeEndedSessions(new Date(Date.now() + maxSec * 1000 + 1000))).toBe(1);
  });
});
