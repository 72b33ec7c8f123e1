import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LoginForm } from "@/components/LoginForm";
import { currentUser } from "@/lib/auth/session";
import { signInWithPassword } from "./actions";

export const metadata: Metadata = { title: "Sign in" };

export default async function LoginPage() {
  if (await currentUser()) redirect("/inbox");
  return (
    <div className="mx-auto mt-8 max-w-sm">
      <div className="rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <h1 className="text-lg font-semibold">Sign in to review</h1>
        <p className="mt-1 mb-5 text-sm text-slate-600">
          Approve or deny the tool calls AI agents are waiting on.
        </p>
        <LoginForm action={signInWithPassword} />
      </div>
    </div>
  );
}
