/**
 * `/model NAME` in a session (issue 25): the name is checked against the server's list as
 * `doctor` checks it (src/model/served_models.ts); an unknown name is refused, with the listed
 * name it is one slip from, and the model in use stays. A server that cannot be asked does not
 * stop the change: it is made, and said to be unchecked.
 */
import { apiKeyFromEnv } from "../../model/client.ts";
import { findModel, listModels } from "../../model/served_models.ts";
import { escapeForScreen } from "../../util/escape.ts";

export type ModelChoice =
  /** Switch to `name`; `note` says how it was checked. */
  | { ok: true; note: string }
  | { ok: false; message: string };

/** Whether the planner endpoint at `url` serves `name`, worded for the person. */
export async function checkPlannerModel(
  url: string,
  name: string,
  current: string,
): Promise<ModelChoice> {
  const apiKey = apiKeyFromEnv();
  const listed = await listModels(url, apiKey);
  if (!listed.ok) {
    return { ok: true, note: `not checked: the endpoint did not list its models (${listed.why})` };
  }
  const found = await findModel(url, name, listed.ids, apiKey);
  if (found.as !== null) {
    return {
      ok: true,
      note: found.as === name
        ? "the server lists it"
        : `the server lists it as ${escapeForScreen(found.as)}`,
    };
  }
  if (found.anyName) {
    return { ok: true, note: "the server serves one model and answers to any name" };
  }
  const available = escapeForScreen(listed.ids.slice(0, 10).join(", ").slice(0, 600)) || "none";
  return {
    ok: false,
    message: `${escapeForScreen(name)} is not among the server's models (${available})` +
      (found.near !== null ? `; did you mean ${escapeForScreen(found.near)}?` : "") +
      `; the planner model stays ${escapeForScreen(current)}`,
  };
}
