import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { Header } from "@/components/Header";
import { currentUser } from "@/lib/auth/session";
import { signOutAction } from "./login/actions";
import Providers from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Countersign", template: "%s · Countersign" },
  description: "Human approval for AI agents' tool calls.",
};

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default async function RootLayout({ children }: { children: ReactNode }) {
  const user = await currentUser();
  return (
    <html lang="en">
      <body className="min-h-screen">
        <Header user={user} signOutAction={signOutAction} />
        <Providers>
          <main className="mx-auto max-w-6xl px-4 py-6">{children}</main>
        </Providers>
      </body>
    </html>
  );
}
