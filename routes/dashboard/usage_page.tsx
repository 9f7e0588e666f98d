/**
 * The usage page: plan, credits with a progress bar, period, rate limit, credits per day, per key
 * and per endpoint, alerts.
 */
import {
  type AccountState,
  dayOf,
  FOLDED_KEYS,
  type KeyState,
  PERIOD_MS,
  type UsageRecord,
} from "../../metering/account_state.ts";
import type { Alert } from "../../metering/alerts.ts";
import { Layout, type Viewer, when } from "./layout.tsx";

const DAY_MS = 24 * 3600 * 1000;

export function UsagePage(
  props: {
    viewer: Viewer;
    account: AccountState;
    /** Every key of the account, revoked ones too (Accounts.listKeys): the tallies name them. */
    keys: KeyState[];
    usage: UsageRecord;
    alerts: Alert[];
    mailConfigured: boolean;
    now: number;
  },
) {
  const u = props.usage;
  const pct = u.included_requests > 0
    ? Math.min(100, Math.round((u.requests_used * 100) / u.included_requests))
    : 0;
  return (
    <Layout title="Usage" viewer={props.viewer} current="/dashboard/usage">
      <h1>Usage</h1>
      <div class="card">
        <p>
          <strong id="used">{u.requests_used}</strong> of <strong>{u.included_requests}</strong>
          {" "}
          credits used ({pct}%)
        </p>
        <progress
          id="credits"
          value={Math.min(u.requests_used, u.included_requests)}
          max={Math.max(1, u.included_requests)}
        >
          {pct}%
        </progress>
        <dl class="facts">
          <div>
            <dt>Plan</dt>
            <dd>{u.plan}{u.status !== "active" ? ` (${u.status})` : ""}</dd>
          </div>
          <div>
            <dt>Remaining</dt>
            <dd id="remaining">{u.requests_remaining}</dd>
          </div>
          <div>
            <dt>Period started</dt>
            <dd>{when(Date.parse(u.period_start))}</dd>
          </div>
          <div>
            <dt>Credits reset</dt>
            <dd>{when(Date.parse(u.period_end))}</dd>
          </div>
          <div>
            <dt>Rate limit</dt>
            <dd>{u.rate_limit_per_sec} request{u.rate_limit_per_sec === 1 ? "" : "s"}/s per key</dd>
          </div>
        </dl>
      </div>
      <div class="card">
        <h2>Credits charged per day (UTC) this period</h2>
        <DailyChart account={props.account} now={props.now} />
      </div>
      <div class="card">
        <h2>Credits this period by key</h2>
        <Tally
          id="by-key"
          label="Key"
          rows={Object.entries(props.account.by_key ?? {}).map(([id, credits]) => ({
            name: keyLabel(props.keys, id),
            credits,
          }))}
        />
      </div>
      <div class="card">
        <h2>Credits this period by endpoint</h2>
        <Tally
          id="by-endpoint"
          label="Endpoint"
          rows={Object.entries(props.account.by_endpoint ?? {}).map(([name, credits]) => ({
            name,
            credits,
          }))}
        />
      </div>
      <div class="card">
        <h2>Usage alerts</h2>
        {props.alerts.length === 0
          ? (
            <p class="muted">
              No alert this period yet. Alerts at 80% and 100% are set under{" "}
              <a href="/dashboard/settings">Settings</a>.
            </p>
          )
          : (
            <table class="stack" id="alerts">
              <thead>
                <tr>
                  <th>Alert</th>
                  <th>Raised</th>
                  <th>To</th>
                  <th>Delivery</th>
                </tr>
              </thead>
              <tbody>
                {props.alerts.map((a) => (
                  <tr>
                    <td data-label="Alert">{a.threshold}% of {a.included} credits</td>
                    <td data-label="Raised">{when(a.created_at)}</td>
                    <td data-label="To">{a.to}</td>
                    <td data-label="Delivery" class={`status-${a.status}`}>
                      {a.status === "delivered"
                        ? `sent ${when(a.delivered_at)}`
                        : props.mailConfigured
                        ? `not delivered yet (${a.attempts} attempt${a.attempts === 1 ? "" : "s"}${
                          a.last_error ? `: ${a.last_error}` : ""
                        })`
                        : "not sent: no mail server is configured"}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </div>
    </Layout>
  );
}

/**
 * A key by its name and visible characters, as the keys page shows it; a revoked one said so. Its
 * id alone, which no page shows, named a revoked key (probe FB); a key whose audit entry was
 * pruned (KEPT_REVOKED_KEYS) is named as such (probe FC).
 */
function keyLabel(keys: KeyState[], id: string): string {
  if (id === FOLDED_KEYS) return "keys revoked earlier this period";
  const k = keys.find((k) => k.id === id);
  if (!k) return "a key revoked earlier, no longer listed";
  return `${k.name || "unnamed"} (${k.prefix}…${k.last4})${
    k.status === "revoked" ? ", revoked" : ""
  }`;
}

/** A two-column table, largest first; rows with no credits are left out. */
function Tally(props: { id: string; label: string; rows: { name: string; credits: number }[] }) {
  const rows = props.rows.filter((r) => r.credits > 0).sort((a, b) => b.credits - a.credits);
  if (rows.length === 0) return <p class="muted" id={props.id}>No credits charged yet.</p>;
  return (
    <table class="stack" id={props.id}>
      <thead>
        <tr>
          <th>{props.label}</th>
          <th>Credits</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr>
            <td data-label={props.label}>{r.name}</td>
            <td data-label="Credits" data-credits={r.credits}>{r.credits}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** How many periods back the chart reaches for usage a plan change carried. */
const CARRIED_SHOWN = 3;

/**
 * One bar per UTC day of the current period, and of the earlier one whose usage a plan change
 * carried into it (the credits used count them, and the chart began at the change, leaving them
 * out: probe GH); today's bar darker. An SVG, so no script or inline style.
 */
function DailyChart(props: { account: AccountState; now: number }) {
  const start = props.account.period_start;
  // Carried usage older than a few periods (a long chain of plan changes, a restored record) is
  // cut off, so that the chart keeps a width a page can show; cut, not dropped whole, which left
  // out every carried day (probe GI).
  const from = Math.max(
    start - CARRIED_SHOWN * PERIOD_MS,
    Math.min(start, ...(props.account.carried_from ?? [])),
  );
  const days: string[] = [];
  for (let t = Date.parse(dayOf(from)); t < start + PERIOD_MS; t += DAY_MS) days.push(dayOf(t));
  const counts = days.map((d) => props.account.daily?.[d] ?? 0);
  const max = Math.max(1, ...counts);
  const today = dayOf(props.now);
  const W = 620, H = 180, left = 34, right = 16, bottom = 22, top = 10;
  const slot = (W - left - right) / days.length;
  const scale = (n: number) => ((H - bottom - top) * n) / max;
  return (
    <svg
      class="chart"
      id="daily-chart"
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label="Credits charged per UTC day in the current period"
    >
      <line x1={left} y1={H - bottom} x2={W} y2={H - bottom} />
      <text x={left - 4} y={top + 8} text-anchor="end">{max}</text>
      <text x={left - 4} y={H - bottom} text-anchor="end">0</text>
      {days.map((d, i) => (
        <g>
          <rect
            class={d === today ? "bar today" : "bar"}
            x={left + i * slot + 1}
            y={H - bottom - scale(counts[i])}
            width={Math.max(1, slot - 2)}
            height={scale(counts[i])}
            data-day={d}
            data-count={counts[i]}
          >
            <title>{d}: {counts[i]} credit{counts[i] === 1 ? "" : "s"}</title>
          </rect>
          {i % 5 === 0
            ? (
              <text x={left + i * slot + slot / 2} y={H - 6} text-anchor="middle">
                {d.slice(5)}
              </text>
            )
            : null}
        </g>
      ))}
    </svg>
  );
}
