/**
 * Security headers for pages: a Content-Security-Policy with a fresh nonce for each response (Next.js reads it
 * from the request and puts it on its own scripts); the fixed headers and HSTS come from next.config.ts. Authentication and authorization are not
 * decided here: every page, action and handler checks them itself.
 *
 * Page requests go through Auth.js's `auth`, which re-issues the session cookie of a session still within its
 * limits, so visiting pages keeps a reviewer signed in (lib/auth/session-renewal.ts); server actions do not. The wrapper answers
 * nothing itself: a request with no session, or one that is over, goes on to the page, which sends it to sign in.
 */
import { NextResponse, type NextFetchEvent, type NextRequest } from "next/server";
import { withSessionRenewal } from "@/lib/auth/session-renewal";
import { cameOverHttps, newNonce, pageCsp } from "@/lib/web/security-headers";

// Auth.js types its wrapper for route handlers too; as a proxy it is called with the request and the fetch event.
const renewing = withSessionRenewal((request) => securityHeaders(request)) as unknown as (request: NextRequest, event: NextFetchEvent) => Promise<Response>;

export function proxy(request: NextRequest, event: NextFetchEvent) {
  // A server action may sign in or out, setting or deleting the session cookie itself: re-issuing the cookie it
  // arrived with would undo that (a signed-out person would stay signed in). So actions never renew; pages do.
  if (request.headers.has("next-action")) return securityHeaders(request);
  return renewing(request, event);
}

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
