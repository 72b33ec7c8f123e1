/** Test worker: owns an embedded database folder, writes a row, prints its URL, then waits to be killed. */
import pg from "pg";
import { startEmbedded } from "../../lib/db/embedded";

const server = await startEmbedded({ dataDir: process.argv[2] });
const c = new pg.Client({ connectionString: server.url });
await c.connect();
await c.query("CREATE TABLE IF NOT EXISTS marks (v text)");
await c.query("INSERT INTO marks VALUES ('written by the first owner')");
await c.end();
console.log(JSON.stringify({ url: server.url, owned: server.owned, pid: process.pid }));
setInterval(() => {}, 1000);
