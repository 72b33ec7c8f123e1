import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LoginForm } from "@/components/LoginForm";
import { DEFAULT_RETURN_PATH, safeReturnPath } from "@/lib/auth/return-path";
import { currentUser } from "@/lib/auth/session";
import { signInWithPassword } from "./actions";

export const metadata: Metadata = { title: "Sign in" };

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  // Auth.js's own sign-in endpoint sends a refused attempt here with ?error=CredentialsSignin&code=...
  const { code, next } = await searchParams;
  const returnTo = safeReturnPath(next);
  if (await currentUser()) redirect(returnTo ?? DEFAULT_RETURN_PATH);
  const initial = code === "throttled" ? { error: "Too many sign-in attempts; try again in a few minutes." } : {};
  return (
    <div className="mx-auto mt-8 max-w-sm">
      <div className="rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <h1 className="text-lg font-semibold">Sign in to review</h1>
        <p className="mt-1 mb-5 text-sm text-slate-600">
          Approve or deny the tool calls AI agents are waiting on.
        </p>
        <LoginForm action={signInWithPassword} initial={initial} next={returnTo ?? undefined} />
      </div>
    </div>
  );
}
