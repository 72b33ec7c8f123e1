/**
 * The email channel: any SMTP server, through nodemailer, configured by COUNTERSIGN_SMTP_URL (off when unset) and
 * COUNTERSIGN_MAIL_FROM. Each message carries a Message-ID derived from its outbox row, so a redelivery after a
 * crash is recognisably the same message.
 */
import nodemailer, { type Transporter } from "nodemailer";
import { SendError, type NotificationChannel, type Outgoing, type Recipient } from "./channels";
import { mailFrom, publicUrl, smtpUrl } from "./settings";

const TIMEOUT_MS = 10_000;
let cached: { url: string; transport: Transporter } | null = null;

function transport(url: string): Transporter {
  if (cached?.url !== url) {
    cached?.transport.close();
    cached = {
      url,
      transport: nodemailer.createTransport({ url, connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: TIMEOUT_MS }),
    };
  }
  return cached.transport;
}

/** A failure described without the server's text (which may echo an address or a credential) or the URL. */
function describe(e: unknown): string {
  const err = e as { responseCode?: number; code?: string; command?: string };
  if (typeof err.responseCode === "number") return `the SMTP server refused the message (${err.responseCode}${err.command ? ` after ${err.command.split(" ")[0]}` : ""})`;
  if (err.code === "EAUTH") return "the SMTP server refused the credentials";
  if (err.code === "ETIMEDOUT") return "the SMTP server timed out";
  if (err.code === "ECONNECTION" || err.code === "ESOCKET" || err.code === "ECONNREFUSED") return "could not connect to the SMTP server";
  return "the message could not be sent";
}

function messageDomain(): string {
  try {
    return new URL(publicUrl()).hostname || "countersign.local";
  } catch {
    return "countersign.local";
  }
}

export function emailChannel(): NotificationChannel | null {
  const url = smtpUrl();
  if (!url) return null;
  return {
    name: "email",
    accepts: (r: Recipient) => r.emailNotifications && r.email.includes("@"),
    async send(m: Outgoing, r: Recipient) {
      try {
        await transport(url).sendMail({
          from: mailFrom(),
          to: { name: r.name, address: r.email },
          subject: m.subject,
          text: m.text,
          html: m.html,
          messageId: `<${m.notificationId}@${messageDomain()}>`,
          headers: { "X-Countersign-Request": m.requestId, "X-Countersign-Kind": m.kind },
        });
      } catch (e) {
        throw new SendError(describe(e));
      }
    },
  };
}
