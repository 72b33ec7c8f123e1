/**
 * The endpoint while the database is unavailable. A request whose failure came from an unreachable database (and
 * that no handler answered itself) is answered 503 with Retry-After and a JSON-RPC error that says the request was
 * not processed, instead of a bare 500: it failed in authentication or in building the server, before any tool
 * or task method ran. Handlers that fail later answer themselves and say what did or did not happen.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { DATABASE_UNAVAILABLE, isDatabaseUnavailable } from "../db/unavailable";

const request = new AsyncLocalStorage<{ unavailable: boolean }>();

export const RETRY_AFTER_S = 5;

export const NOT_PROCESSED_MESSAGE = `${DATABASE_UNAVAILABLE} This request was not processed: no tool ran and nothing was recorded. Retry later.`;

/** Whether `err` is an unavailable database; if so the current request is marked, to be answered 503. */
export function noteUnavailable(err: unknown): boolean {
  if (!isDatabaseUnavailable(err)) return false;
  const state = request.getStore();
  if (state) state.unavailable = true;
  return true;
}

export function unavailableResponse(): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: NOT_PROCESSED_MESSAGE } }), {
    status: 503,
    headers: { "Content-Type": "application/json", "Retry-After": String(RETRY_AFTER_S) },
  });
}

/** Serves one request; a 5xx (or a throw) after an unavailable database was noted becomes the 503 above. */
export async function answeringOutages(serve: () => Promise<Response>): Promise<Response> {
  const state = { unavailable: false };
  let response: Response;
  try {
    response = await request.run(state, serve);
  } catch (err) {
    if (noteUnavailable(err) || state.unavailable) return unavailableResponse();
    throw err;
  }
  if (state.unavailable && response.status >= 500) {
    await response.body?.cancel().catch(() => {});
    return unavailableResponse();
  }
  return response;
}
