/**
 * The MCP endpoint. Origin validation first (403 for a foreign browser origin), then bearer authentication (401
 * with `WWW-Authenticate: Bearer` for an unknown, revoked or malformed token), then the SDK's web-standard
 * handler, whose server is built per request in lib/mcp (a plain tools/call is answered without it, by
 * lib/mcp/direct-call.ts). While the database is unreachable, a request that fails before any handler answers is a
 * 503 with Retry-After (lib/mcp/unavailable.ts). Every line logged while a request is handled carries its id, which
 * the response echoes in `x-request-id` (lib/request-context.ts).
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { logFailure, logRequest } from "@/lib/log";
import { requireAgent } from "@/lib/mcp/auth";
import { directCallAnswer, directCalls, plainToolCall } from "@/lib/mcp/direct-call";
import { screenBody } from "@/lib/mcp/nesting";
import { originRefusal } from "@/lib/mcp/origin";
import { createServer } from "@/lib/mcp/server";
import { answeringOutages, noteUnavailable } from "@/lib/mcp/unavailable";
import { withRequestId } from "@/lib/request-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// 'stateless' serves 2025-11-25 clients too (they get the degraded, task-less path).
const handler = createMcpHandler(
  async (ctx) => {
    try {
      return await createServer(ctx);
    } catch (err) {
      noteUnavailable(err);
      throw err;
    }
  },
  {
  legacy: "stateless",
  // The error's class only: SDK messages can quote header and argument values, which stay out of the logs.
    onerror: (error) => logFailure("mcp request", error),
  },
);

function serve(request: Request): Promise<Response> {
  return withRequestId(request, async () => {
    const started = performance.now();
    try {
      const response = await answer(request);
      logRequest("mcp", request.method, response.status, performance.now() - started);
      return response;
    } catch (e) {
      logRequest("mcp", request.method, 500, performance.now() - started);
      throw e;
    }
  });
}

async function answer(request: Request): Promise<Response> {
  const refused = originRefusal(request);
  if (refused) return refused;
  const body = await screenBody(request);
  if ("refused" in body) return body.refused;
  // An unreachable database (in authentication or in building the server) is a 503 that says nothing ran.
  return answeringOutages(async () => {
    const auth = await requireAgent(body.request);
    if (auth instanceof Response) return auth;
    // A plain tools/call is answered without the SDK's per-request server (lib/mcp/direct-call.ts).
    const plain = directCalls() ? plainToolCall(body.request, body.parsedBody) : null;
    const direct = plain && (await directCallAnswer(plain, auth));
    // The body, parsed once, is handed to the SDK so it does not read it a second time (none: the SDK reads it).
    return direct || handler.fetch(body.request, { authInfo: auth, parsedBody: body.parsedBody });
  });
}

export const POST = serve;
export const GET = serve;
export const DELETE = serve;
