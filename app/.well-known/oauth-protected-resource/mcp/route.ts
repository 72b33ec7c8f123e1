/** Protected Resource Metadata (RFC 9728) for the resource /mcp, at its path-suffixed well-known URL. */
import { oauthConfig } from "@/lib/auth/oauth-config";
import { protectedResourceMetadataResponse } from "@/lib/auth/oauth-metadata";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(request: Request): Response {
  return protectedResourceMetadataResponse(request, oauthConfig());
}
export const HEAD = GET;
export const OPTIONS = GET;
