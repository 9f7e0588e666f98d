/**
 * The watches page: each watch of the account with its schedule and state, and the latest
 * webhook delivery attempts (time, event, attempt, result), so an owner can see why a receiver
 * got nothing. Webhook URLs are shown by host only: their paths may carry tokens.
 */
import type { Watch } from "../../watches/store.ts";
import { webhookHost } from "../../watches/webhook_target.ts";
import { Layout, type Viewer, when } from "./layout.tsx";

export function WatchesPage(props: { viewer: Viewer; watches: Watch[] }) {
  return (
    <Layout title="Watches" viewer={props.viewer} current="/dashboard/watches">
      <h1>Watches</h1>
      {props.watches.length === 0
        ? (
          <p class="muted" id="no-watches">
            No watches yet. Create one with <code>POST /v1/watches</code> (see the API docs).
          </p>
        )
        : null}
      {props.watches.map((w) => (
        <div class="card" id={w.id}>
          <h2>
            {w.asin} · {w.marketplace}
            {w.zip ? ` · ${w.zip}` : ""}
          </h2>
          <dl class="facts">
            <div>
              <dt>Watching</dt>
              <dd>{w.on.join(", ")}</dd>
            </div>
            <div>
              <dt>Every</dt>
              <dd>{w.every_seconds} s</dd>
            </div>
            <div>
              <dt>State</dt>
              <dd class="watch-status">
                {w.status}
                {w.paused_reason ? ` (${w.paused_reason})` : ""}
              </dd>
            </div>
            <div>
              <dt>Refreshes</dt>
              <dd>{w.refreshes}, last {when(w.last_refresh_at)}</dd>
            </div>
            <div>
              <dt>Webhook</dt>
              <dd>{webhookHost(w.webhook_url)}</dd>
            </div>
          </dl>
          {w.last_error ? <p class="muted">Last refresh failed: {w.last_error}</p> : null}
          <table class="stack deliveries">
            <thead>
              <tr>
                <th>Attempt ended</th>
                <th>Event</th>
                <th>Attempt</th>
                <th>Result</th>
              </tr>
            </thead>
            <tbody>
              {w.deliveries.length === 0
                ? (
                  <tr>
                    <td colspan={4}>No webhook deliveries yet.</td>
                  </tr>
                )
                : w.deliveries.map((d) => (
                  <tr class={d.delivered ? "delivered" : "failed"}>
                    <td data-label="Attempt ended">{when(Date.parse(d.at))}</td>
                    <td data-label="Event">
                      <code>{d.event_id}</code>
                    </td>
                    <td data-label="Attempt">{d.attempt}</td>
                    <td data-label="Result">{d.result}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      ))}
    </Layout>
  );
}
