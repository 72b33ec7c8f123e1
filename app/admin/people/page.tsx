import type { Metadata } from "next";
import { CreateAgentForm, EnableAgentForm, EndSessionsForm, RevokeAgentForm, UserForm } from "@/components/admin/PeopleForms";
import { Notice } from "@/components/Notice";
import { Section } from "@/components/Section";
import { LocalTime } from "@/components/LocalTime";
import { agentOwnerChoice } from "@/lib/admin/agents";
import { listAgents, listUsers } from "@/lib/admin/read";
import { requireRole } from "@/lib/auth/session";
import { groupsSourceLabel, ssoProviders } from "@/lib/auth/sso-config";
import { createAgentAction, enableAgentAction, endSessionsAction, revokeAgentAction, updateUserAction } from "./actions";

export const metadata: Metadata = { title: "People and agents" };
export const dynamic = "force-dynamic";

export default async function PeoplePage() {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">Only admins can manage people and agents.</Notice>;
  const [users, agents] = await Promise.all([listUsers(), listAgents()]);
  const activeUsers = users.filter((u) => u.active).map((u) => ({ id: u.id, name: u.name, email: u.email }));
  const owners = agentOwnerChoice(users);
  const sso = ssoProviders().length > 0;

  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold tracking-tight">People and agents</h1>
      <Section title="People" id="people-heading">
        <p className="mb-3 text-sm text-slate-700">
          Roles and approver groups take effect at once for new reviews; approvals already given count only if their reviewer is
          still eligible when the task executes.
          {sso && " A user whose groups come from a single sign-on provider gets role and groups from its claims again at every sign-in."}
        </p>
        <ul className="divide-y divide-slate-100">
          {users.map((u) => (
            <li key={u.id} className="py-3">
              <UserForm user={u} self={u.id === admin.id} action={updateUserAction} source={sso ? groupsSourceLabel(u.groupsSource) : undefined} />
              {u.id !== admin.id && <EndSessionsForm userId={u.id} name={u.name} action={endSessionsAction} />}
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Agents and tokens" id="agents-heading">
        <CreateAgentForm users={owners.options.map((u) => ({ id: u.id, name: u.name, email: u.email }))} defaultUserId={owners.defaultUserId} action={createAgentAction} />
        <ul className="mt-4 divide-y divide-slate-100" aria-label="Agents">
          {agents.map((a) => (
            <li key={a.id} className="flex flex-wrap items-center justify-between gap-2 py-3 text-sm" data-testid={`agent-${a.name}`}>
              <div>
                <p className="font-medium text-slate-900">
                  {a.name}{" "}
                  {a.revokedAt ? (
                    <span className="rounded-full bg-red-50 px-2 py-0.5 text-xs text-red-900 ring-1 ring-red-600/20 ring-inset">revoked <LocalTime iso={a.revokedAt.toISOString()} /></span>
                  ) : a.pendingSince ? (
                    <span className="rounded-full bg-amber-50 px-2 py-0.5 text-xs text-amber-900 ring-1 ring-amber-600/20 ring-inset">pending since <LocalTime iso={a.pendingSince.toISOString()} /></span>
                  ) : (
                    <span className="rounded-full bg-emerald-50 px-2 py-0.5 text-xs text-emerald-900 ring-1 ring-emerald-600/20 ring-inset">active</span>
                  )}
                </p>
                {a.oauthIssuer ? (
                  <p className="text-xs text-slate-700">
                    {a.pendingSince ? "acts for nobody until enabled" : `acts for ${a.user.name}`} · OAuth client <span className="font-mono">{a.oauthClientId}</span> of{" "}
                    <span className="font-mono">{a.oauthIssuer}</span> · first seen <LocalTime iso={a.createdAt.toISOString()} />
                  </p>
                ) : (
                  <p className="text-xs text-slate-700">
                    acts for {a.user.name} · token <span className="font-mono">{a.tokenPrefix}…</span> · created <LocalTime iso={a.createdAt.toISOString()} />
                  </p>
                )}
              </div>
              <div className="flex flex-wrap items-center gap-2">
                {!a.revokedAt && a.pendingSince && <EnableAgentForm agentId={a.id} name={a.name} users={activeUsers} action={enableAgentAction} />}
                {!a.revokedAt && <RevokeAgentForm agentId={a.id} name={a.name} action={revokeAgentAction} />}
              </div>
            </li>
          ))}
        </ul>
      </Section>
    </div>
  );
}
