/**
 * Interactive API docs: one self-contained page (no CDN, no build step) that reads
 * /openapi.json, lists every endpoint with its parameters and lets a user try it with a key.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Shelf API docs</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#232f3e;color:#fff;padding:16px 24px}header h1{margin:0;font-size:20px}
main{max-width:960px;margin:0 auto;padding:16px}
label.key{display:block;margin:12px 0}input,select{font:inherit;padding:4px 6px}
details{background:#fff;border:1px solid #ddd;border-radius:6px;margin:8px 0;padding:8px 12px}
summary{cursor:pointer}code.path{font-weight:600}.cost{color:#666;font-size:13px}
table{border-collapse:collapse;width:100%;margin:8px 0}td{padding:3px 6px;border-top:1px solid #eee;vertical-align:top}
pre{background:#111;color:#eee;padding:10px;overflow:auto;max-height:420px;border-radius:4px}
button{font:inherit;padding:4px 12px}
</style></head>
<body><header><h1>Shelf API</h1><div>Amazon marketplace data as JSON. Every call needs a key except <code>GET /v1/</code>.</div></header>
<main>
<label class="key">API key <input id="key" size="70" placeholder="shelf_live_…" autocomplete="off"></label>
<div id="eps">Loading /openapi.json…</div>
</main>
<script>
const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
fetch("/openapi.json").then((r) => r.json()).then((doc) => {
  const root = document.getElementById("eps");
  root.innerHTML = "";
  for (const [path, item] of Object.entries(doc.paths)) {
    const op = item.get;
    const el = document.createElement("details");
    const rows = op.parameters.map((p) => '<tr><td><code>' + esc(p.name) + '</code>' + (p.required ? ' *' : '') +
      '</td><td><input data-name="' + esc(p.name) + '" placeholder="' + esc(p.schema.default ?? (p.schema.enum || []).join("|")) +
      '"></td><td>' + esc(p.description) + '</td></tr>').join("");
    el.innerHTML = '<summary><code class="path">GET ' + esc(path) + '</code> — ' + esc(op.summary) +
      ' <span class="cost">(' + op["x-credits-cost"] + ' credit' + (op["x-credits-cost"] === 1 ? '' : 's') + ')</span></summary>' +
      '<table>' + rows + '</table><button>Send</button><pre hidden></pre>';
    el.querySelector("button").addEventListener("click", async () => {
      const q = new URLSearchParams();
      el.querySelectorAll("input[data-name]").forEach((i) => { if (i.value) q.set(i.dataset.name, i.value); });
      const pre = el.querySelector("pre");
      pre.hidden = false;
      pre.textContent = "…";
      const headers = {};
      const key = document.getElementById("key").value.trim();
      if (key) headers["x-api-key"] = key;
      const res = await fetch(path + (q.size ? "?" + q : ""), { headers });
      const cost = res.headers.get("x-credits-cost");
      pre.textContent = res.status + " " + res.statusText + (cost !== null ? "  (cost " + cost + ", remaining " +
        res.headers.get("x-credits-remaining") + ")" : "") + "\\n\\n" + JSON.stringify(await res.json(), null, 2);
    });
    root.appendChild(el);
  }
});
</script></body></html>`;
