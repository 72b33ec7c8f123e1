/**
 * How long ago (or how soon) a moment is, as people say it: "just now", "3 min ago", "2 h ago", "yesterday",
 * "4 days ago", "in 5 min". Past a month the absolute date says more, so it answers null. Pure: `now` is passed in.
 */
export function relativeTime(at: number, now: number): string | null {
  const ms = at - now;
  const past = ms <= 0;
  const abs = Math.abs(ms);
  const say = (n: number, unit: string) => (past ? `${n} ${unit} ago` : `in ${n} ${unit}`);
  if (abs < 45_000) return past ? "just now" : "in a few seconds";
  const min = Math.round(abs / 60_000);
  if (min < 60) return say(min, "min");
  const h = Math.round(abs / 3_600_000);
  if (h < 24) return say(h, "h");
  const d = Math.round(abs / 86_400_000);
  if (d === 1) return past ? "yesterday" : "tomorrow";
  if (d <= 30) return say(d, "days");
  return null;
}

/** The moment in the reader's own time zone (the browser's), with the zone's name: "2 Dec 2026, 07:05 CET". */
export function localTime(iso: string, timeZone?: string): string {
  return new Date(iso).toLocaleString("en-GB", {
    timeZone,
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short",
  });
}
