/**
 * Security headers for pages: a Content-Security-Policy with a fresh nonce for each response (Next.js reads it
 * from the request and puts it on its own scripts); the fixed headers and HSTS come from next.config.ts. Authentication and authorization are not
 * decided here: every page, action and handler checks them itself.
 *
 * Wrapped in Auth.js's `auth`, which re-issues the session cookie of a session still within its limits, so visiting
 * pages and using their actions keeps a reviewer signed in (lib/auth/session-renewal.ts). The wrapper answers
 * nothing itself: a request with no session, or one that is over, goes on to the page, which sends it to sign in.
 */
import { NextResponse, type NextRequest } from "next/server";
import { withSessionRenewal } from "@/lib/auth/session-renewal";
import { cameOverHttps, newNonce, pageCsp } from "@/lib/web/security-headers";

export const proxy = withSessionRenewal((request) => securityHeaders(request));

function securityHeaders(request: NextRequest) {
  const https = cameOverHttps(request.nextUrl, request.headers);
  const csp = pageCsp({ nonce: newNonce(), https, dev: process.env.NODE_ENV === "development" });
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("Content-Security-Policy", csp);
  // The page asked for, so a page that needs a signed-in user can send the visitor back to it after sign-in.
  requestHeaders.set("x-countersign-page", `${request.nextUrl.pathname}${request.nextUrl.search}`);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", csp);
  return response;
}

export const config = {
  // Pages only: JSON routes, /mcp, /.well-known (resource metadata), the operator's endpoints (/healthz, /readyz, /metrics: never behind sign-in)
  // and static files get fixed headers from next.config.ts.
  matcher: ["/((?!api/|mcp|\\.well-known/|healthz|readyz|metrics|_next/static|_next/image|favicon.ico).*)"],
};
