/**
 * A bound on how deeply a request body's JSON may nest, checked on the raw text before anything parses or
 * validates it. Parsers and schema validators walk JSON recursively, so a body of a few kilobytes nested a few
 * thousand levels deep exhausts the stack inside the SDK's envelope validation (a RangeError answered as a 500).
 * No MCP request needs more than a few levels; MAX_JSON_DEPTH leaves ample room for nested tool arguments.
 */
import { readRequestBody } from "@modelcontextprotocol/server";

export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in `text` (brackets inside strings do not count). Linear, iterative. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/**
 * A 400 JSON-RPC Invalid Request for a POST body nested deeper than MAX_JSON_DEPTH; null for anything else, which
 * the SDK then reads and answers as usual (an oversized body included: it keeps its 413).
 */
export async function nestingRefusal(request: Request): Promise<Response | null> {
  if (request.method !== "POST" || request.body === null) return null;
  const read = await readRequestBody(request.clone()).catch(() => null);
  if (!read || read.tooLarge || jsonDepth(read.text) <= MAX_JSON_DEPTH) return null;
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` } }),
    { status: 400, headers: { "Content-Type": "application/json" } },
  );
}
