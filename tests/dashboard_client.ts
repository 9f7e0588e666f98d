/** A minimal browser for dashboard tests over real HTTP. */
/** A cookie jar client for the dashboard: follows no redirects, keeps cookies, reads form tokens. */
export function browser(base: string) {
  const jar = new Map<string, string>();
  return {
    jar,
    async send(path: string, init: RequestInit & { form?: Record<string, string> } = {}) {
      const headers = new Headers(init.headers);
      if (jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
      let body = init.body;
      if (init.form) {
        body = new URLSearchParams(init.form);
        headers.set("content-type", "application/x-www-form-urlencoded");
      }
      const r = await fetch(base + path, {
        ...init,
        headers,
        body,
        redirect: "manual",
        method: init.method ?? (init.form ? "POST" : "GET"),
      });
      for (const c of r.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const [k, v] = pair.split("=");
        if (v === "" || /max-age=0/i.test(c)) jar.delete(k);
        else jar.set(k, v);
      }
      const text = await r.text();
      return {
        status: r.status,
        headers: r.headers,
        text,
        csrf: /name="_csrf" value="([0-9a-f]+)"/.exec(text)?.[1] ?? "",
      };
    },
  };
}

export type Browser = ReturnType<typeof browser>;
