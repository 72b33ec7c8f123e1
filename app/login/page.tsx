import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LoginForm } from "@/components/LoginForm";
import { DEFAULT_RETURN_PATH, safeReturnPath } from "@/lib/auth/return-path";
import { currentUser } from "@/lib/auth/session";
import { ssoConfig, ssoProviders } from "@/lib/auth/sso-config";
import { signInWithPassword, signInWithProvider } from "./actions";

export const metadata: Metadata = { title: "Sign in" };

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  // Auth.js's own sign-in endpoint sends a refused attempt here with ?error=CredentialsSignin&code=...
  // A refused or failed single sign-on comes back with ?error=AccessDenied (or another Auth.js error type).
  const { code, next, error } = await searchParams;
  const returnTo = safeReturnPath(next);
  if (await currentUser()) redirect(returnTo ?? DEFAULT_RETURN_PATH);
  const initial = code === "throttled" ? { error: "Too many sign-in attempts; try again in a few minutes." } : {};
  const providers = ssoProviders();
  const passwordSignIn = ssoConfig().passwordSignIn;
  // Shown only when single sign-on is configured: without a provider the page is exactly the password form.
  const ssoError =
    providers.length === 0
      ? null
      : error === "AccessDenied"
        ? "Single sign-on was refused: your account at the provider gives no access to Countersign, or it is not linked to an account here. Ask an admin."
        : error && error !== "CredentialsSignin"
          ? "Single sign-on did not complete; try again."
          : null;
  return (
    <div className="mx-auto mt-8 max-w-sm">
      <div className="rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <h1 className="text-lg font-semibold">Sign in to review</h1>
        <p className="mt-1 mb-5 text-sm text-slate-600">
          Approve or deny the tool calls AI agents are waiting on.
        </p>
        {ssoError && (
          <p role="alert" className="mb-4 rounded-md bg-red-50 px-3 py-2 text-sm text-red-800" data-testid="sso-error">
            {ssoError}
          </p>
        )}
        {providers.length > 0 && (
          <div className="space-y-2" data-testid="sso-providers">
            {providers.map((p) => (
              <form key={p.id} action={signInWithProvider}>
                <input type="hidden" name="provider" value={p.id} />
                {returnTo && <input type="hidden" name="next" value={returnTo} />}
                <button
                  type="submit"
                  className="w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm font-medium text-slate-800 shadow-sm hover:bg-slate-50"
                >
                  Sign in with {p.name}
                </button>
              </form>
            ))}
          </div>
        )}
        {providers.length > 0 && passwordSignIn && (
          <p className="my-4 text-center text-xs text-slate-600" aria-hidden="true">
            or with your email and password
          </p>
        )}
        {passwordSignIn && <LoginForm action={signInWithPassword} initial={initial} next={returnTo ?? undefined} />}
      </div>
    </div>
  );
}
