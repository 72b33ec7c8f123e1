"use client";

import { useActionState, useId } from "react";
import type { AgentFormState, FormState } from "@/app/admin/people/actions";
import { ShownOnce } from "./ShownOnce";

type Action<S> = (prev: S, formData: FormData) => Promise<S>;

function Message({ state, testId }: { state: FormState; testId?: string }) {
  if (state.status === "idle") return null;
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
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as FormState);
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
      </div>
    </form>
  );
}

/** Create an agent: the token is shown here once. */
export function CreateAgentForm({ users, action }: { users: { id: string; name: string; email: string }[]; action: Action<AgentFormState> }) {
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
          <select id="agent-owner" name="userId" className="block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm">
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
        />
      )}
    </div>
  );
}

/** Revoke one agent's token. */
export function RevokeAgentForm({ agentId, name, action }: { agentId: string; name: string; action: Action<FormState> }) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as FormState);
  return (
    <form action={formAction} className="flex flex-wrap items-center gap-2" aria-label={`Revoke ${name}`}>
      <input type="hidden" name="agentId" value={agentId} />
      <button type="submit" disabled={pending} className="rounded-md border border-red-300 bg-white px-2.5 py-1 text-sm font-medium text-red-800 hover:bg-red-50 disabled:opacity-60">
        {pending ? "Revoking…" : `Revoke ${name}`}
      </button>
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
