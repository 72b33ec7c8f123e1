/** Liveness: the process is up and serving. Touches no database. */
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return withRequestId(request, async () => Response.json({ status: "ok" }, { headers: { "Cache-Control": "no-store" } }));
}
