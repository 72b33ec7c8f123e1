/** Readiness: 200 when the database answers and its migrations are this version's, else 503 with a short reason. */
import { readiness } from "@/lib/ops/readiness";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return withRequestId(request, async () => {
    const r = await readiness();
    const headers = { "Cache-Control": "no-store" };
    return r.ready ? Response.json({ status: "ready" }, { headers }) : Response.json({ status: "not ready", reason: r.reason }, { status: 503, headers });
  });
}
