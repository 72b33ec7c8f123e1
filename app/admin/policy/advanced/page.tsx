import type { Metadata } from "next";
import Link from "next/link";
import { AdvancedEditor } from "@/components/admin/AdvancedEditor";
import { Notice } from "@/components/Notice";
import { LocalTime } from "@/components/LocalTime";
import { requireRole } from "@/lib/auth/session";
import { db } from "@/lib/db/client";
import { settingsYaml } from "@/lib/policy/console-document";
import { formRuleToCedar } from "@/lib/policy/form-rules";
import { currentDocument, currentRules, documentVersion } from "@/lib/policy/store";
import { policyTools, syncCatalog } from "@/lib/tools/catalog";

export const metadata: Metadata = { title: "Advanced policy editor" };
export const dynamic = "force-dynamic";

export default async function AdvancedPolicyPage({ searchParams }: { searchParams: Promise<{ version?: string }> }) {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">Only admins can edit the policy.</Notice>;
  const { version } = await searchParams;
  const [current, rules, versions] = await Promise.all([
    currentDocument(),
    currentRules(),
    db().policyDocument.findMany({ orderBy: { version: "desc" }, take: 100, select: { version: true, createdAt: true, createdBy: true, note: true } }),
  ]);
  const wanted = version && /^\d{1,9}$/.test(version) ? Number(version) : null;
  const viewing = wanted !== null && wanted !== current.version ? await documentVersion(wanted) : null;
  const authors = await db().user.findMany({ where: { id: { in: [...new Set(versions.flatMap((v) => (v.createdBy ? [v.createdBy] : [])))] } }, select: { id: true, email: true } });
  const by = (id: string | null) => authors.find((a) => a.id === id)?.email ?? id ?? "unknown";
  await syncCatalog();
  const tools = policyTools();
  const formText = rules.map((r) => formRuleToCedar(r, tools.find((t) => t.name === r.tool)).text).join("\n\n");

  return (
    <section aria-labelledby="advanced-heading" className="space-y-4">
      <div>
        <h1 id="advanced-heading" className="text-xl font-semibold tracking-tight">
          Advanced policy editor
        </h1>
        <p className="mt-1 text-sm text-slate-700">
          The whole policy: the Cedar policies of the policy document (editable), the form rules as they compile (read-only; edit them on the{" "}
          <Link href="/admin/policy" className="text-indigo-800 underline">
            policy page
          </Link>
          ), and the defaults, history windows, time zones and test cases as YAML. Every save is a new version; old versions stay readable. See also{" "}
          <Link href="/admin/policy/file" className="text-indigo-800 underline">
            import and export
          </Link>
          .
        </p>
      </div>

      {wanted !== null && !viewing && wanted !== current.version && (
        <Notice title="No such version">There is no policy document version {wanted}.</Notice>
      )}
      {viewing ? (
        <section aria-labelledby="old-version" className="space-y-2 rounded-lg border border-amber-300 bg-amber-50 p-4" data-testid="document-version">
          <h2 id="old-version" className="font-semibold text-slate-900">
            Version {viewing.version} (read-only; the current version is {current.version})
          </h2>
          <h3 className="text-sm font-medium text-slate-800">Cedar policies</h3>
          <pre className="overflow-x-auto rounded bg-white p-2 font-mono text-xs text-slate-900">{viewing.body.policies}</pre>
          <h3 className="text-sm font-medium text-slate-800">Settings</h3>
          <pre className="overflow-x-auto rounded bg-white p-2 font-mono text-xs text-slate-900">{settingsYaml(viewing.body)}</pre>
          <Link href="/admin/policy/advanced" className="text-sm text-indigo-800 underline">
            Back to the current version
          </Link>
        </section>
      ) : (
        <AdvancedEditor version={current.version} policies={current.body.policies} settings={settingsYaml(current.body)} />
      )}

      <section aria-labelledby="form-rules" className="space-y-2">
        <h2 id="form-rules" className="font-semibold text-slate-900">
          Form rules, as compiled (read-only)
        </h2>
        <pre className="overflow-x-auto rounded-lg border border-slate-200 bg-white p-3 font-mono text-xs text-slate-900" data-testid="form-rules-cedar">
          {formText || "(no active form rules)"}
        </pre>
      </section>

      <section aria-labelledby="versions" className="space-y-2">
        <h2 id="versions" className="font-semibold text-slate-900">
          Versions
        </h2>
        <ul className="space-y-1 text-sm" data-testid="document-versions">
          {versions.map((v) => (
            <li key={v.version}>
              <Link href={`/admin/policy/advanced?version=${v.version}`} className="text-indigo-800 underline">
                Version {v.version}
              </Link>
              {v.version === current.version && " (current)"} — saved <LocalTime iso={v.createdAt.toISOString()} /> by {by(v.createdBy)}
              {v.note ? `: ${v.note}` : ""}
            </li>
          ))}
        </ul>
      </section>
    </section>
  );
}
