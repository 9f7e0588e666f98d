/** The shape of a signed-in dashboard request, shared by the route modules. */
import type { Context } from "hono";
import type { Session } from "../../metering/sessions.ts";
import type { AccountState } from "../../metering/account_state.ts";
import type { Viewer } from "./layout.tsx";

/** Wraps a handler that needs a signed-in visitor; anyone else is sent to the sign-in page. */
export type SignedInHandler = (
  handler: (c: Context, s: SignedIn) => Response | Promise<Response>,
) => (c: Context) => Promise<Response>;

export interface SignedIn {
  session: Session;
  token: string;
  account: AccountState;
  viewer: Viewer;
}
