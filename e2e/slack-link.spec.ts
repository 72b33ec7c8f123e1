/**
 * A reviewer links their Slack account from the profile page: the page shows a one-time code, the reviewer sends it
 * from Slack as `/countersign link <code>` (a slash command signed as Slack signs it), the profile then shows the
 * Slack account linked, and unlinking removes it. Runs when the server has a Slack signing secret
 * (E2E_SLACK_SIGNING_SECRET, the same value as its COUNTERSIGN_SLACK_SIGNING_SECRET).
 */
import { createHmac } from "node:crypto";
import { expect, test } from "@playwright/test";
import { LENA, personIn, unique } from "./support";

const SECRET = process.env.E2E_SLACK_SIGNING_SECRET;

test.skip(!SECRET, "the server has no Slack signing secret (E2E_SLACK_SIGNING_SECRET)");

test("a reviewer links Slack with a one-time code sent as a signed slash command, and unlinks it", async ({ browser, request }, testInfo) => {
  const { context, page } = await personIn(browser, testInfo, LENA.email);
  await page.goto("/profile");
  const slack = page.getByRole("region", { name: "Slack" });
  await expect(slack).toContainText("Link your Slack account");
  await slack.getByRole("button", { name: "Get a link code" }).click();
  const command = (await slack.getByTestId("slack-link-command").textContent()) ?? "";
  expect(command).toMatch(/^\/countersign link [A-Z2-9]{5}-[A-Z2-9]{5}$/);

  const slackUser = `U${unique().replace(/[^A-Za-z0-9]/g, "").slice(0, 10).toUpperCase()}`;
  const send = async (text: string) => {
    const body = new URLSearchParams({ command: "/countersign", text, user_id: slackUser, team_id: "T0E2E" }).toString();
    const ts = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac("sha256", SECRET!).update(`v0:${ts}:${body}`).digest("hex")}`;
    return request.post("/api/slack/commands", {
      data: body,
      headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": ts, "x-slack-signature": signature },
    });
  };
  // Unsigned: refused.
  const forged = await request.post("/api/slack/commands", { data: "command=%2Fcountersign&text=link+X&user_id=U1&team_id=T1", headers: { "content-type": "application/x-www-form-urlencoded" } });
  expect(forged.status()).toBe(401);

  const linked = await send(command.replace(/^\/countersign /, ""));
  expect(linked.status()).toBe(200);
  expect(await linked.json()).toEqual({ response_type: "ephemeral", text: "Linked: you act in Slack as Lena Lead." });

  await page.reload();
  await expect(slack).toContainText(`Your Slack account (T0E2E:${slackUser}) is linked`);
  await slack.getByRole("button", { name: "Unlink Slack" }).click();
  await expect(slack.getByRole("status")).toHaveText("Your Slack account is unlinked.");
  await page.reload();
  await expect(slack).toContainText("Link your Slack account");
  await context.close();
});
