"use client";

import { useEffect, useState } from "react";

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** "2d 03h 04m", "3h 04m 05s", "4m 05s": seconds are shown in the last day. */
export function formatCountdown(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(s / 86400);
  const hours = Math.floor((s % 86400) / 3600);
  const mins = Math.floor((s % 3600) / 60);
  const secs = s % 60;
  if (days > 0) return `${days}d ${pad(hours)}h ${pad(mins)}m`;
  if (hours > 0) return `${hours}h ${pad(mins)}m ${pad(secs)}s`;
  return `${mins}m ${pad(secs)}s`;
}

/**
 * A live countdown to `until`, ticking every second. Starts from the server's clock (`serverNow`) so the first
 * render matches the server's HTML, then follows the browser's clock shifted by the same offset. `role="timer"`
 * keeps screen readers from announcing every tick.
 */
export function Countdown({ until, serverNow, passed = "passed", testId }: { until: string; serverNow: string; passed?: string; testId?: string }) {
  const end = Date.parse(until);
  const [now, setNow] = useState(() => Date.parse(serverNow));
  useEffect(() => {
    const skew = Date.parse(serverNow) - Date.now();
    const tick = () => setNow(Date.now() + skew);
    tick();
    const id = setInterval(tick, 1_000);
    return () => clearInterval(id);
  }, [serverNow]);
  const left = end - now;
  const urgent = left > 0 && left < 15 * 60_000;
  return (
    <span role="timer" data-testid={testId} className={urgent ? "font-medium text-red-700" : undefined}>
      <time dateTime={until} title={new Date(end).toUTCString()} className="tabular-nums">
        {left <= 0 ? passed : `${formatCountdown(left)} left`}
      </time>
    </span>
  );
}
