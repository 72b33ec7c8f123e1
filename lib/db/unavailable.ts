/**
 * Whether an error means the database could not be reached or dropped the connection (as opposed to a statement
 * it refused): a connection refused, reset or terminated, a server shutting down or terminating the backend, a
 * pool that timed out waiting for a connection. Such a failure says nothing about the request itself, so the
 * caller can answer "unavailable, retry later" and say what did or did not happen before it.
 */

/** SQLSTATE class 08 (connection exception) and the 57P0x shutdown/termination codes. */
const SQLSTATE = /^(08\d{3}|57P0[1-4])$/;
/** Node socket errors and the Prisma codes for an unreachable server or a lost connection. */
const CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "P1001", "P1002", "P1008", "P1017", "P2024"]);
const MESSAGES =
  /Connection terminated|connection (?:is )?(?:closed|ended|lost)|Client has encountered a connection error|Client was closed|terminating connection|server closed the connection|timeout exceeded when trying to connect|Can't reach database server|ECONNREFUSED|ECONNRESET|the database system is (?:shutting down|starting up)|Cannot use a pool after calling end/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e && typeof e === "object" && !seen.has(e); depth++) {
    seen.add(e);
    const o = e as { code?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown }; originalCode?: unknown; kind?: unknown };
    for (const code of [o.code, o.originalCode]) {
      if (typeof code === "string" && (CODES.has(code) || SQLSTATE.test(code))) return true;
    }
    if (o.kind === "DatabaseNotReachable" || o.kind === "ConnectionClosed" || o.kind === "SocketTimeout") return true;
    if (typeof o.message === "string" && MESSAGES.test(o.message)) return true;
    e = o.cause ?? o.meta?.driverAdapterError;
  }
  return false;
}

/** The message a caller shows when the database is unavailable; what did not happen is the caller's to add. */
export const DATABASE_UNAVAILABLE = "The database is unavailable right now.";
