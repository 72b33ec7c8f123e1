"use client";

import { useActionState, useId, useState } from "react";
import type { DelegationState } from "@/app/profile/actions";
import { ActionMessage } from "./ActionMessage";

type Person = { id: string; name: string; email: string };
export type DelegationItem = { id: string; other: Person; startsAt: string; endsAt: string; active: boolean };

type Props = {
  candidates: (Person & { groups: string[] })[];
  given: DelegationItem[];
  received: DelegationItem[];
  create: (prev: DelegationState, formData: FormData) => Promise<DelegationState>;
  end: (formData: FormData) => Promise<void>;
};

/** "2026-12-02T09:30" in the browser's time zone, for a datetime-local field. */
function localInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A datetime-local value read in the browser's time zone, as an instant ("" when incomplete). */
function instant(local: string): string {
  const d = new Date(local);
  return local && !Number.isNaN(d.getTime()) ? d.toISOString() : "";
}

function when(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A date and time typed in the browser's time zone, sent as an instant in a hidden field named `name`. */
function WhenField({ id, label, name, value, onChange }: { id: string; label: string; name: string; value: string; onChange: (v: string) => void }) {
  return (
    <div className="space-y-0.5">
      <label htmlFor={id} className="block text-xs font-medium text-slate-700">
        {label}
      </label>
      <input id={id} type="datetime-local" value={value} onChange={(e) => onChange(e.target.value)} className="block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5" />
      <input type="hidden" name={name} value={instant(value)} />
    </div>
  );
}

/** Out of office: delegate your reviews to another reviewer of your groups for a period, and end a delegation early. */
export function DelegationForm({ candidates, given, received, create, end }: Props) {
  const uid = useId();
  const [state, formAction, saving] = useActionState(create, { status: "idle" });
  const [from, setFrom] = useState(() => localInput(new Date()));
  const [until, setUntil] = useState(() => localInput(new Date(Date.now() + 7 * 86400_000)));
  return (
    <section aria-labelledby={`${uid}-h`} className="space-y-3 rounded-lg border border-slate-200 bg-white p-4 text-sm">
      <h2 id={`${uid}-h`} className="font-medium text-slate-900">
        Out of office
      </h2>
      <p className="text-slate-700">
        While you are away, another reviewer of your groups can decide your groups&apos; requests as themselves: their approval counts once, never
        on a request you asked for, and you can still decide too.
      </p>
      {given.length > 0 && (
        <ul className="space-y-1" data-testid="delegations-given">
          {given.map((d) => (
            <li key={d.id} className="flex flex-wrap items-center gap-2">
              <span>
                {d.active ? "Delegated to" : "Will delegate to"} <strong className="font-medium">{d.other.name}</strong> from {when(d.startsAt)} until {when(d.endsAt)}
              </span>
              <form action={end}>
                <input type="hidden" name="id" value={d.id} />
                <button type="submit" className="rounded-md border border-slate-300 bg-white px-2 py-1 text-xs font-medium text-slate-800 hover:bg-slate-50">
                  End delegation
                </button>
              </form>
            </li>
          ))}
        </ul>
      )}
      {received.length > 0 && (
        <ul className="space-y-1" data-testid="delegations-received">
          {received.map((d) => (
            <li key={d.id}>
              {d.active ? "You stand in for" : "You will stand in for"} <strong className="font-medium">{d.other.name}</strong> from {when(d.startsAt)} until {when(d.endsAt)}
            </li>
          ))}
        </ul>
      )}
      {candidates.length === 0 ? (
        <p className="text-slate-600">No other active reviewer shares one of your groups, so there is no one to delegate to.</p>
      ) : (
        <form action={formAction} className="grid gap-2 sm:grid-cols-3">
          <div className="space-y-0.5">
            <label htmlFor={`${uid}-to`} className="block text-xs font-medium text-slate-700">
              Delegate to
            </label>
            <select id={`${uid}-to`} name="delegateId" className="block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5" defaultValue="">
              <option value="" disabled>
                Choose a reviewer
              </option>
              {candidates.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} ({c.groups.join(", ")})
                </option>
              ))}
            </select>
          </div>
          <WhenField id={`${uid}-from`} label="From" name="startsAt" value={from} onChange={setFrom} />
          <WhenField id={`${uid}-until`} label="Until" name="endsAt" value={until} onChange={setUntil} />
          <div className="sm:col-span-3">
            <button type="submit" disabled={saving} className="rounded-md bg-indigo-700 px-3 py-1.5 font-medium text-white hover:bg-indigo-800 disabled:opacity-60">
              Delegate
            </button>
          </div>
        </form>
      )}
      <ActionMessage state={state} />
    </section>
  );
}
