/**
 * The endpoint while the database, or an authorization server whose keys verify a token, is unavailable. A request whose failure came from an unreachable database (and
 * that no handler answered itself) is answered 503 with Retry-After and a JSON-RPC error that says the request was
 * not processed, instead of a bare 500: it failed in authentication or in building the server, before any tool
 * or task method ran. Handlers that fail later answer themselves and say what did or did not happen.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { AuthorizationServerUnavailable } from "../auth/oauth";
import { DATABASE_UNAVAILABLE, isDatabaseUnavailable } from "../db/unavailable";

type Outage = "database" | "authorization-server";

const request = new AsyncLocalStorage<{ unavailable: Outage | null }>();

export const RETRY_AFTER_S = 5;

const NOT_PROCESSED = "This request was not processed: no tool ran and nothing was recorded. Retry later.";

export const NOT_PROCESSED_MESSAGE = `${DATABASE_UNAVAILABLE} ${NOT_PROCESSED}`;

export const AUTHORIZATION_SERVER_UNAVAILABLE_MESSAGE = `The authorization server that issued the access token cannot be reached, so the token could not be verified. ${NOT_PROCESSED}`;

function outageOf(err: unknown): Outage | null {
  if (err instanceof AuthorizationServerUnavailable) return "authorization-server";
  return isDatabaseUnavailable(err) ? "database" : null;
}

/** Whether `err` is an unavailable database or authorization server; if so the current request is marked, to be answered 503. */
export function noteUnavailable(err: unknown): boolean {
  const outage = outageOf(err);
  if (!outage) return false;
  const state = request.getStore();
  if (state) state.unavailable ??= outage;
  return true;
}

export function unavailableResponse(outage: Outage = "database"): Response {
  const message = outage === "authorization-server" ? AUTHORIZATION_SERVER_UNAVAILABLE_MESSAGE : NOT_PROCESSED_MESSAGE;
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message } }), {
    status: 503,
    headers: { "Content-Type": "application/json", "Retry-After": String(RETRY_AFTER_S) },
  });
}

/** Serves one request; a 5xx (or a throw) after an unavailable database was noted becomes the 503 above. */
export async function answeringOutages(serve: () => Promise<Response>): Promise<Response> {
  const state: { unavailable: Outage | null } = { unavailable: null };
  let response: Response;
  try {
    response = await request.run(state, serve);
  } catch (err) {
    const outage = state.unavailable ?? outageOf(err);
    if (outage) return unavailableResponse(outage);
    throw err;
  }
  if (state.unavailable && response.status >= 500) {
    await response.body?.cancel().catch(() => {});
    return unavailableResponse(state.unavailable);
  }
  return response;
}
