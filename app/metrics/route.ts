/**
 * Prometheus metrics (lib/metrics.ts), for an operator's scraper: a bearer token from COUNTERSIGN_METRICS_TOKEN,
 * or open when COUNTERSIGN_METRICS_OPEN=1 and no token is set, else 404 (lib/ops/metrics-access.ts).
 */
import { METRICS_CONTENT_TYPE } from "@/lib/metrics";
import { metricsAccess } from "@/lib/ops/metrics-access";
import { scrapeMetrics } from "@/lib/ops/scrape";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const NO_STORE = { "Cache-Control": "no-store" };

export function GET(request: Request): Promise<Response> {
  return withRequestId(request, async () => {
    const access = metricsAccess(request.headers.get("authorization"));
    if (access === "not-found") return new Response("Not found\n", { status: 404, headers: { ...NO_STORE, "Content-Type": "text/plain; charset=utf-8" } });
    if (access === "unauthorized") {
      return new Response("Unauthorized\n", { status: 401, headers: { ...NO_STORE, "Content-Type": "text/plain; charset=utf-8", "WWW-Authenticate": 'Bearer realm="metrics"' } });
    }
    return new Response(await scrapeMetrics(), { status: 200, headers: { ...NO_STORE, "Content-Type": METRICS_CONTENT_TYPE } });
  });
}
