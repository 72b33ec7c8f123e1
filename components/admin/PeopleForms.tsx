"use client";

import { useActionState, useEffect, useId, useRef, useState } from "react";
import type { AgentFormState, FormState } from "@/app/admin/people/actions";
import { CopyButton } from "./CopyButton";
import { ShownOnce } from "./ShownOnce";

type Action<S> = (prev: S, formData: FormData) => Promise<S>;

/**
 * The second step of a destructive action: what it ends, a button that does it (submitting confirmed=yes with the
 * same form) and one that keeps things as they are. Focus moves to the question when it appears.
 */
function Confirm({ state, question, yes, onKeep }: { state: FormState; question: string; yes: string; onKeep: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const id = useId();
  useEffect(() => ref.current?.focus(), [state]);
  return (
    <div ref={ref} tabIndex={-1} role="alertdialog" aria-label={question} aria-describedby={id} className="w-full rounded-md border border-red-300 bg-red-50 p-2 text-sm text-red-950" data-testid="confirm">
      <p className="font-medium">{question}</p>
      <p id={id}>{state.status === "confirm" ? state.message : ""}</p>
      <div className="mt-2 flex flex-wrap gap-2">
        <button type="submit" name="confirmed" value="yes" className="rounded-md bg-red-700 px-2.5 py-1 text-sm font-medium text-white hover:bg-red-800">
          {yes}
        </button>
        <button type="button" onClick={onKeep} className="rounded-md border border-slate-300 bg-white px-2.5 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100">
          Cancel
        </button>
      </div>
    </div>
  );
}

/** The state as shown: a confirmation the admin cancelled is shown as nothing. */
function useDismissable(state: FormState): [FormState, () => void] {
  const [dismissed, setDismissed] = useState<FormState | null>(null);
  return [dismissed === state ? { status: "idle" } : state, () => setDismissed(state)];
}

function Message({ state, testId }: { state: FormState; testId?: string }) {
  if (state.status === "idle" || state.status === "confirm") return null;
  return (
    <p role={state.status === "error" ? "alert" : "status"} data-testid={testId} className={`text-xs ${state.status === "error" ? "text-red-800" : "text-emerald-900"}`}>
      {state.message}
    </p>
  );
}

export type UserRow = { id: string; name: string; email: string; role: string; groups: string[]; active: boolean };

/** One user's role, groups and active flag, saved together. */
/** `source`, shown when single sign-on is on: where the user's role and groups come from (a provider's name, or "local"). */
export function UserForm({ user, self, action, source }: { user: UserRow; self: boolean; action: Action<FormState>; source?: string }) {
  const [actual, formAction, pending] = useActionState(action, { status: "idle" } as FormState);
  const [state, keep] = useDismissable(actual);
  const uid = useId();
  return (
    <form action={formAction} className="grid gap-2 sm:grid-cols-[minmax(0,2fr)_8rem_minmax(0,2fr)_auto_auto] sm:items-end" aria-label={`Edit ${user.name}`} data-testid={`user-${user.email}`}>
      <input type="hidden" name="userId" value={user.id} />
      <div className="min-w-0">
        <p className="font-medium text-slate-900">
          {user.name} {self && <span className="text-xs text-slate-600">(you)</span>}
        </p>
        <p className="truncate text-xs text-slate-700">{user.email}</p>
        {source && (
          <p className="truncate text-xs text-slate-700" data-testid="groups-source">
            groups from {source}
          </p>
        )}
      </div>
      <div>
        <label htmlFor={`${uid}-role`} className="block text-xs text-slate-700">
          Role
        </label>
        <select id={`${uid}-role`} name="role" defaultValue={user.role} className="block w-full rounded-md border border-slate-300 bg-white px-2 py-1 text-sm">
          <option value="reviewer">reviewer</option>
          <option value="requester">requester</option>
          <option value="admin">admin</option>
        </select>
      </div>
      <div>
        <label htmlFor={`${uid}-groups`} className="block text-xs text-slate-700">
          Approver groups
        </label>
        <input id={`${uid}-groups`} name="groups" defaultValue={user.groups.join(", ")} placeholder="treasury, sre" className="block w-full rounded-md border border-slate-300 px-2 py-1 text-sm" />
      </div>
      <label className="flex items-center gap-1.5 text-sm text-slate-800">
        <input type="checkbox" name="active" defaultChecked={user.active} /> Active
      </label>
      <button type="submit" disabled={pending} className="rounded-md border border-slate-300 bg-white px-3 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 disabled:opacity-60">
        {pending ? "Saving…" : "Save"}
      </button>
      <div className="sm:col-span-5">
        <Message state={state} />
        {state.status === "confirm" && <Confirm state={state} question={`Deactivate ${user.name}?`} yes={`Deactivate ${user.name}`} onKeep={keep} />}
      </div>
    </form>
  );
}

/** Create an agent: the token is shown here once. */
/** `users`: whom an agent may act for; none is chosen until the admin picks one (lib/admin/agents.ts agentOwnerChoice). */
export function CreateAgentForm({ users, defaultUserId, action }: { users: { id: string; name: string; email: string }[]; defaultUserId: string; action: Action<AgentFormState> }) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as AgentFormState);
  return (
    <div className="space-y-3">
      <form action={formAction} className="grid gap-2 sm:grid-cols-[1fr_1fr_auto] sm:items-end" aria-label="Create an agent">
        <div>
          <label htmlFor="agent-name" className="block text-xs font-medium text-slate-700">
            Agent name
          </label>
          <input id="agent-name" name="name" required placeholder="billing-bot" className="block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm" />
        </div>
        <div>
          <label htmlFor="agent-owner" className="block text-xs font-medium text-slate-700">
            Acts for
          </label>
          <select id="agent-owner" name="userId" required defaultValue={defaultUserId} className="block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm">
            <option value="" disabled>
              Choose a person…
            </option>
            {users.map((u) => (
              <option key={u.id} value={u.id}>
                {u.name} ({u.email})
              </option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={pending} className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800 disabled:opacity-60">
          {pending ? "Creating…" : "Create agent"}
        </button>
      </form>
      {state.status === "error" && (
        <p role="alert" className="text-sm text-red-800">
          {state.message}
        </p>
      )}
      {state.status === "done" && (
        <ShownOnce
          title={`Agent ${state.name} created. Copy its token now: it is shown only once and stored only as a hash.`}
          value={state.token}
          testId="new-token"
        >
          <CopyButton value={state.token} label="Copy token" />
          <p className="mt-3 font-medium">MCP client configuration (paste into the client&apos;s mcpServers settings):</p>
          <pre className="mt-1 overflow-x-auto rounded bg-white px-2 py-1 font-mono text-xs text-slate-900" data-testid="client-config">
            {state.config}
          </pre>
          <CopyButton value={state.config} label="Copy configuration" />
        </ShownOnce>
      )}
    </div>
  );
}

/** Revoke one agent's token. */
export function RevokeAgentForm({ agentId, name, action }: { agentId: string; name: string; action: Action<FormState> }) {
  const [actual, formAction, pending] = useActionState(action, { status: "idle" } as FormState);
  const [state, keep] = useDismissable(actual);
  return (
    <form action={formAction} className="flex max-w-md flex-wrap items-center gap-2" aria-label={`Revoke ${name}`}>
      <input type="hidden" name="agentId" value={agentId} />
      {state.status !== "confirm" && (
        <button type="submit" disabled={pending} className="rounded-md border border-red-300 bg-white px-2.5 py-1 text-sm font-medium text-red-800 hover:bg-red-50 disabled:opacity-60">
          {pending ? "Revoking…" : `Revoke ${name}`}
        </button>
      )}
      {state.status === "confirm" && <Confirm state={state} question={`Revoke ${name}?`} yes={`Revoke ${name} now`} onKeep={keep} />}
      <Message state={state} />
    </form>
  );
}

/** End every session of a user (they are signed out everywhere at their next request). */
export function EndSessionsForm({ userId, name, action }: { userId: string; name: string; action: Action<FormState> }) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as FormState);
  return (
    <form action={formAction} className="mt-2 flex flex-wrap items-center gap-2" aria-label={`End the sessions of ${name}`}>
      <input type="hidden" name="userId" value={userId} />
      <button type="submit" disabled={pending} className="rounded-md border border-slate-300 bg-white px-2.5 py-1 text-sm font-medium text-slate-800 hover:bg-slate-50 disabled:opacity-60">
        {pending ? "Ending sessions…" : `End the sessions of ${name}`}
      </button>
      <Message state={state} />
    </form>
  );
}

/** Enable a pending OAuth agent for a user: its client's tokens are accepted from then on. */
export function EnableAgentForm({ agentId, name, users, action }: { agentId: string; name: string; users: { id: string; name: string; email: string }[]; action: Action<FormState> }) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as FormState);
  const id = useId();
  return (
    <form action={formAction} className="flex flex-wrap items-center gap-2" aria-label={`Enable ${name}`}>
      <input type="hidden" name="agentId" value={agentId} />
      <label htmlFor={`${id}-owner`} className="text-xs font-medium text-slate-700">
        Acts for
      </label>
      <select id={`${id}-owner`} name="userId" className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm">
        {users.map((u) => (
          <option key={u.id} value={u.id}>
            {u.name} ({u.email})
          </option>
        ))}
      </select>
      <button type="submit" disabled={pending} className="rounded-md border border-emerald-300 bg-white px-2.5 py-1 text-sm font-medium text-emerald-900 hover:bg-emerald-50 disabled:opacity-60">
        {pending ? "Enabling…" : `Enable ${name}`}
      </button>
      <Message state={state} />
    </form>
  );
}
