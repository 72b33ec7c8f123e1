"use client";

import { useActionState } from "react";
import type { SimpleState, WebhookFormState } from "@/app/admin/webhooks/actions";
import { ShownOnce } from "./ShownOnce";

type Action<S> = (prev: S, formData: FormData) => Promise<S>;

export function CreateWebhookForm({ events, action }: { events: readonly string[]; action: Action<WebhookFormState> }) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as WebhookFormState);
  return (
    <div className="space-y-3">
      <form action={formAction} className="space-y-2" aria-label="Register a webhook endpoint">
        <div>
          <label htmlFor="webhook-url" className="block text-xs font-medium text-slate-700">
            Endpoint URL
          </label>
          <input id="webhook-url" name="url" type="url" required placeholder="https://hooks.example.com/countersign" className="block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm" />
        </div>
        <fieldset>
          <legend className="text-xs font-medium text-slate-700">Events</legend>
          <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1">
            {events.map((e) => (
              <label key={e} className="flex items-center gap-1.5 text-sm text-slate-800">
                <input type="checkbox" name="events" value={e} defaultChecked /> <span className="font-mono text-xs">{e}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <button type="submit" disabled={pending} className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800 disabled:opacity-60">
          {pending ? "Registering…" : "Register endpoint"}
        </button>
      </form>
      {state.status === "error" && (
        <p role="alert" className="text-sm text-red-800">
          {state.message}
        </p>
      )}
      {state.status === "done" && (
        <ShownOnce title={`Registered ${state.url}. Copy the signing secret now: it is shown only once.`} value={state.secret} testId="new-secret">
          <p className="mt-1 text-xs">Receivers verify the webhook-signature header with it (Standard Webhooks).</p>
        </ShownOnce>
      )}
    </div>
  );
}

export function DeactivateWebhookForm({ webhookId, url, action }: { webhookId: string; url: string; action: Action<SimpleState> }) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as SimpleState);
  return (
    <form action={formAction} className="flex flex-wrap items-center gap-2" aria-label={`Deactivate ${url}`}>
      <input type="hidden" name="webhookId" value={webhookId} />
      <button type="submit" disabled={pending} className="rounded-md border border-red-300 bg-white px-2.5 py-1 text-sm font-medium text-red-800 hover:bg-red-50 disabled:opacity-60">
        {pending ? "Deactivating…" : "Deactivate"}
      </button>
      {state.status === "error" && <span role="alert" className="text-xs text-red-800">{state.message}</span>}
    </form>
  );
}
