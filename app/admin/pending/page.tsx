import type { Metadata } from "next";
import { AllPending } from "./view";

export const metadata: Metadata = { title: "Pending requests" };
export const dynamic = "force-dynamic";

/** Every group's pending requests and whom each waits on (the admin layout checks the role). */
export default function PendingPage() {
  return <AllPending />;
}
