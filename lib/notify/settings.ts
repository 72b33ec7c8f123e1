/**
 * Notification settings, read from the environment when used (so a test or a restart changes them):
 *  - COUNTERSIGN_SMTP_URL   smtp://user:pass@host:port (smtps:// for implicit TLS); unset: email is off
 *  - COUNTERSIGN_MAIL_FROM  the From address (default "Countersign <countersign@localhost>")
 *  - COUNTERSIGN_PUBLIC_URL the base of links in messages (default http://localhost:3000)
 *  - COUNTERSIGN_REMINDERS  fractions of a request's pending window at which reviewers are reminded
 *                           (default 0.5,0.9; "none" or an empty value turns reminders off)
 */

export const DEFAULT_REMINDERS = [0.5, 0.9];

export class SettingError extends Error {}

/** The reminder fractions, sorted and distinct, each strictly between 0 and 1. */
export function parseReminders(raw: string | undefined): number[] {
  if (raw === undefined) return DEFAULT_REMINDERS;
  const text = raw.trim();
  if (text === "" || text === "none") return [];
  const values = text.split(",").map((s) => Number(s.trim()));
  for (const [i, v] of values.entries()) {
    if (!Number.isFinite(v) || v <= 0 || v >= 1) {
      throw new SettingError(`COUNTERSIGN_REMINDERS: "${text.split(",")[i].trim()}" is not a fraction between 0 and 1 (for example 0.5,0.9).`);
    }
  }
  return [...new Set(values)].sort((a, b) => a - b);
}

export function reminderFractions(): number[] {
  return parseReminders(process.env.COUNTERSIGN_REMINDERS);
}

/** The outbox kind of the reminder at a fraction: reminder-50 for 0.5. */
export function reminderKind(fraction: number): `reminder-${string}` {
  return `reminder-${Math.round(fraction * 1000) / 10}`;
}

export function smtpUrl(): string | null {
  const v = process.env.COUNTERSIGN_SMTP_URL?.trim();
  return v ? v : null;
}

export function mailFrom(): string {
  return process.env.COUNTERSIGN_MAIL_FROM?.trim() || "Countersign <countersign@localhost>";
}

export function publicUrl(): string {
  return (process.env.COUNTERSIGN_PUBLIC_URL?.trim() || "http://localhost:3000").replace(/\/+$/, "");
}

/** The link straight to a request's page. */
export function requestLink(requestId: string): string {
  return `${publicUrl()}/requests/${encodeURIComponent(requestId)}`;
}

/**
 * Checks the notification settings at start-up and says what is on, without the SMTP credentials; throws a
 * SettingError naming the variable that is wrong.
 */
export function describeNotifySettings(): string {
  const reminders = reminderFractions();
  const raw = smtpUrl();
  if (!raw) return "email notifications off (COUNTERSIGN_SMTP_URL unset)";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SettingError("COUNTERSIGN_SMTP_URL is not a URL; expected smtp://user:pass@host:port or smtps://user:pass@host:port.");
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") {
    throw new SettingError(`COUNTERSIGN_SMTP_URL must start with smtp:// or smtps://, not ${url.protocol}//.`);
  }
  try {
    new URL(publicUrl());
  } catch {
    throw new SettingError("COUNTERSIGN_PUBLIC_URL is not a URL; expected the address reviewers open, e.g. https://countersign.example.com.");
  }
  const at = reminders.length ? `reminders at ${reminders.map((f) => `${Math.round(f * 1000) / 10}%`).join(", ")} of the deadline` : "no reminders";
  return `email notifications on via ${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ""} from ${mailFrom()}, links to ${publicUrl()}, ${at}`;
}
