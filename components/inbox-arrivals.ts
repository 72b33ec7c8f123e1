"use client";

import { useEffect, useRef, useState } from "react";

/** The tab title for a count waiting: "(3) Inbox · Countersign", or "Inbox · Countersign" when nothing waits. */
export function inboxTitle(total: number, capped: boolean): string {
  return total > 0 ? `(${total}${capped ? "+" : ""}) Inbox · Countersign` : "Inbox · Countersign";
}

/** The browser's opt-in to desktop notifications, kept per browser. */
export const DESKTOP_OPT_IN_KEY = "countersign.desktop-notifications";

export function desktopOptedIn(): boolean {
  try {
    return window.localStorage.getItem(DESKTOP_OPT_IN_KEY) === "on";
  } catch {
    return false;
  }
}

type Item = { id: string; summary: string; approverGroup: string };

/**
 * Requests that arrived while the page is open: the ids seen on the first load of a view (a filter, a sort, a page)
 * are the baseline; every id a later refresh brings that was not seen before is new. New ones are kept until the
 * view changes, and each is announced once on the desktop when this browser opted in and the permission is granted.
 */
export function useArrivals(view: string, items: Item[]): Set<string> {
  const seen = useRef<{ view: string; ids: Set<string> } | null>(null);
  const [fresh, setFresh] = useState<{ view: string; ids: Set<string> }>({ view, ids: new Set() });
  useEffect(() => {
    if (!seen.current || seen.current.view !== view) {
      seen.current = { view, ids: new Set(items.map((i) => i.id)) };
      setFresh({ view, ids: new Set() });
      return;
    }
    const arrived = items.filter((i) => !seen.current!.ids.has(i.id));
    if (arrived.length === 0) return;
    for (const i of arrived) seen.current.ids.add(i.id);
    setFresh((prev) => ({ view, ids: new Set([...(prev.view === view ? prev.ids : []), ...arrived.map((i) => i.id)]) }));
    announce(arrived);
  }, [view, items]);
  return fresh.view === view ? fresh.ids : new Set();
}

function announce(arrived: Item[]): void {
  if (typeof Notification === "undefined" || Notification.permission !== "granted" || !desktopOptedIn()) return;
  for (const item of arrived.slice(0, 3)) {
    const n = new Notification("Approval request waiting", {
      body: `${item.summary.slice(0, 180)} (${item.approverGroup})`,
      tag: `countersign-request-${item.id}`,
    });
    n.onclick = () => {
      window.focus();
      window.location.assign(`/requests/${encodeURIComponent(item.id)}`);
    };
  }
  if (arrived.length > 3) new Notification("Approval requests waiting", { body: `${arrived.length - 3} more waiting in your inbox`, tag: "countersign-more" });
}
