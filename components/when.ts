/** A timestamp as reviewers read it, in UTC so server and browser render the same text. */
export function formatWhen(iso: string): string {
  return (
    new Date(iso).toLocaleString("en-GB", {
      timeZone: "UTC",
      day: "numeric",
      month: "short",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    }) + " UTC"
  );
}

export function formatDurationSec(sec: number): string {
  if (sec % 86400 === 0 && sec >= 86400) return `${sec / 86400} day${sec === 86400 ? "" : "s"}`;
  if (sec % 3600 === 0 && sec >= 3600) return `${sec / 3600} hour${sec === 3600 ? "" : "s"}`;
  if (sec % 60 === 0 && sec >= 60) return `${sec / 60} minute${sec === 60 ? "" : "s"}`;
  return `${sec} seconds`;
}
