/**
 * How an upstream tool is named for agents: `<server>__<tool>`. A server name is lower-case letters, digits and
 * dashes (no underscore), so the first "__" always splits a name unambiguously into server and tool, whatever
 * the upstream's own tool name contains. Tool names agents see keep to the characters MCP allows in a tool
 * name (A-Z a-z 0-9 _ - .) and to 128 characters; an upstream tool whose name would not fit is not offered.
 */
export const SERVER_NAME = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
export const SEPARATOR = "__";
const TOOL_NAME = /^[A-Za-z0-9_.-]+$/;
export const MAX_TOOL_NAME = 128;

export function qualifiedName(server: string, tool: string): string | null {
  const name = `${server}${SEPARATOR}${tool}`;
  return TOOL_NAME.test(tool) && name.length <= MAX_TOOL_NAME ? name : null;
}

export function splitQualifiedName(name: string): { server: string; tool: string } | null {
  const i = name.indexOf(SEPARATOR);
  if (i <= 0) return null;
  const server = name.slice(0, i);
  const tool = name.slice(i + SEPARATOR.length);
  return SERVER_NAME.test(server) && tool.length > 0 ? { server, tool } : null;
}
