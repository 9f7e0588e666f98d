/**
 * The dashboard's page frame, its stylesheet (served at /dashboard/style.css) and the one script
 * it runs: the copy button of a newly created key, inline and allowed by its SHA-256 in the CSP.
 */
import type { Child } from "hono/jsx";
import { createHash } from "node:crypto";
import { CSRF_FIELD_NAME } from "./names.ts";

export const COPY_SCRIPT =
  `for(const b of document.querySelectorAll("button[data-copy]")){b.hidden=false;b.addEventListener("click",async()=>{const i=document.getElementById(b.dataset.copy);i.select();try{await navigator.clipboard.writeText(i.value)}catch{document.execCommand("copy")}b.textContent="Copied"})}`;
export const COPY_SCRIPT_HASH = `sha256-${
  createHash("sha256").update(COPY_SCRIPT).digest("base64")
}`;

export const STYLE = `
*,*::before,*::after{box-sizing:border-box}
:root{--fg:#1b1f24;--muted:#5b6470;--line:#d9dde3;--bg:#f6f7f9;--card:#fff;--accent:#1f6feb;--warn:#9a6700;--warnbg:#fff8c5;--bad:#b42318;--badbg:#fde8e7;--ok:#1a7f37}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:var(--card);border-bottom:1px solid var(--line)}
.bar{max-width:960px;margin:0 auto;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
.brand{font-weight:700;margin-right:auto;color:var(--fg);text-decoration:none}
nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center}
nav a{color:var(--muted);text-decoration:none;padding:.25rem 0}
nav a[aria-current=page]{color:var(--fg);font-weight:600;border-bottom:2px solid var(--accent)}
main{max-width:960px;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:0 0 1rem}
.narrow{max-width:420px;margin:2rem auto}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
label.check{font-weight:400;display:flex;gap:.5rem;align-items:center}
input[type=email],input[type=password],input[type=text],select{width:100%;padding:.55rem .6rem;font:inherit;border:1px solid var(--line);border-radius:6px;background:#fff}
button,.button{display:inline-block;font:inherit;padding:.5rem 1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad)}
button.link{background:none;border:none;color:var(--muted);padding:.25rem 0;line-height:inherit}
nav form{margin:0;display:flex}
.row{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end}
.row>*{flex:1 1 12rem}
.row>.fit{flex:0 0 auto}
.muted{color:var(--muted)}
.notice{padding:.75rem 1rem;border-radius:6px;margin:0 0 1rem;border:1px solid}
.notice.error{background:var(--badbg);border-color:#f5b5b0;color:var(--bad)}
.notice.warn{background:var(--warnbg);border-color:#e8d27a;color:var(--warn)}
.notice.ok{background:#dafbe1;border-color:#9be9a8;color:var(--ok)}
.secret{display:flex;gap:.5rem;flex-wrap:wrap}
.secret input{flex:1 1 20rem;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9rem}
code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9rem}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.85rem;color:var(--muted);font-weight:600}
.status-active{color:var(--ok);font-weight:600}
.status-revoked,.status-pending{color:var(--bad);font-weight:600}
.status-delivered{color:var(--ok)}
progress{width:100%;height:1.25rem;accent-color:var(--accent);margin:0 0 1rem}
dl.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.75rem;margin:0}
dl.facts div{background:var(--bg);border-radius:6px;padding:.5rem .75rem}
dl.facts dt{font-size:.8rem;color:var(--muted)}
dl.facts dd{margin:0;font-weight:600}
svg.chart{width:100%;height:auto;display:block}
svg.chart rect.bar{fill:var(--accent)}
svg.chart rect.today{fill:#0b4fb3}
svg.chart text{font:10px system-ui,sans-serif;fill:var(--muted)}
svg.chart line{stroke:var(--line)}
@media (max-width:640px){
  .bar{padding:.5rem .75rem}
  main{padding:.75rem}
  table.stack thead{display:none}
  table.stack tr{display:block;border:1px solid var(--line);border-radius:8px;margin:0 0 .75rem;padding:.25rem .5rem;background:var(--card)}
  table.stack td{display:flex;justify-content:space-between;gap:1rem;border:none;padding:.3rem 0}
  table.stack td::before{content:attr(data-label);color:var(--muted);font-size:.85rem}
}
`;

export const ICON =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f6feb"/><path d="M7 10h18M7 16h18M7 22h18" stroke="#fff" stroke-width="3"/></svg>`;

export interface Viewer {
  email: string;
  csrf: string;
}

export function Layout(
  props: { title: string; viewer?: Viewer; current?: string; children?: Child; script?: boolean },
) {
  const link = (href: string, label: string) => (
    <a href={href} aria-current={props.current === href ? "page" : undefined}>{label}</a>
  );
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{props.title} · Shelf</title>
        <link rel="stylesheet" href="/dashboard/style.css" />
        <link rel="icon" href="/dashboard/icon.svg" type="image/svg+xml" />
      </head>
      <body>
        <header>
          <div class="bar">
            <a class="brand" href="/dashboard">Shelf</a>
            {props.viewer
              ? (
                <nav>
                  {link("/dashboard/keys", "Keys")}
                  {link("/dashboard/usage", "Usage")}
                  {link("/dashboard/watches", "Watches")}
                  {link("/dashboard/settings", "Settings")}
                  <form method="post" action="/dashboard/signout">
                    <input type="hidden" name={CSRF_FIELD_NAME} value={props.viewer.csrf} />
                    <button class="link" type="submit">Sign out</button>
                  </form>
                </nav>
              )
              : (
                <nav>
                  {link("/dashboard/signin", "Sign in")}
                  {link("/dashboard/signup", "Sign up")}
                </nav>
              )}
          </div>
        </header>
        <main>{props.children}</main>
        {props.script ? <script dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} /> : null}
      </body>
    </html>
  );
}

/** The hidden CSRF field every form carries. */
export function Csrf(props: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD_NAME} value={props.token} />;
}

export function Notice(props: { kind: "error" | "warn" | "ok"; children?: Child }) {
  return (
    <p class={`notice ${props.kind}`} role={props.kind === "error" ? "alert" : "status"}>
      {props.children}
    </p>
  );
}

/** "2026-01-31 14:05 UTC", or "never". */
export function when(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "never";
  return new Date(ms).toISOString().replace("T", " ").slice(0, 16) + " UTC";
}
