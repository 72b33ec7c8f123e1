import type { Metadata } from "next";
import { PolicyFileForm } from "@/components/admin/PolicyFileForm";
import { Notice } from "@/components/Notice";
import { requireRole } from "@/lib/auth/session";

export const metadata: Metadata = { title: "Policy file" };
export const dynamic = "force-dynamic";

export default async function PolicyFilePage() {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">Only admins can import or export the policy.</Notice>;
  return (
    <section aria-labelledby="file-heading" className="space-y-4">
      <div>
        <h1 id="file-heading" className="text-xl font-semibold tracking-tight">
          Policy file
        </h1>
        <p className="mt-1 text-sm text-slate-700">
          The whole policy (form rules, Cedar policies with their requirements, defaults, history windows, time zones and test cases) as one file that can live in a
          repository. Importing shows the difference first; confirming saves new versions. A file that does not parse, compile or pass its test cases changes nothing.
        </p>
        <p className="mt-2">
          <a href="/api/admin/policy/file" download="countersign.policy.yaml" className="text-sm font-medium text-indigo-800 underline" data-testid="export-link">
            Download the current policy file
          </a>
        </p>
      </div>
      <PolicyFileForm />
    </section>
  );
}
