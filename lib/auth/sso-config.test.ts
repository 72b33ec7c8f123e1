/** Single sign-on settings: defaults, several providers, and one clear error naming every bad value. */
import { describe, expect, it } from "vitest";
import { parseSsoConfig, SsoConfigError } from "./sso-config";

const good = { id: "corp", name: "Corp SSO", issuer: "https://id.example.com/realms/corp", clientId: "countersign", clientSecret: "s3cret" };
const env = (providers: unknown, extra: Record<string, string> = {}) => ({ COUNTERSIGN_OIDC_PROVIDERS: JSON.stringify(providers), ...extra });

function problems(e: Record<string, string | undefined>): string[] {
  try {
    parseSsoConfig(e);
  } catch (err) {
    expect(err).toBeInstanceOf(SsoConfigError);
    return (err as SsoConfigError).problems;
  }
  throw new Error("expected the settings to be refused");
}

describe("parseSsoConfig", () => {
  it("no provider configured is today's behaviour: password sign-in only", () => {
    expect(parseSsoConfig({})).toEqual({ providers: [], passwordSignIn: true });
    expect(parseSsoConfig({ COUNTERSIGN_OIDC_PROVIDERS: "  " })).toEqual({ providers: [], passwordSignIn: true });
    expect(parseSsoConfig({ COUNTERSIGN_OIDC_PROVIDERS: "[]", COUNTERSIGN_PASSWORD_SIGN_IN: "on" })).toEqual({ providers: [], passwordSignIn: true });
  });

  it("fills in the defaults of a minimal provider and keeps the issuer verbatim", () => {
    const { providers } = parseSsoConfig(env([{ ...good, issuer: "https://tenant.example.com/" }]));
    expect(providers).toEqual([
      {
        ...good,
        issuer: "https://tenant.example.com/",
        scopes: ["openid", "email", "profile"],
        claimsFrom: "id_token",
        groupsClaim: "groups",
        groupMap: {},
        roleMap: {},
        defaultRole: null,
        linkVerifiedEmail: false,
      },
    ]);
  });

  it("takes several providers, with mappings (a single group as a string or a list)", () => {
    const cfg = parseSsoConfig(
      env(
        [
          { ...good, scopes: ["openid", "email", "groups"], groupMap: { "fin-approvers": "treasury", oncall: ["sre", "support-leads"] }, roleMap: { "cs-admins": "admin" } },
          { ...good, id: "kc", name: "Keycloak", issuer: "http://localhost:8080/realms/x", groupsClaim: "realm_access.roles", claimsFrom: "userinfo", defaultRole: "requester", linkVerifiedEmail: true },
        ],
        { COUNTERSIGN_PASSWORD_SIGN_IN: "off" },
      ),
    );
    expect(cfg.passwordSignIn).toBe(false);
    expect(cfg.providers.map((p) => p.id)).toEqual(["corp", "kc"]);
    expect(cfg.providers[0].groupMap).toEqual({ "fin-approvers": ["treasury"], oncall: ["sre", "support-leads"] });
    expect(cfg.providers[0].roleMap).toEqual({ "cs-admins": "admin" });
    expect(cfg.providers[1]).toMatchObject({ groupsClaim: "realm_access.roles", claimsFrom: "userinfo", defaultRole: "requester", linkVerifiedEmail: true });
  });

  it("refuses JSON that is not an array of providers", () => {
    expect(problems({ COUNTERSIGN_OIDC_PROVIDERS: "{not json" })[0]).toMatch(/^COUNTERSIGN_OIDC_PROVIDERS is not JSON/);
    expect(problems({ COUNTERSIGN_OIDC_PROVIDERS: JSON.stringify(good) })).toEqual(["COUNTERSIGN_OIDC_PROVIDERS must be a JSON array of providers"]);
  });

  it("names every bad field of every provider in one error", () => {
    const found = problems(
      env([
        { ...good, id: "Bad Id", clientSecret: "" },
        { id: "two", name: "Two", issuer: "http://id.example.com", clientId: "x", clientSecret: "y", scopes: ["email"], groupMap: { a: "Not A Group" }, roleMap: { b: "owner" }, colour: "red" },
        { ...good, id: "credentials" },
      ]),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/provider "Bad Id": id must be 1-40 lowercase letters/),
        expect.stringMatching(/provider "Bad Id": clientSecret is required/),
        expect.stringMatching(/provider "two": issuer must use https \(plain http only for localhost\)/),
        expect.stringMatching(/provider "two": scopes must include openid/),
        expect.stringMatching(/provider "two": groupMap maps "a" to "Not A Group", which is not a group name/),
        expect.stringMatching(/provider "two": roleMap\.b /),
        expect.stringMatching(/provider "two": unknown field colour/),
        expect.stringMatching(/provider "credentials": id is reserved/),
      ]),
    );
    expect(() => parseSsoConfig(env([{ ...good, id: "Bad Id" }]))).toThrow(/Single sign-on is misconfigured:\n  - /);
  });

  it("names a missing field and a second provider with the same id", () => {
    expect(problems(env([{ id: "corp", name: "Corp", issuer: good.issuer, clientSecret: "x" }]))).toEqual(['COUNTERSIGN_OIDC_PROVIDERS provider "corp": clientId is required']);
    expect(problems(env([good, { ...good, name: "Again" }]))).toEqual(['COUNTERSIGN_OIDC_PROVIDERS provider "corp": the id is used twice']);
  });

  it("password sign-in: on or off only, and off needs a provider", () => {
    expect(parseSsoConfig(env([good], { COUNTERSIGN_PASSWORD_SIGN_IN: "OFF" })).passwordSignIn).toBe(false);
    expect(problems({ COUNTERSIGN_PASSWORD_SIGN_IN: "maybe" })).toEqual(['COUNTERSIGN_PASSWORD_SIGN_IN must be "on" or "off", not "maybe"']);
    expect(problems({ COUNTERSIGN_PASSWORD_SIGN_IN: "off" })[0]).toMatch(/needs at least one provider/);
  });

  it("never puts the client secret in an error", () => {
    const found = problems(env([{ ...good, clientSecret: "hunter2-very-secret", issuer: "ftp://x" }]));
    expect(found.join("\n")).not.toContain("hunter2-very-secret");
  });
});
