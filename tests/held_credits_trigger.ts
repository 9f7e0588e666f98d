/**
 * Preloaded into a spawned Shelf (tests/ops_drain_test.ts): holds credits as a call does from its
 * charge to its end (metering/credits_in_flight.ts, the same module main.ts reads), and never
 * ends: a call that no abort reaches, which no request can make on purpose, so that the stop's last
 * lines about credits left charged can be seen.
 */
import { hold } from "../metering/credits_in_flight.ts";

hold("acc_never_ends", 3);
