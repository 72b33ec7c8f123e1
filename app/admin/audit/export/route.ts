import { ADMIN_ROLES, authorizeRequest } from "@/lib/auth/session";
import { exportAudit } from "@/lib/audit/export";
import { auditFilterFrom } from "@/lib/audit/filter-params";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * The audit trail as a download, streamed page by page: `?format=csv` or `?format=jsonl`, with the audit page's
 * filters. Admins only; a cross-site request is refused (the trail is private).
 */
async function handleGET(request: Request) {
  const who = await authorizeRequest(request, ADMIN_ROLES);
  if (!who.ok) return Response.json({ error: who.error }, { status: who.status, headers: { "Cache-Control": "no-store" } });
  const url = new URL(request.url);
  const format = url.searchParams.get("format") === "jsonl" ? "jsonl" : url.searchParams.get("format") === "csv" ? "csv" : null;
  if (!format) return Response.json({ error: "format must be csv or jsonl" }, { status: 400 });
  const { raw: _raw, problems, ...filter } = await auditFilterFrom(url.searchParams);
  void _raw;
  if (problems.length) return Response.json({ error: problems.join(" ") }, { status: 400, headers: { "Cache-Control": "no-store" } });
  const lines = exportAudit(format, filter);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await lines.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(body, {
    headers: {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "Content-Disposition": `attachment; filename="countersign-audit-${stamp}.${format}"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

// Each line logged while the request is handled carries its id (answered in x-request-id).
export const GET = (request: Request) => withRequestId(request, () => handleGET(request));
