/**
 * Ending sessions in the browser: "Sign out everywhere" on the profile page signs the person out of this browser
 * and refuses their other browser's session at its next request; an admin ending someone's sessions does the same
 * to all of theirs. A fresh sign-in afterwards works. Both are audited (user.sessions-ended).
 */
import { expect, test } from "@playwright/test";
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
