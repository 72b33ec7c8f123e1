/** What a form's action answered: an error as an alert, a success as a status (nothing while idle). */
export function ActionMessage({ state }: { state: { status: string; message?: string } }) {
  if (state.status !== "error" && state.status !== "done") return null;
  return (
    <p role={state.status === "error" ? "alert" : "status"} className={state.status === "error" ? "text-red-800" : "text-emerald-800"}>
      {state.message}
    </p>
  );
}
