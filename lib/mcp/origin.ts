/**
 * Origin validation (Streamable HTTP transport, security warning): a browser request whose Origin is not one of
 * ours is refused with 403 before anything else happens, which defeats DNS rebinding and cross-site requests from
 * a page the user happens to visit. A request without Origin (a CLI agent, a server-side client) passes; bearer
 * authentication still applies to it.
 *
 * Allowed: loopback hosts (localhost, 127.0.0.1, [::1], any port) and the hosts of COUNTERSIGN_ALLOWED_ORIGINS
 * (comma-separated origins or host names) and of AUTH_URL, the app's public URL when it has one.
 */
import { localhostAllowedOrigins, originValidationResponse } from "@modelcontextprotocol/server";

function hostOf(entry: string): string | null {
  const s = entry.trim();
  if (!s) return null;
  try {
    return new URL(s.includes("://") ? s : `http://${s}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

export function allowedOriginHosts(): string[] {
  const extra = [...(process.env.COUNTERSIGN_ALLOWED_ORIGINS ?? "").split(","), process.env.AUTH_URL ?? ""].map(hostOf).filter((h): h is string => !!h);
  return [...new Set([...localhostAllowedOrigins(), ...extra])];
}

/** The SDK's 403 JSON-RPC error response when the Origin header is present and not allowed; undefined otherwise. */
export function originRefusal(request: Request): Response | undefined {
  return originValidationResponse(request, allowedOriginHosts());
}
