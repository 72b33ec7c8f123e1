"use client";

import { useEffect, useRef } from "react";

type Props =
  /** On the inbox: move between requests and open one. */
  | { scope: "inbox" }
  /** On a request: step through the inbox, approve, deny. */
  | { scope: "request"; requestId: string };

const SHORTCUTS: { keys: string[]; what: string; scope: "inbox" | "request" | "both" }[] = [
  { keys: ["j", "n"], what: "Next request", scope: "both" },
  { keys: ["k", "p"], what: "Previous request", scope: "both" },
  { keys: ["Enter"], what: "Open the selected request", scope: "inbox" },
  { keys: ["a"], what: "Approve (the same as pressing Approve)", scope: "request" },
  { keys: ["d"], what: "Deny: moves to the reason, then press Deny", scope: "request" },
  { keys: ["?"], what: "Show these shortcuts", scope: "both" },
];

/** Typing in a field, a button with a modifier, or another dialog open: the key is not a shortcut. */
function ignored(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented || e.isComposing) return true;
  const t = e.target as HTMLElement | null;
  if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return true;
  return !!document.querySelector("dialog[open]:not([data-shortcuts-help])");
}

/** The decision buttons of the request page's form, found by their name and value (what they submit). */
function decisionButton(value: "approve" | "deny"): HTMLButtonElement | null {
  return document.querySelector<HTMLButtonElement>(`button[name="decision"][value="${value}"]`);
}

function moveInInbox(step: 1 | -1): void {
  const rows = Array.from(document.querySelectorAll<HTMLAnchorElement>('[data-testid="inbox-item"]'));
  if (rows.length === 0) return;
  const at = rows.indexOf(document.activeElement as HTMLAnchorElement);
  const next = at === -1 ? (step === 1 ? 0 : rows.length - 1) : Math.min(Math.max(at + step, 0), rows.length - 1);
  rows[next]!.focus();
  rows[next]!.scrollIntoView({ block: "nearest" });
}

/**
 * Keyboard shortcuts for deciding a queue: j/n and k/p step through requests, a approves, d moves to the denial's
 * reason, ? lists them. Never while typing in a field. It only presses the page's own buttons and follows links, so
 * everything a click would check is checked the same way.
 */
export function KeyboardShortcuts(props: Props) {
  const help = useRef<HTMLDialogElement>(null);
  const requestId = props.scope === "request" ? props.requestId : null;

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (ignored(e)) return;
      const step = e.key === "j" || e.key === "n" ? 1 : e.key === "k" || e.key === "p" ? -1 : 0;
      if (e.key === "?") {
        e.preventDefault();
        if (help.current?.open) help.current.close();
        else help.current?.showModal();
        return;
      }
      if (help.current?.open) return;
      if (step !== 0) {
        e.preventDefault();
        // /inbox/next answers with a redirect, so this is a page load rather than a client-side navigation.
        if (requestId) window.location.assign(`/inbox/next?from=${requestId}${step === -1 ? "&dir=previous" : ""}`);
        else moveInInbox(step);
        return;
      }
      if (!requestId) return;
      if (e.key === "a") {
        const approve = decisionButton("approve");
        if (approve && !approve.disabled) {
          e.preventDefault();
          approve.click();
        }
      } else if (e.key === "d") {
        const reason = document.querySelector<HTMLTextAreaElement>('textarea[name="comment"]');
        if (reason && decisionButton("deny")) {
          e.preventDefault();
          reason.focus();
        }
      }
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [requestId]);

  const shown = SHORTCUTS.filter((s) => s.scope === "both" || s.scope === props.scope);
  return (
    <>
      <button
        type="button"
        onClick={() => help.current?.showModal()}
        className="text-xs text-slate-700 underline underline-offset-2 hover:text-slate-900"
        aria-keyshortcuts="?"
      >
        Keyboard shortcuts
      </button>
      <dialog
        ref={help}
        data-shortcuts-help
        aria-labelledby="shortcuts-heading"
        className="m-auto w-full max-w-sm rounded-lg border border-slate-200 bg-white p-5 text-slate-900 shadow-xl backdrop:bg-slate-900/40"
      >
        <h2 id="shortcuts-heading" className="text-base font-semibold">
          Keyboard shortcuts
        </h2>
        <p className="mt-1 text-xs text-slate-700">Not while typing in a field.</p>
        <dl className="mt-3 space-y-1.5 text-sm">
          {shown.map((s) => (
            <div key={s.what} className="flex items-baseline justify-between gap-4">
              <dt className="flex gap-1">
                {s.keys.map((k) => (
                  <kbd key={k} className="rounded border border-slate-300 bg-slate-50 px-1.5 font-mono text-xs">
                    {k}
                  </kbd>
                ))}
              </dt>
              <dd className="text-right text-slate-800">{s.what}</dd>
            </div>
          ))}
        </dl>
        <form method="dialog" className="mt-4 text-right">
          <button type="submit" className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800">
            Close
          </button>
        </form>
      </dialog>
    </>
  );
}
