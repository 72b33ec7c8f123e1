/** Protected Resource Metadata (RFC 9728) of the MCP endpoint; the path-suffixed form is ./mcp. */
import { oauthConfig } from "@/lib/auth/oauth-config";
import { protectedResourceMetadataResponse } from "@/lib/auth/oauth-metadata";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(request: Request): Response {
  return protectedResourceMetadataResponse(request, oauthConfig());
}
export const HEAD = GET;
export const OPTIONS = GET;
