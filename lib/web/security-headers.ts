/**
 * The browser-facing security headers. Pages get a Content-Security-Policy with a fresh nonce per response (set by
 * proxy.ts; Next.js puts the nonce on its own scripts), so only this app's scripts run and no page can be framed.
 * Everything else (JSON routes, /mcp, static files) gets the fixed headers from next.config.ts.
 */

/** On every response. */
export const STATIC_SECURITY_HEADERS: ReadonlyArray<{ key: string; value: string }> = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=(), usb=()" },
];

/** Sent only when the request came over HTTPS (a reverse proxy says so with X-Forwarded-Proto). */
export const HSTS = { key: "Strict-Transport-Security", value: "max-age=31536000" };

/** For responses that are not pages (JSON, /mcp): nothing may load from them, and they may not be framed. */
export const NON_PAGE_CSP = "default-src 'none'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'self'";

/** A page's policy: scripts only with this response's nonce (and what they load), no framing, no plugins. */
export function pageCsp({ nonce, https, dev = false }: { nonce: string; https: boolean; dev?: boolean }): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    `style-src 'self' ${dev ? "'unsafe-inline'" : `'nonce-${nonce}'`}`,
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(https ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

/** A nonce: 128 random bits, base64. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

/** Whether the request reached us over HTTPS (directly, or per the reverse proxy's X-Forwarded-Proto). */
export function cameOverHttps(url: URL, headers: Headers): boolean {
  const forwarded = headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return forwarded ? forwarded === "https" : url.protocol === "https:";
}
