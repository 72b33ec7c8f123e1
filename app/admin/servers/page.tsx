import type { Metadata } from "next";
import { Notice } from "@/components/Notice";
import { Section } from "@/components/Section";
import { requireRole } from "@/lib/auth/session";
import { qualifiedName } from "@/lib/gateway/names";
import { listUpstreams, upstreamToolRows } from "@/lib/gateway/servers";
import type { ToolSnapshot } from "@/lib/gateway/source";
import { acceptToolAction, discoverAction, saveServerAction, setSummaryAction } from "./actions";

export const metadata: Metadata = { title: "Upstream servers" };
export const dynamic = "force-dynamic";

const HEALTH: Record<string, string> = {
  up: "bg-emerald-50 text-emerald-900 ring-emerald-600/30",
  down: "bg-red-50 text-red-900 ring-red-600/30",
  unknown: "bg-slate-50 text-slate-800 ring-slate-500/30",
};

const input = "mt-1 block w-full rounded border border-slate-300 px-2 py-1 text-sm";

/** The argument names a summary template may use: the accepted input schema's properties. */
function argumentNames(snapshot: ToolSnapshot): string[] {
  const p = snapshot.inputSchema?.properties;
  return p && typeof p === "object" && !Array.isArray(p) ? Object.keys(p).sort() : [];
}

/** One snapshot as a reviewer reads it: every field as text (React escapes it; upstream text is untrusted). */
function SnapshotView({ title, snapshot }: { title: string; snapshot: ToolSnapshot }) {
  return (
    <div className="min-w-0 flex-1">
      <h4 className="text-xs font-semibold tracking-wide text-slate-600 uppercase">{title}</h4>
      <p className="mt-1 text-sm whitespace-pre-wrap text-slate-900">{snapshot.description}</p>
      <pre className="mt-1 max-h-64 overflow-auto rounded bg-slate-50 p-2 text-xs">{JSON.stringify(snapshot.inputSchema, null, 2)}</pre>
      <pre className="mt-1 overflow-auto rounded bg-slate-50 p-2 text-xs">{JSON.stringify(snapshot.annotations, null, 2)}</pre>
    </div>
  );
}

export default async function ServersPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">Only admins can manage upstream servers.</Notice>;
  const params = await searchParams;
  const [servers, tools] = await Promise.all([listUpstreams(), upstreamToolRows()]);
  const note = typeof params.note === "string" ? params.note : null;
  const error = typeof params.error === "string" ? params.error : null;

  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold tracking-tight">Upstream servers</h1>
      {note && <p role="status" className="rounded bg-emerald-50 p-2 text-sm text-emerald-900">{note}</p>}
      {error && <p role="alert" className="rounded bg-red-50 p-2 text-sm text-red-900">{error}</p>}
      <Section title="Servers" id="servers-heading">
        {servers.length === 0 ? (
          <p className="text-sm text-slate-700">No upstream servers registered.</p>
        ) : (
          <ul className="divide-y divide-slate-100" aria-label="Upstream servers">
            {servers.map((s) => {
              const own = tools.filter((t) => t.serverId === s.id);
              return (
                <li key={s.id} className="space-y-2 py-3 text-sm" data-testid="upstream">
                  <div className="flex flex-wrap items-center justify-between gap-2">
                    <div>
                      <p className="font-mono font-semibold">{s.name}</p>
                      <p className="text-xs text-slate-700">
                        {s.transport === "stdio" ? `stdio: ${s.command} ${s.args.join(" ")}` : `Streamable HTTP: ${s.url}`}
                        {s.hasCredentials ? " · credentials set" : ""}
                        {s.envNames.length ? ` · environment: ${s.envNames.join(", ")}` : ""}
                        {s.root ? ` · paths (${s.pathArgs.join(", ")}) under ${s.root}` : ""}
                        {s.enabled ? "" : " · disabled"}
                      </p>
                    </div>
                    <div className="flex items-center gap-2">
                      <span className={`rounded-full px-2 py-0.5 text-xs ring-1 ring-inset ${HEALTH[s.health] ?? HEALTH.unknown}`}>
                        {s.health}
                        {s.healthNote ? `: ${s.healthNote}` : ""}
                      </span>
                      <form action={discoverAction}>
                        <input type="hidden" name="server" value={s.name} />
                        <button className="rounded border border-slate-300 px-2 py-1 text-xs">Discover tools</button>
                      </form>
                    </div>
                  </div>
                  <ul className="space-y-1" aria-label={`Tools of ${s.name}`}>
                    {own.map((t) => (
                      <li key={t.id} className="rounded border border-slate-100 p-2" data-testid="upstream-tool">
                        <p className="font-mono text-xs">
                          {qualifiedName(s.name, t.name) ?? `${t.name} (name not offered)`} · {t.status}
                          {t.summaryTemplate ? ` · summary "${t.summaryTemplate}"` : ""}
                        </p>
                        <form action={setSummaryAction} className="mt-1 flex flex-wrap items-end gap-2" data-testid="summary-form">
                          <input type="hidden" name="server" value={s.name} />
                          <input type="hidden" name="tool" value={t.name} />
                          <label className="min-w-0 flex-1 text-xs text-slate-700">
                            Summary reviewers read for {t.name} (placeholders: {argumentNames(t.accepted as ToolSnapshot).map((a) => `{${a}}`).join(" ") || "none"}; empty for the generic one)
                            <input name="template" defaultValue={t.summaryTemplate ?? ""} maxLength={200} placeholder={`e.g. ${t.name.replace(/_/g, " ")} {${argumentNames(t.accepted as ToolSnapshot)[0] ?? "argument"}}`} className={input} />
                          </label>
                          <button className="rounded border border-slate-300 px-2 py-1 text-xs">Save summary for {t.name}</button>
                        </form>
                        {t.status === "changed" && t.observed ? (
                          <div className="mt-2 space-y-2">
                            <p className="text-xs text-amber-900">Changed upstream: held out of tools/list and refused until accepted.</p>
                            <div className="flex flex-col gap-3 md:flex-row">
                              <SnapshotView title="Accepted" snapshot={t.accepted as ToolSnapshot} />
                              <SnapshotView title="Now upstream" snapshot={t.observed as ToolSnapshot} />
                            </div>
                            <form action={acceptToolAction}>
                              <input type="hidden" name="server" value={s.name} />
                              <input type="hidden" name="tool" value={t.name} />
                              <input type="hidden" name="digest" value={t.observedDigest ?? ""} />
                              <button className="rounded bg-slate-900 px-2 py-1 text-xs text-white">Accept the new version</button>
                            </form>
                          </div>
                        ) : null}
                      </li>
                    ))}
                  </ul>
                </li>
              );
            })}
          </ul>
        )}
      </Section>
      <Section title="Register or update a server" id="register-heading">
        <form action={saveServerAction} className="grid gap-3 text-sm md:grid-cols-2">
          <label>
            Name (namespace of its tools: lower-case letters, digits, dashes)
            <input name="name" required pattern="[a-z0-9][a-z0-9-]{0,31}" className={input} />
          </label>
          <label>
            Transport
            <select name="transport" className={input} defaultValue="streamable-http">
              <option value="streamable-http">Streamable HTTP</option>
              <option value="stdio">stdio (Countersign starts it)</option>
            </select>
          </label>
          <label>
            URL (Streamable HTTP)
            <input name="url" type="url" className={input} />
          </label>
          <label>
            Bearer token (write-only, stored encrypted)
            <input name="bearer" type="password" autoComplete="off" className={input} />
          </label>
          <label>
            Or a header name
            <input name="headerName" className={input} />
          </label>
          <label>
            Header value (write-only, stored encrypted)
            <input name="headerValue" type="password" autoComplete="off" className={input} />
          </label>
          <label>
            Command (stdio)
            <input name="command" className={input} />
          </label>
          <label>
            Arguments (stdio, one per line)
            <textarea name="args" rows={2} className={input} />
          </label>
          <label>
            Environment (stdio, NAME=value per line; values stored encrypted)
            <textarea name="env" rows={2} className={input} />
          </label>
          <label>
            Root folder of path arguments (optional)
            <input name="root" className={input} />
          </label>
          <label>
            Path arguments (comma-separated, e.g. path, source, destination)
            <input name="pathArgs" className={input} />
          </label>
          <label>
            Defaults from annotations: approver group for destructive tools (optional)
            <input name="defaultsApprovers" placeholder="sre" className={input} />
          </label>
          <div className="md:col-span-2">
            <button className="rounded bg-slate-900 px-3 py-1.5 text-white">Save and discover tools</button>
          </div>
        </form>
      </Section>
    </div>
  );
}
