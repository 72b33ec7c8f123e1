"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useEffect, useState, type ReactNode } from "react";
import { config as zodConfig } from "zod";

// In the browser, zod validates without compiling code at run time: the pages' Content-Security-Policy forbids eval.
zodConfig({ jitless: true });

export default function Providers({ children }: { children: ReactNode }) {
  const [client] = useState(
    () =>
      new QueryClient({
        defaultOptions: { queries: { staleTime: 2_000, retry: 1, refetchOnWindowFocus: true } },
      }),
  );
  // Marks the document once React has taken over the server-rendered page (forms and buttons act in place from
  // then on); browser tests wait for it before they type or click.
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
