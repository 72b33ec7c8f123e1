/**
 * The Slack Web API behind a small interface: the calls Countersign makes (chat.postMessage, chat.update,
 * chat.postEphemeral), through @slack/web-api against COUNTERSIGN_SLACK_API_URL. The client does not retry by
 * itself: a failed call fails at once and the notification outbox retries it later. Errors are described without
 * the token or Slack's whole reply.
 */
import { WebClient, ErrorCode } from "@slack/web-api";
import { SendError } from "../notify/channels";
import { slackApiUrl } from "./settings";
import type { SlackMessageBody } from "./message";

export interface SlackApi {
  postMessage(channel: string, body: SlackMessageBody): Promise<{ channel: string; ts: string }>;
  update(channel: string, ts: string, body: SlackMessageBody): Promise<void>;
  postEphemeral(channel: string, user: string, text: string): Promise<void>;
}

const TIMEOUT_MS = 10_000;
let cached: { key: string; client: WebClient } | null = null;

function client(token: string): WebClient {
  const url = slackApiUrl();
  const key = `${url}\n${token}`;
  if (cached?.key !== key) {
    cached = { key, client: new WebClient(token, { slackApiUrl: url, retryConfig: { retries: 0 }, timeout: TIMEOUT_MS, rejectRateLimitedCalls: true }) };
  }
  return cached.client;
}

/** A failure in words safe to store: Slack's error code (e.g. channel_not_found), never the token. */
export function describeSlackError(e: unknown): string {
  const err = e as { code?: string; data?: { error?: unknown }; statusCode?: number };
  if (err.code === ErrorCode.PlatformError && typeof err.data?.error === "string") return `Slack refused the call (${err.data.error.replace(/[^a-z0-9_]/gi, "").slice(0, 60)})`;
  if (err.code === ErrorCode.RateLimitedError) return "Slack rate-limited the call";
  if (err.code === ErrorCode.HTTPError) return `Slack answered HTTP ${typeof err.statusCode === "number" ? err.statusCode : "error"}`;
  return "could not reach Slack";
}

export function webApi(token: string): SlackApi {
  const call = async <T>(f: (c: WebClient) => Promise<T>): Promise<T> => {
    try {
      return await f(client(token));
    } catch (e) {
      throw new SendError(describeSlackError(e));
    }
  };
  return {
    async postMessage(channel, body) {
      const res = await call((c) => c.chat.postMessage({ channel, text: body.text, blocks: body.blocks as never, unfurl_links: false, unfurl_media: false }));
      if (!res.ts || !res.channel) throw new SendError("Slack did not say where the message was posted");
      return { channel: res.channel, ts: res.ts };
    },
    async update(channel, ts, body) {
      await call((c) => c.chat.update({ channel, ts, text: body.text, blocks: body.blocks as never }));
    },
    async postEphemeral(channel, user, text) {
      await call((c) => c.chat.postEphemeral({ channel, user, text }));
    },
  };
}
