/** The Protected Resource Metadata document of the MCP endpoint (RFC 9728), when OAuth is configured. */
import type { OAuthConfig } from "./oauth-config";

export type ProtectedResourceMetadata = {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ["header"];
  resource_name: string;
};

export function protectedResourceMetadata(config: Extract<OAuthConfig, { enabled: true }>): ProtectedResourceMetadata {
  return {
    resource: config.audience,
    authorization_servers: config.issuers.map((i) => i.issuer),
    scopes_supported: [...config.requiredScopes],
    bearer_methods_supported: ["header"],
    resource_name: "Countersign",
  };
}

/** GET (or HEAD) of the document: 404 while OAuth is off, so the endpoint says nothing it does not do. */
export function protectedResourceMetadataResponse(request: Request, config: OAuthConfig): Response {
  const cors = { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS" };
  if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: cors });
  if (!config.enabled) return Response.json({ error: "not_found" }, { status: 404 });
  return Response.json(protectedResourceMetadata(config), { headers: { ...cors, "Cache-Control": "max-age=300" } });
}
