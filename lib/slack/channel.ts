/**
 * The Slack notification channel: one message per request in COUNTERSIGN_SLACK_CHANNEL, posted when the request is
 * created and updated (chat.update) with its outcome, for everyone in the channel, whoever decided it and wherever
 * (Slack or the browser), or when it expired or was withdrawn. It is a per-request channel of the notification
 * outbox: a "created" row and an "outcome" row per request, delivered and retried like any other row, so a Slack
 * outage delays a message and loses none. The message's channel and ts are stored (SlackMessage) to update it.
 */
import { db } from "../db/client";
import { requestFacts } from "../notify/deliver";
import type { NotificationChannel } from "../notify/channels";
import { requestLink } from "../notify/settings";
import { webApi, type SlackApi } from "./api";
import { decidableInChat, storedRequirements } from "./decidable";
import { requestMessage } from "./message";
import { slackSettings } from "./settings";

/** Posts or updates the request's message for an outbox row; says why when there is nothing to do. */
export async function deliverRequestMessage(api: SlackApi, channel: string, row: { requestId: string; kind: string }, now: Date): Promise<{ skip: string } | void> {
  const facts = await requestFacts(row.requestId, requestLink(row.requestId));
  if (facts === "sealed") return { skip: "the request's stored details failed their integrity check" };
  if (!facts) return { skip: "the request no longer exists" };
  const posted = await db().slackMessage.findUnique({ where: { requestId: row.requestId } });
  const body = requestMessage(facts, decidableInChat(storedRequirements(facts, facts)), now);
  if (row.kind === "created") {
    if (posted) return { skip: "the request's message is already posted" };
    if (facts.status !== "pending") return { skip: "the request is no longer pending" };
  }
  if (posted) {
    await api.update(posted.channel, posted.ts, body);
    return;
  }
  // Not posted yet (a created row still retrying, or decided before it went out): post it as it is now.
  const at = await api.postMessage(channel, body);
  await db().slackMessage.createMany({ data: [{ requestId: row.requestId, channel: at.channel, ts: at.ts, postedAt: now }], skipDuplicates: true });
}

export function slackChannel(api?: SlackApi): NotificationChannel | null {
  const settings = slackSettings();
  if (!settings) return null;
  const slack = api ?? webApi(settings.token);
  return {
    name: "slack",
    accepts: () => false,
    async send() {
      throw new Error("the Slack channel delivers one message per request");
    },
    perRequest: {
      takes: (kind) => kind === "created" || kind === "outcome",
      deliver: (row, now) => deliverRequestMessage(slack, settings.channel, row, now),
    },
  };
}
