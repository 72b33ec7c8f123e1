/**
 * Where notifications go. Each channel is an adapter at the edge behind this small interface: the outbox writes one
 * row per (request, kind, channel, recipient) for every channel that is on, and the deliverer hands each row's
 * rendered message to its channel. A channel that speaks to a place rather than to people (Slack: one channel
 * message per request, updated as the request is decided) says so with perRequest: the outbox then writes one row
 * per (request, kind) for it under the recipient CHANNEL_RECIPIENT, and the deliverer hands that row to
 * perRequest.deliver instead of rendering a message per person.
 */
import type { Rendered } from "./render";
import { emailChannel } from "./email";
import { slackChannel } from "../slack/channel";

export type Recipient = { id: string; name: string; email: string; emailNotifications: boolean };

export type Outgoing = Rendered & {
  /** The outbox row: stable across retries, so a receiver can tell a redelivery from a new message. */
  notificationId: string;
  requestId: string;
  kind: string;
};

/** Why a send failed, in words safe to store (never a credential or a server's whole reply). */
export class SendError extends Error {}

export interface NotificationChannel {
  readonly name: string;
  /** Whether this recipient takes notifications on this channel (their preference, an address to send to). */
  accepts(recipient: Recipient): boolean;
  send(message: Outgoing, recipient: Recipient): Promise<void>;
  /** Set for a channel with one message per request: the kinds it takes and how a row of one is delivered. */
  readonly perRequest?: PerRequestDelivery;
}

/** The recipient of a per-request channel's rows (the channel itself, not a user). */
export const CHANNEL_RECIPIENT = "channel";

export interface PerRequestDelivery {
  takes(kind: string): boolean;
  /** Delivers the row, or says why it is skipped; throws SendError to be retried. */
  deliver(row: { id: string; requestId: string; kind: string }, now: Date): Promise<{ skip: string } | void>;
}

/** The channels configured right now (email when COUNTERSIGN_SMTP_URL is set, Slack when its bot token and channel are). */
export function enabledChannels(): NotificationChannel[] {
  return [emailChannel(), slackChannel()].filter((c): c is NotificationChannel => c !== null);
}
