/**
 * A bound on how deeply a request body's JSON may nest, checked on the raw text before anything parses or
 * validates it. Parsers and schema validators walk JSON recursively, so a body of a few kilobytes nested a few
 * thousand levels deep exhausts the stack inside the SDK's envelope validation (a RangeError answered as a 500).
 * No MCP request needs more than a few levels; MAX_JSON_DEPTH leaves ample room for nested tool arguments.
 * The body read for this check is the one the SDK gets, parsed once (`parsedBody`): it is read a single time.
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
 * What the route learned from a POST body before authentication (`screenBody`): a refusal, or the request to hand
 * on (the same one while its body is unread) with the body's text and, when that text is JSON, `parsedBody`.
 */
export type ScreenedBody = { refused: Response } | { request: Request; text?: string; parsedBody?: unknown };

/**
 * Reads a POST body once, before anything parses or validates it: a body nested deeper than MAX_JSON_DEPTH is
 * refused with a 400 JSON-RPC Invalid Request; any other readable body comes back as its text, parsed when it is
 * JSON, for `parsedBody` once the request is authenticated. A body that cannot be read or is too large comes back
 * without text, and the SDK reads and answers it as it does (413 included).
 *
 * A body of a declared length within the limit (what every HTTP client sends) is read from the request itself; a
 * copy of the request carrying the text is made only when the SDK will read it again (text that is not JSON). A
 * body without a declared length is read from a clone, so the request's own body stays for the SDK.
 */
export async function screenBody(request: Request): Promise<ScreenedBody> {
  if (request.method !== "POST" || request.body === null) return { request };
  const declared = request.headers.get("content-length");
  const direct = declared !== null && /^\d+$/.test(declared) && Number(declared) <= MAX_BODY_BYTES;
  const read = await readRequestBody(direct ? request : request.clone(), MAX_BODY_BYTES).catch((e: unknown) => e as Error);
  if (read instanceof Error || read.tooLarge) {
    // Left to the SDK: an unread body as it is; a body this read consumed, as a copy whose reading fails the same way.
    return { request: direct ? withBody(request, failing(read instanceof Error ? read : new Error("the body is longer than declared"))) : request };
  }
  if (jsonDepth(read.text) > MAX_JSON_DEPTH) {
    return {
      refused: new Response(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` } }),
        { status: 400, headers: { "Content-Type": "application/json" } },
      ),
    };
  }
  const parsed = parsedBodyOf(read.text);
  return { request: direct && !("parsedBody" in parsed) ? withBody(request, read.text) : request, text: read.text, ...parsed };
}

/** The SDK's own limit on a request body (4 MiB), which it answers with 413. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

function withBody(request: Request, body: string | ReadableStream<Uint8Array>): Request {
  return new Request(request.url, { method: request.method, headers: request.headers, body, signal: request.signal, duplex: "half" } as RequestInit);
}

function failing(error: Error): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (controller) => controller.error(error) });
}

/**
 * The body as the SDK's `parsedBody`, so that it neither clones, reads nor parses the request again: only for text
 * that is JSON. Empty or malformed text gives nothing, and the SDK reads the request itself and answers as it does
 * (a parse error, or the 2025-era handler's own reading).
 */
export function parsedBodyOf(text: string | undefined): { parsedBody: unknown } | Record<string, never> {
  if (!text) return {};
  try {
    return { parsedBody: JSON.parse(text) as unknown };
  } catch {
    return {};
  }
}
