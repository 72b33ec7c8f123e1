/**
 * Where notifications go. Each channel is an adapter at the edge behind this small interface: the outbox writes one
 * row per (request, kind, channel, recipient) for every channel that is on, and the deliverer hands each row's
 * rendered message to its channel. A later channel (Slack) implements the same interface and is listed in
 * enabledChannels(); nothing in the outbox or the deliverer changes.
 */
import type { Rendered } from "./render";
import { emailChannel } from "./email";

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
}

/** The channels configured right now (email when COUNTERSIGN_SMTP_URL is set). */
export function enabledChannels(): NotificationChannel[] {
  const email = emailChannel();
  return email ? [email] : [];
}
