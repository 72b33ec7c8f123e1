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

/**
 * Why an upstream tool, named as agents see it, would not run now (its server disabled or removed, the tool changed
 * upstream and awaiting an admin's review, or no longer offered), or null when it would, or the name is no upstream
 * tool's. For reviewers: an approval given now does not run such a tool.
 */
export function upstreamStanding(row: { serverEnabled: boolean; status: string } | null, name: string): string | null {
  const split = splitQualifiedName(name);
  if (!split) return null;
  if (!row) return `The upstream server ${split.server} no longer offers ${split.tool}: an approval will not run it.`;
  if (!row.serverEnabled) return `The upstream server ${split.server} is disabled: an approval will not run the tool until it is enabled.`;
  if (row.status === "changed") return `This tool changed upstream since it was accepted and awaits an admin's review: an approval will not run it on what was accepted before.`;
  if (row.status === "removed") return `The upstream server ${split.server} no longer offers ${split.tool}: an approval will not run it.`;
  return null;
}
