/** The admin API of a running Shelf (ADMIN_TOKEN set): an account on a plan and its first key. */
export async function createAccount(
  url: string,
  token: string,
  plan = "proof",
): Promise<{ accountId: string; key: string; keyId: string }> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const email = `proof-${crypto.randomUUID()}@example.com`;
  const a = await fetch(`${url}/admin/accounts`, {
    method: "POST",
    headers,
    body: JSON.stringify({ email, plan }),
  });
  if (a.status !== 201) throw new Error(`account creation answered ${a.status}: ${await a.text()}`);
  const account = await a.json();
  const k = await fetch(`${url}/admin/accounts/${account.id}/keys`, {
    method: "POST",
    headers,
    body: "{}",
  });
  if (k.status !== 201) throw new Error(`key creation answered ${k.status}: ${await k.text()}`);
  const key = await k.json();
  return { accountId: account.id, key: key.key, keyId: key.id };
}

/** requests_used of the key's account, from the free `/v1/usage`. */
export async function usedCredits(url: string, key: string): Promise<number> {
  const r = await fetch(`${url}/v1/usage`, { headers: { "x-api-key": key } });
  const body = await r.json();
  if (r.status !== 200) throw new Error(`/v1/usage answered ${r.status}: ${JSON.stringify(body)}`);
  return body.requests_used;
}
