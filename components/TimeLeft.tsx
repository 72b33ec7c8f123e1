"use client";

import { useEffect, useState } from "react";

export function formatDuration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "less than a minute";
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  if (days > 0) return hours > 0 ? `${days}d ${hours}h` : `${days}d`;
  if (hours > 0) return mins > 0 ? `${hours}h ${mins}m` : `${hours}h`;
  return `${mins}m`;
}

/**
 * Time left until `deadline`, ticking. Starts from the server's clock (`serverNow`) so the first render matches the
 * server's HTML, then follows the browser's clock shifted by the same offset.
 */
export function TimeLeft({ deadline, serverNow }: { deadline: string; serverNow: string }) {
  const end = Date.parse(deadline);
  const [now, setNow] = useState(() => Date.parse(serverNow));
  useEffect(() => {
    const skew = Date.parse(serverNow) - Date.now();
    const tick = () => setNow(Date.now() + skew);
    const id = setInterval(tick, 15_000);
    return () => clearInterval(id);
  }, [serverNow]);
  const left = end - now;
  const urgent = left < 15 * 60_000;
  return (
    <time dateTime={deadline} title={new Date(end).toUTCString()} className={urgent ? "font-medium text-red-700" : undefined}>
      {left <= 0 ? "deadline passed" : `${formatDuration(left)} left`}
    </time>
  );
}
