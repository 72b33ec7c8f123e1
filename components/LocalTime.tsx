"use client";

import { useEffect, useState } from "react";
import { localTime, relativeTime } from "@/lib/web/relative-time";
import { formatWhen } from "./when";

/**
 * A moment as the reviewer reads it: in their own time zone, with how long ago (or how soon) it is, "2 Dec 2026,
 * 08:05 CET (3 min ago)". The
 * server does not know the reader's zone, so the server's HTML (and the first render in the browser, so hydration
 * matches) shows the stable UTC text; the browser then switches to its own zone and keeps the relative text fresh.
 */
export function LocalTime({ iso, className }: { iso: string; className?: string }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const id = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(id);
  }, []);
  if (now === null) {
    const utc = formatWhen(iso);
    return (
      <time dateTime={iso} title={utc} className={className}>
        {utc}
      </time>
    );
  }
  const local = localTime(iso);
  const relative = relativeTime(Date.parse(iso), now);
  return (
    <time dateTime={iso} title={local} className={className} data-local="true">
      {relative ? `${local} (${relative})` : local}
    </time>
  );
}
