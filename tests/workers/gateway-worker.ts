/**
 * Child process for tests/gateway-supervision.test.ts: plays a Countersign server process that has started a
 * supervised stdio upstream. Prints the upstream's pid as one JSON line, then stays up until it is killed.
 *
 *   node --import tsx tests/workers/gateway-worker.ts <serverName>
 */
import { db } from "../../lib/db/client";
import { connection, upstreamPid } from "../../lib/gateway/connections";

const [name] = process.argv.slice(2);
const server = await db().upstreamServer.findUniqueOrThrow({ where: { name } });
await connection(server.id);
process.stdout.write(JSON.stringify({ pid: await upstreamPid(server.id) }) + "\n");
setInterval(() => {}, 60_000);
