/**
 * Global setup of the single sign-on tests: one Countersign (scripts/start.ts, which migrates and seeds a scratch
 * embedded database, then `next start` from the existing build, never rebuilding) configured with one OpenID Connect
 * provider, the test provider of ./idp.ts, and password sign-in off. The spec starts that provider itself (it
 * controls its accounts' claims), so it must be up only when a sign-in begins. Returns the teardown, which stops the
 * server and removes its data, whether the tests passed or not.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { IDP_CLIENT, IDP_ISSUER, IDP_NAME, IDP_PROVIDER_ID } from "./idp";

export const SSO_PORT = Number(process.env.SSO_PORT ?? 3351);

/** The mapping the tests configure: provider groups to Countersign groups, and the admins' group to the admin role. */
export const PROVIDERS = [
  {
    id: IDP_PROVIDER_ID,
    name: IDP_NAME,
    issuer: IDP_ISSUER,
    clientId: IDP_CLIENT.id,
    clientSecret: IDP_CLIENT.secret,
    scopes: ["openid", "email", "profile", "groups"],
    groupsClaim: "groups",
    groupMap: { "idp-support-leads": "support-leads", "idp-treasury": "treasury" },
    roleMap: { "idp-countersign-admins": "admin" },
  },
];

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!fs.existsSync(path.join(".next", "BUILD_ID"))) throw new Error("No production build in .next: run `npx next build` first.");
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "cs-sso-"));
  const logDir = path.resolve(process.env.SSO_LOG_DIR ?? "test-results-sso");
  fs.mkdirSync(logDir, { recursive: true });
  const log = path.join(logDir, "server.log");
  const out = fs.openSync(log, "w");
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ["node_modules/tsx/dist/cli.mjs", "scripts/start.ts"], {
    env: {
      ...env,
      PORT: String(SSO_PORT),
      COUNTERSIGN_DATA_DIR: path.join(scratch, "data"),
      COUNTERSIGN_SANDBOX_DIR: path.join(scratch, "sandbox"),
      COUNTERSIGN_SWEEP_MS: "500",
      COUNTERSIGN_DEMO_STEADY_CLOCK: "1",
      COUNTERSIGN_REBUILD: "0",
      COUNTERSIGN_OIDC_PROVIDERS: JSON.stringify(PROVIDERS),
      COUNTERSIGN_PASSWORD_SIGN_IN: "off",
    },
    stdio: ["ignore", out, out],
  });
  fs.closeSync(out);

  const teardown = async () => {
    await stop(child);
    fs.rmSync(scratch, { recursive: true, force: true });
  };
  try {
    const base = `http://127.0.0.1:${SSO_PORT}`;
    const until = Date.now() + 180_000;
    let ok = false;
    for (let i = 0; !ok && Date.now() < until && i < 2000; i++) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      ok = await fetch(`${base}/login`).then((r) => r.ok, () => false);
      if (!ok) await new Promise((r) => setTimeout(r, 250));
    }
    if (!ok) throw new Error(`the single sign-on test server did not start; its log:\n${fs.readFileSync(log, "utf8").split("\n").slice(-30).join("\n")}`);
    process.env.SSO_BASE_URL = base;
  } catch (e) {
    await teardown();
    throw e;
  }
  return teardown;
}
