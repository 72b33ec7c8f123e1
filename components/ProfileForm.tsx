"use client";

import { useActionState } from "react";
import type { PreferenceState } from "@/app/profile/actions";

type Props = { action: (prev: PreferenceState, formData: FormData) => Promise<PreferenceState>; email: boolean; emailConfigured: boolean };

/** The notification preference: email on or off. Desktop notifications are chosen per browser, on the inbox. */
export function ProfileForm({ action, email, emailConfigured }: Props) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" });
  return (
    <form action={formAction} className="space-y-3 rounded-lg border border-slate-200 bg-white p-4">
      <fieldset>
        <legend className="font-medium">Notification emails</legend>
        <p className="mt-1 text-sm text-slate-700">
          When a request waits for your group, a reminder before its deadline, and its outcome.
          {!emailConfigured && " Email is not set up on this server yet, so none are sent for now."}
        </p>
        <div className="mt-2 space-y-1 text-sm">
          <label className="flex items-center gap-2">
            <input type="radio" name="email" value="on" defaultChecked={email} /> Email me
          </label>
          <label className="flex items-center gap-2">
            <input type="radio" name="email" value="off" defaultChecked={!email} /> Do not email me
          </label>
        </div>
      </fieldset>
      <button type="submit" disabled={pending} className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800 disabled:opacity-60">
        {pending ? "Saving…" : "Save"}
      </button>
      {state.status !== "idle" && (
        <p role={state.status === "error" ? "alert" : "status"} className={`text-sm ${state.status === "error" ? "text-red-800" : "text-emerald-800"}`}>
          {state.message}
        </p>
      )}
    </form>
  );
}
