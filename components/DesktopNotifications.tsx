"use client";

import { useEffect, useState } from "react";
import { DESKTOP_OPT_IN_KEY, desktopOptedIn } from "./inbox-arrivals";

type State = "unsupported" | "off" | "on" | "blocked";

function current(): State {
  if (typeof window === "undefined" || typeof Notification === "undefined") return "unsupported";
  if (Notification.permission === "denied") return "blocked";
  return desktopOptedIn() && Notification.permission === "granted" ? "on" : "off";
}

/** The reviewer's opt-in to desktop notifications while the app is open, remembered by this browser. */
export function DesktopNotifications() {
  const [state, setState] = useState<State | null>(null);
  useEffect(() => setState(current()), []);
  if (state === null || state === "unsupported") return null;

  async function turnOn() {
    const permission = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
    if (permission === "granted") window.localStorage.setItem(DESKTOP_OPT_IN_KEY, "on");
    setState(permission === "granted" ? "on" : permission === "denied" ? "blocked" : "off");
  }
  function turnOff() {
    window.localStorage.setItem(DESKTOP_OPT_IN_KEY, "off");
    setState("off");
  }

  return (
    <p className="text-xs text-slate-700" data-testid="desktop-notifications">
      {state === "on" && (
        <>
          Desktop notifications are on in this browser.{" "}
          <button type="button" onClick={turnOff} className="underline">
            Turn off
          </button>
        </>
      )}
      {state === "off" && (
        <button type="button" onClick={turnOn} className="rounded-md border border-slate-300 px-2 py-1 hover:bg-slate-100">
          Notify me on this desktop when a request arrives
        </button>
      )}
      {state === "blocked" && <>Desktop notifications are blocked for this site in the browser&apos;s settings.</>}
    </p>
  );
}
