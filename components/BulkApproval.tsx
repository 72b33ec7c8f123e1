"use client";

import Link from "next/link";
import { useRef, useState, useTransition } from "react";
import type { InboxItem } from "@/lib/inbox/inbox";
import type { BulkState } from "@/lib/tasks/approve-many";

type Props = {
  selected: InboxItem[];
  onDone: () => void;
  action: (items: { requestId: string; argumentsDigest: string }[]) => Promise<BulkState>;
};

/**
 * Approving the selected requests together: a summary of every request to confirm first, then what happened to
 * each one (each is approved on its own on the server, and one refusal does not stop the others).
 */
export function BulkApproval({ selected, onDone, action }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [state, setState] = useState<BulkState>({ status: "idle" });
  const [pending, startTransition] = useTransition();
  const [sent, setSent] = useState<InboxItem[]>([]);

  function confirm() {
    const items = selected;
    setSent(items);
    startTransition(async () => {
      const result = await action(items.map((i) => ({ requestId: i.id, argumentsDigest: i.argumentsDigest })));
      setState(result);
      dialog.current?.close();
      onDone();
    });
  }

  const n = selected.length;
  const results = state.status === "done" ? state.results : [];
  const approved = results.filter((r) => r.ok).length;
  return (
    <div className="mb-3 space-y-2">
      {n > 0 && (
        <div className="flex flex-wrap items-center gap-3 rounded-lg border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-950">
          <span>
            {n} selected to approve together
          </span>
          <button
            type="button"
            onClick={() => dialog.current?.showModal()}
            className="rounded-md bg-emerald-800 px-3 py-1.5 font-medium text-white hover:bg-emerald-900"
          >
            Approve {n} selected…
          </button>
          <button type="button" onClick={onDone} className="text-emerald-950 underline underline-offset-2">
            Clear selection
          </button>
        </div>
      )}
      <dialog
        ref={dialog}
        aria-labelledby="bulk-heading"
        aria-describedby="bulk-note"
        className="m-auto w-full max-w-lg rounded-lg border border-slate-200 bg-white p-5 text-slate-900 shadow-xl backdrop:bg-slate-900/40"
        data-testid="bulk-summary"
      >
        <h2 id="bulk-heading" className="text-base font-semibold">
          Approve {n === 1 ? "this request" : `these ${n} requests`}?
        </h2>
        <p id="bulk-note" className="mt-1 text-sm text-slate-700">
          Each one is approved on its own, for exactly the arguments you were shown, and recorded in the audit trail by
          itself. Each needs only your approval, so approving runs it.
        </p>
        <ul className="mt-3 max-h-72 space-y-1.5 overflow-y-auto text-sm">
          {selected.map((i) => (
            <li key={i.id} className="rounded border border-slate-200 px-2 py-1.5">
              <p className="font-medium [overflow-wrap:anywhere]" dir="auto">
                {i.summary}
              </p>
              <p className="text-xs text-slate-700">
                {i.tool} · asked by {i.requesterName} via {i.agentName}
              </p>
            </li>
          ))}
        </ul>
        <div className="mt-4 flex justify-end gap-2">
          <button type="button" onClick={() => dialog.current?.close()} className="rounded-md border border-slate-300 px-3 py-1.5 text-sm">
            Cancel
          </button>
          <button
            type="button"
            onClick={confirm}
            disabled={pending || n === 0}
            className="rounded-md bg-emerald-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-emerald-900 disabled:opacity-60"
          >
            {pending ? "Approving…" : `Approve ${n === 1 ? "1 request" : `${n} requests`}`}
          </button>
        </div>
      </dialog>
      <div role="status" aria-live="polite">
        {state.status === "error" && <p className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">{state.message}</p>}
        {state.status === "done" && (
          <div className="rounded-lg border border-slate-200 bg-white px-3 py-2 text-sm" data-testid="bulk-results">
            <p className="font-medium">
              Approved {approved} of {results.length}
              {approved < results.length ? "; the others were not approved:" : "."}
            </p>
            <ul className="mt-1 space-y-1">
              {results.map((r) => (
                <li key={r.requestId} className={r.ok ? "text-emerald-900" : "text-red-800"} data-testid="bulk-result" data-ok={r.ok ? "true" : "false"}>
                  <span aria-hidden>{r.ok ? "✓ " : "✗ "}</span>
                  <Link href={`/requests/${r.requestId}`} className="underline underline-offset-2" dir="auto">
                    {sent.find((i) => i.id === r.requestId)?.summary ?? r.summary}
                  </Link>
                  : {r.message}
                </li>
              ))}
            </ul>
          </div>
        )}
      </div>
    </div>
  );
}
