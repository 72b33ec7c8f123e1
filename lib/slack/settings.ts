/**
 * Slack settings, read from the environment when used (off when unset):
 *  - COUNTERSIGN_SLACK_BOT_TOKEN       the app's bot token (xoxb-...); with the channel, turns channel messages on
 *  - COUNTERSIGN_SLACK_CHANNEL         the channel id the messages go to (C0123...)
 *  - COUNTERSIGN_SLACK_SIGNING_SECRET  the app's signing secret; turns the interaction and command endpoints on
 *  - COUNTERSIGN_SLACK_API_URL         the Web API base (default https://slack.com/api/)
 * None of them is ever logged or written to the audit trail.
 */
import { SettingError } from "../notify/settings";

export type SlackSettings = { token: string; channel: string; apiUrl: string };

function env(name: string): string | null {
  const v = process.env[name]?.trim();
  return v ? v : null;
}

export function slackApiUrl(): string {
  const v = env("COUNTERSIGN_SLACK_API_URL") ?? "https://slack.com/api/";
  return v.endsWith("/") ? v : `${v}/`;
}

/** The bot's settings when channel messages are on (token and channel both set), else null. */
export function slackSettings(): SlackSettings | null {
  const token = env("COUNTERSIGN_SLACK_BOT_TOKEN");
  const channel = env("COUNTERSIGN_SLACK_CHANNEL");
  if (!token || !channel) return null;
  return { token, channel, apiUrl: slackApiUrl() };
}

/** The signing secret when interactions are on, else null. */
export function slackSigningSecret(): string | null {
  return env("COUNTERSIGN_SLACK_SIGNING_SECRET");
}

/** What is on, in words without any secret; throws a SettingError when COUNTERSIGN_SLACK_API_URL is not a URL. */
export function describeSlackSettings(): string {
  const s = slackSettings();
  let host = "";
  try {
    const u = new URL(slackApiUrl());
    if (u.protocol !== "https:" && u.protocol !== "http:") throw new Error("scheme");
    host = u.host;
  } catch {
    throw new SettingError("COUNTERSIGN_SLACK_API_URL is not an http(s) URL; expected e.g. https://slack.com/api/.");
  }
  const secret = slackSigningSecret();
  if (!s && !secret) return "Slack off (COUNTERSIGN_SLACK_BOT_TOKEN / COUNTERSIGN_SLACK_CHANNEL unset)";
  return `Slack messages ${s ? `on to channel ${s.channel} via ${host}` : "off"}, interactions ${secret ? "on" : "off (COUNTERSIGN_SLACK_SIGNING_SECRET unset)"}`;
}
