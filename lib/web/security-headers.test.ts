/** The page policy: nonce-only scripts, no framing, no plugins, no <base> hijack; HTTPS detection. */
import { describe, expect, it } from "vitest";
import { cameOverHttps, newNonce, pageCsp } from "./security-headers";

describe("page Content-Security-Policy", () => {
  it("allows scripts only with the nonce, and forbids framing, plugins and <base>", () => {
    const csp = pageCsp({ nonce: "abc123", https: false });
    expect(csp).toContain("script-src 'self' 'nonce-abc123' 'strict-dynamic'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    for (const d of ["frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "form-action 'self'"]) expect(csp).toContain(d);
    expect(csp).not.toContain("upgrade-insecure-requests");
    expect(pageCsp({ nonce: "n", https: true })).toContain("upgrade-insecure-requests");
  });

  it("uses a fresh 128-bit nonce each time", () => {
    const a = newNonce();
    expect(Buffer.from(a, "base64")).toHaveLength(16);
    expect(newNonce()).not.toBe(a);
  });

  it("counts a request as HTTPS from the reverse proxy's X-Forwarded-Proto, else from the URL", () => {
    expect(cameOverHttps(new URL("http://h/"), new Headers({ "x-forwarded-proto": "https" }))).toBe(true);
    expect(cameOverHttps(new URL("https://h/"), new Headers({ "x-forwarded-proto": "http" }))).toBe(false);
    expect(cameOverHttps(new URL("https://h/"), new Headers())).toBe(true);
    expect(cameOverHttps(new URL("http://h/"), new Headers())).toBe(false);
  });
});
