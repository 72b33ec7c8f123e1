/**
 * The request a line of server log belongs to. Route handlers run their work inside `withRequestId`, so every line
 * logged while the request is handled (lib/log.ts reads the store) carries the same id, and the response says it
 * in `x-request-id`. An incoming id is kept only when it is a short run of plain characters; anything else is
 * replaced by a fresh one, so a client cannot forge log structure or smuggle text through the header.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

export const REQUEST_ID_HEADER = "x-request-id";
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{7,63}$/;

type Store = { requestId: string };

// One store per process, whichever bundle loads this module first (Next.js may load it more than once).
const holder = globalThis as unknown as { __countersignRequestContext?: AsyncLocalStorage<Store> };
const storage = (holder.__countersignRequestContext ??= new AsyncLocalStorage<Store>());

/** The incoming id when it fits the pattern, else a fresh one. */
export function acceptedRequestId(incoming: string | null | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** The id of the request being handled, if any. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** Runs `fn` as the handling of `request`; its response carries the request's id in `x-request-id`. */
export async function withRequestId(request: Request, fn: () => Promise<Response>): Promise<Response> {
  const requestId = acceptedRequestId(request.headers.get(REQUEST_ID_HEADER));
  const response = await storage.run({ requestId }, fn);
  try {
    response.headers.set(REQUEST_ID_HEADER, requestId);
    return response;
  } catch {
    // Immutable headers (a response made by fetch or Response.redirect): answer with a copy.
    const copy = new Response(response.body, response);
    copy.headers.set(REQUEST_ID_HEADER, requestId);
    return copy;
  }
}

/** Runs `fn` with `requestId` as the current request (work started outside a route handler, tests). */
export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}
