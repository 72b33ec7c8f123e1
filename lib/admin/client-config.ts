/**
 * The ready-to-paste client configuration shown with a new agent token: an MCP client's server entry pointing at
 * this server's /mcp with the bearer header (the `mcpServers` shape Claude Desktop, Cursor and VS Code read).
 */

/**
 * The address agents reach this server at: COUNTERSIGN_PUBLIC_URL when set, else the origin the admin's browser
 * used (the page that created the token), else the default.
 */
export function serverBaseUrl(publicUrl: string | undefined, browserOrigin: string | null): string {
  const configured = publicUrl?.trim();
  if (configured) return configured.replace(/\/+$/, "");
  if (browserOrigin && /^https?:\/\/[^/\s]+$/.test(browserOrigin)) return browserOrigin;
  return "http://localhost:3000";
}

/** The configuration as pretty JSON: one server named after the agent, Streamable HTTP, the token as a bearer header. */
export function mcpClientConfig(agentName: string, token: string, baseUrl: string): string {
  return JSON.stringify(
    { mcpServers: { [`countersign-${agentName}`]: { type: "http", url: `${baseUrl}/mcp`, headers: { Authorization: `Bearer ${token}` } } } },
    null,
    2,
  );
}
