"use server";

import { AuthError } from "next-auth";
import { credentialsSchema, signIn, signOut } from "@/lib/auth/auth";

export type SignInState = { error?: string; email?: string };

/** Signs in with email and password; on success Auth.js redirects to the inbox (a thrown redirect). */
export async function signInWithPassword(_prev: SignInState, formData: FormData): Promise<SignInState> {
  const email = String(formData.get("email") ?? "");
  const parsed = credentialsSchema.safeParse({ email, password: formData.get("password") });
  if (!parsed.success) return { error: "Enter your email address and password.", email };
  try {
    await signIn("credentials", { ...parsed.data, redirectTo: "/inbox" });
  } catch (error) {
    if (error instanceof AuthError) return { error: "That email and password do not match an active account.", email };
    throw error; // the redirect after a successful sign-in
  }
  return {};
}

export async function signOutAction(): Promise<void> {
  await signOut({ redirectTo: "/login" });
}
