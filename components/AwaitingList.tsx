"use client";

import Link from "next/link";
import { useActionState, useState } from "react";
import type { AwaitingItem } from "@/lib/inbox/queue";
import type { WithdrawState } from "@/lib/approvals/withdraw";
import { LocalTime } from "./LocalTime";
import { TimeLeft } from "./TimeLeft";

type Action = (prev: WithdrawState, formData: FormData) => Promise<WithdrawState>;

function Row({ item, now, action, withdrawn }: { item: AwaitingItem; now: string; action: Action; withdrawn?: string }) {
  const [current, formAction, pending] = useActionState(action, { status: "idle" } as WithdrawState);
  const state: WithdrawState = withdrawn ? { status: "done", message: withdrawn } : current;
  return (
    <li className="rounded-lg border border-slate-200 bg-white px-4 py-3 shadow-sm" data-testid="awaiting-item">
      <div className="flex flex-wrap items-start justify-between gap-x-4 gap-y-2">
        <div className="min-w-0">
          <Link href={`/requests/${item.id}`} className="font-medium text-slate-900 underline-offset-2 hover:underline [overflow-wrap:anywhere]" dir="auto">
            {item.summary}
          </Link>
          <p className="mt-0.5 text-sm text-slate-700">
            <span className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-800">{item.tool}</span>
            <span className="ml-2">
              {item.approvals} of {item.approvalsRequired} approvals · you approved <LocalTime iso={item.approvedAt} /> ·{" "}
              <TimeLeft deadline={item.deadline} serverNow={now} />
            </span>
          </p>
        </div>
        {state.status === "done" ? (
          <p role="status" className="text-sm text-slate-800">
            {state.message}
          </p>
        ) : (
          <form action={formAction} className="shrink-0">
            <input type="hidden" name="requestId" value={item.id} />
            <button
              type="submit"
              disabled={pending}
              aria-describedby={state.status === "error" ? `withdraw-error-${item.id}` : undefined}
              className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-50 disabled:opacity-60"
            >
              {pending ? "Withdrawing…" : "Withdraw my approval"}
            </button>
          </form>
        )}
      </div>
      {state.status === "error" && (
        <p id={`withdraw-error-${item.id}`} role="alert" className="mt-2 rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
          {state.message}
        </p>
      )}
    </li>
  );
}

/** Requests you approved that still wait for other approvers; you may withdraw your approval until they complete. */
export function AwaitingList({ items, now, withdraw }: { items: AwaitingItem[]; now: string; withdraw: Action }) {
  // A withdrawn request leaves the server's list at once; its row stays here, saying so, until the page is left.
  const [withdrawn, setWithdrawn] = useState<Map<string, { item: AwaitingItem; message: string }>>(() => new Map());
  const action = (item: AwaitingItem): Action => async (prev, formData) => {
    const result = await withdraw(prev, formData);
    if (result.status === "done") setWithdrawn((m) => new Map(m).set(item.id, { item, message: result.message }));
    return result;
  };
  const rows = [...items, ...[...withdrawn.values()].map((w) => w.item).filter((w) => !items.some((i) => i.id === w.id))];
  return (
    <section aria-labelledby="awaiting-heading">
      <h1 id="awaiting-heading" className="mb-1 text-xl font-semibold tracking-tight">
        Awaiting others
        <span className="ml-2 text-sm font-normal text-slate-600">({items.length})</span>
      </h1>
      <p className="mb-4 text-sm text-slate-700">
        Requests you approved that still need another approver. Until the last approval is given you may withdraw yours;
        after that it stands.
      </p>
      {rows.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white px-6 py-10 text-center" data-testid="awaiting-empty">
          <p className="font-medium text-slate-800">Nothing you approved is waiting for others.</p>
        </div>
      ) : (
        <ul className="space-y-2" aria-label="Requests awaiting other approvers">
          {rows.map((item) => (
            <Row key={item.id} item={item} now={now} action={action(item)} withdrawn={withdrawn.get(item.id)?.message} />
          ))}
        </ul>
      )}
    </section>
  );
}
