/**
 * The set-up two proofs share: a spawned Shelf on its own KV file and plan catalog, whose
 * upstream is a fake marketplace serving one product page, and one account with its key.
 * Disposing it stops the server and the fake and removes the files.
 */
import { FakeMarketplace } from "../fake_marketplace.ts";
import { type ShelfProcess, spawnShelf } from "./shelf_process.ts";
import { plansFile } from "./plans_file.ts";
import { createAccount } from "./admin_client.ts";
import { tempKv } from "./http.ts";
import { removeKvFiles } from "../../core/kv_files.ts";

export const PRODUCT_PATH = "/v1/products/details?asin=B07H57DNVV";

export interface ProductShelf extends AsyncDisposable {
  server: ShelfProcess;
  kvPath: string;
  key: string;
}

export async function productShelf(credits: number, ratePerSec: number): Promise<ProductShelf> {
  const fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const kvPath = await tempKv();
  const plans = await plansFile(credits, ratePerSec);
  const token = crypto.randomUUID();
  const dispose = async (server?: ShelfProcess) => {
    await server?.[Symbol.asyncDispose]();
    await fake[Symbol.asyncDispose]();
    await removeKvFiles(kvPath);
    await Deno.remove(plans).catch(() => {});
  };
  let server: ShelfProcess | undefined;
  try {
    server = await spawnShelf({
      KV_PATH: kvPath,
      UPSTREAM: fake.upstream,
      PLANS_FILE: plans,
      ADMIN_TOKEN: token,
    });
    const { key } = await createAccount(server.url, token);
    return { server, kvPath, key, [Symbol.asyncDispose]: () => dispose(server) };
  } catch (e) {
    await dispose(server);
    throw e;
  }
}
