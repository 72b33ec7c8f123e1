/**
 * Ending sessions in the browser: "Sign out everywhere" on the profile page signs the person out of this browser
 * and refuses their other browser's session at its next request; an admin ending someone's sessions does the same
 * to all of theirs. A fresh sign-in afterwards works. Both are audited (user.sessions-ended).
 *
 * Sessions are short and renewable: the session cookie lives for the idle limit (default 30 minutes) and moves
 * forward with activity. A session past its idle or absolute limit is refused by tests/session-limits.test.ts (forged
 * old tokens through the real Auth.js); here, the browser's cookie is renewed by visiting pages.
 */
import { expect, test, type BrowserContext } from "@playwright/test";
import { ADMIN, personIn, ready, user } from "./support";

const SAM = user("sam.lead@countersign.test");
const SID = user("sid.sre@countersign.test");

test("signing out everywhere ends this session and the one in another browser; signing in again works", async ({ browser }, testInfo) => {
  const here = await personIn(browser, testInfo, SAM.email);
  const there = await personIn(browser, testInfo, SAM.email);

  await here.page.goto("/profile");
  await ready(here.page);
  await here.page.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(here.page).toHaveURL(/\/login/);

  // The other browser still holds its cookie, and is refused at its next request.
  await there.page.goto("/inbox");
  await expect(there.page).toHaveURL(/\/login/);
  await expect(there.page.getByLabel("Password")).toBeVisible();
  await here.context.close();
  await there.context.close();

  // A new sign-in is a session of now.
  const again = await personIn(browser, testInfo, SAM.email);
  await again.page.goto("/profile");
  await expect(again.page.getByRole("heading", { name: "Your profile" })).toBeVisible();
  await again.context.close();
});

test("an admin ends a reviewer's sessions: the reviewer's next request is signed out", async ({ browser }, testInfo) => {
  const sid = await personIn(browser, testInfo, SID.email);
  const admin = await personIn(browser, testInfo, ADMIN.email);
  await admin.page.goto("/admin/people");
  await ready(admin.page);
  const form = admin.page.getByRole("form", { name: `End the sessions of ${SID.name}` });
  await form.getByRole("button", { name: `End the sessions of ${SID.name}` }).click();
  await expect(form.getByText("Their sessions end at their next request.")).toBeVisible();

  await sid.page.goto("/inbox");
  await expect(sid.page).toHaveURL(/\/login/);
  // The admin's own session is untouched.
  await admin.page.goto("/admin/people");
  await expect(admin.page).toHaveURL(/\/admin\/people$/);
  await admin.context.close();
  await sid.context.close();
});

test("signing out signs out: the session cookie is gone and the next page asks for a sign-in (a page visit's renewal never brings it back)", async ({ browser }, testInfo) => {
  const { context, page } = await personIn(browser, testInfo, SAM.email);
  await page.goto("/profile");
  await ready(page);
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page).toHaveURL(/\/login$/);
  expect((await context.cookies()).filter((c) => c.name.includes("session-token"))).toEqual([]);
  await page.goto("/inbox");
  await expect(page).toHaveURL(/\/login/);
  await context.close();
});

/** The expiry of the browser's session cookie, in seconds since the epoch. */
async function sessionExpiry(context: BrowserContext): Promise<number> {
  const cookie = (await context.cookies()).find((c) => /(^|\.)authjs\.session-token$/.test(c.name));
  expect(cookie, "a session cookie").toBeDefined();
  return cookie!.expires;
}

test("a session is short and renewed by activity: its cookie's expiry moves forward as the reviewer visits pages", async ({ browser }, testInfo) => {
  const { context, page } = await personIn(browser, testInfo, SAM.email);
  const first = await sessionExpiry(context);
  // Short: the idle limit ahead (30 minutes by default), not a working day.
  expect(first * 1000).toBeLessThanOrEqual(Date.now() + 31 * 60_000);
  expect(first * 1000).toBeGreaterThan(Date.now() + 60_000);

  // Each page visit re-issues the cookie from the moment of the visit; visits go on until its expiry has moved (bounded).
  let later = first;
  for (let visit = 0; visit < 30 && later <= first; visit++) {
    await page.goto(visit % 2 ? "/inbox" : "/profile");
    await ready(page);
    later = await sessionExpiry(context);
  }
  expect(later).toBeGreaterThan(first);
  // Still the same person, signed in.
  await page.goto("/profile");
  await expect(page.getByRole("heading", { name: "Your profile" })).toBeVisible();
  await context.close();
});

test("a session cookie the server no longer accepts is deleted at the next page visit, and the page asks for a sign-in", async ({ browser }, testInfo) => {
  const { context, page } = await personIn(browser, testInfo, SAM.email);
  const cookie = (await context.cookies()).find((c) => /(^|\.)authjs\.session-token$/.test(c.name))!;
  const url = page.url();
  // Off the app first: a request the open page still has in flight (its auto-refresh) would come back with a
  // renewed, valid cookie and overwrite the damaged one.
  await page.goto("about:blank");
  // Damaged (its authentication tag changed), set as the server sets it: for this host only.
  await context.clearCookies({ name: cookie.name });
  await context.addCookies([{ name: cookie.name, value: `${cookie.value.slice(0, -8)}AAAAAAAA`, url, httpOnly: true, sameSite: "Lax" }]);
  await page.goto("/inbox");
  await expect(page).toHaveURL(/\/login/);
  expect((await context.cookies()).some((c) => /(^|\.)authjs\.session-token$/.test(c.name))).toBe(false);
  await context.close();
});
