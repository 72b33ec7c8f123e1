import type { Metadata } from "next";
import { CreateWebhookForm, DeactivateWebhookForm } from "@/components/admin/WebhookForms";
import { Notice } from "@/components/Notice";
import { Section } from "@/components/Section";
import { LocalTime } from "@/components/LocalTime";
import { listWebhooks, recentDeliveries } from "@/lib/admin/read";
import { requireRole } from "@/lib/auth/session";
import { WEBHOOK_EVENTS } from "@/lib/webhooks/outbox";
import { createWebhookAction, deactivateWebhookAction } from "./actions";

export const metadata: Metadata = { title: "Webhooks" };
export const dynamic = "force-dynamic";

const STATUS: Record<string, string> = {
  pending: "bg-amber-50 text-amber-900 ring-amber-600/30",
  delivered: "bg-emerald-50 text-emerald-900 ring-emerald-600/30",
  failed: "bg-red-50 text-red-900 ring-red-600/30",
};

export default async function WebhooksPage() {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">Only admins can manage webhooks.</Notice>;
  const [hooks, deliveries] = await Promise.all([listWebhooks(), recentDeliveries(50)]);

  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold tracking-tight">Webhooks</h1>
      <Section title="Register an endpoint" id="register-heading">
        <p className="mb-3 text-sm text-slate-700">
          Countersign POSTs signed events (Standard Webhooks) to each active endpoint, retrying failures with growing delays.
        </p>
        <CreateWebhookForm events={WEBHOOK_EVENTS} action={createWebhookAction} />
      </Section>
      <Section title="Endpoints" id="endpoints-heading">
        {hooks.length === 0 ? (
          <p className="text-sm text-slate-700">No endpoints registered.</p>
        ) : (
          <ul className="divide-y divide-slate-100" aria-label="Endpoints">
            {hooks.map((h) => (
              <li key={h.id} className="flex flex-wrap items-center justify-between gap-2 py-3 text-sm" data-testid="webhook">
                <div className="min-w-0">
                  <p className="font-mono text-xs break-all text-slate-900">{h.url}</p>
                  <p className="text-xs text-slate-700">
                    {h.events.join(", ")} · {h.active ? "active" : "inactive"} · registered <LocalTime iso={h.createdAt.toISOString()} />
                  </p>
                </div>
                {h.active && <DeactivateWebhookForm webhookId={h.id} url={h.url} action={deactivateWebhookAction} />}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section title="Delivery log" id="deliveries-heading">
        {deliveries.length === 0 ? (
          <p className="text-sm text-slate-700">Nothing has been sent yet.</p>
        ) : (
          <div className="overflow-x-auto" role="region" aria-label="Webhook deliveries" tabIndex={0}>
            <table className="w-full min-w-[44rem] text-sm">
              <caption className="sr-only">Webhook deliveries, newest first</caption>
              <thead>
                <tr className="border-b border-slate-200 text-left text-xs tracking-wide text-slate-600 uppercase">
                  <th scope="col" className="px-2 py-2 font-medium">Created</th>
                  <th scope="col" className="px-2 py-2 font-medium">Event</th>
                  <th scope="col" className="px-2 py-2 font-medium">Endpoint</th>
                  <th scope="col" className="px-2 py-2 font-medium">Status</th>
                  <th scope="col" className="px-2 py-2 font-medium">Attempts</th>
                  <th scope="col" className="px-2 py-2 font-medium">Last response</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.map((d) => (
                  <tr key={d.id} className="border-b border-slate-100 align-top last:border-0" data-testid="delivery">
                    <td className="px-2 py-2 text-xs whitespace-nowrap text-slate-700"><LocalTime iso={d.createdAt.toISOString()} /></td>
                    <td className="px-2 py-2 font-mono text-xs">
                      {d.eventType}
                      <span className="block text-slate-600">{d.id}</span>
                    </td>
                    <td className="px-2 py-2 font-mono text-xs break-all">{d.webhook.url}</td>
                    <td className="px-2 py-2">
                      <span className={`rounded-full px-2 py-0.5 text-xs ring-1 ring-inset ${STATUS[d.status] ?? ""}`}>{d.status}</span>
                      {d.status === "pending" && d.attempts > 0 && <span className="block text-xs text-slate-600">next <LocalTime iso={d.nextAttemptAt.toISOString()} /></span>}
                      {d.deliveredAt && <span className="block text-xs text-slate-600"><LocalTime iso={d.deliveredAt.toISOString()} /></span>}
                    </td>
                    <td className="px-2 py-2 text-slate-800">{d.attempts}</td>
                    <td className="px-2 py-2 text-xs text-slate-800">{d.lastError ?? (d.lastStatus ? `HTTP ${d.lastStatus}` : "—")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </div>
  );
}
