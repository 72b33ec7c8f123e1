/** Protected Resource Metadata (RFC 9728) for the resource /mcp, at its path-suffixed well-known URL: the same document. */
export { GET, HEAD, OPTIONS } from "../route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
