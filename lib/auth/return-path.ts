/**
 * Where to land after signing in: the page a signed-out visitor asked for, carried as ?next=. Only a same-origin
 * relative path is followed (it starts with one "/", has no backslash or control character, and resolves to this
 * origin); anything else (another site, "//evil.example", "/\\evil.example", "javascript:") falls back to the inbox.
 */
export const DEFAULT_RETURN_PATH = "/inbox";
const MAX = 2_000;
const BASE = "http://countersign.invalid";

export function safeReturnPath(raw: unknown): string | null {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX) return null;
  // eslint-disable-next-line no-control-regex
  if (!raw.startsWith("/") || raw.startsWith("//") || /[\\\u0000-\u001f\u007f]/.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE) return null;
  // Back to the sign-in page itself would be a loop; the API answers JSON, not a page.
  if (url.pathname === "/login" || url.pathname.startsWith("/api/")) return null;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** The sign-in page's address for a visitor who asked for `path`. */
export function loginPathFor(path: string | null | undefined): string {
  const next = safeReturnPath(path);
  return next && next !== DEFAULT_RETURN_PATH && next !== "/" ? `/login?next=${encodeURIComponent(next)}` : "/login";
}
