/** Prints the metrics text of a fresh Metrics, as /metrics serves it: run under given permissions. */
import { Metrics } from "../../core/metrics.ts";

console.log(await new Metrics().registry.metrics());
