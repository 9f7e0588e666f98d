/**
 * Parser health: which fields each parse returned filled, kept in hourly buckets for two days,
 * so that a layout change at Amazon shows as a fill rate that fell against the day before.
 * Per process, in memory: a restart starts the comparison afresh (documented in the README).
 */

import { isEmptyValue } from "./empty_value.ts";

/** field → [filled, empty] for one parse (list items count once per item). */
export type FieldCounts = Map<string, [number, number]>;

const HOUR_MS = 3_600_000;
const KEEP_HOURS = 48;
/** A field falls when its fill rate over the last day is below this share of the day before. */
const FALL_RATIO = 0.5;
/** Fewer parses than this in either day decide nothing: one odd page is not a layout change. */
const MIN_SAMPLES = 20;

const LIST_FIELDS = ["results", "offers", "reviews", "categories"];

/**
 * Fields of a parser's answer: its top-level fields, and the fields of the items of its list
 * (`results[].price`), where a layout change usually shows first.
 */
export function fieldCounts(data: unknown, notFields: readonly string[] = []): FieldCounts {
  const out: FieldCounts = new Map();
  const add = (name: string, v: unknown) => {
    const c = out.get(name) ?? [0, 0];
    c[isEmptyValue(v) ? 1 : 0]++;
    out.set(name, c);
  };
  if (!data || typeof data !== "object") return out;
  for (const [k, v] of Object.entries(data)) {
    if (notFields.includes(k)) continue;
    if (Array.isArray(v) && LIST_FIELDS.includes(k)) {
      add(k, v);
      for (const item of v) {
        if (item && typeof item === "object" && !Array.isArray(item)) {
          for (const [ik, iv] of Object.entries(item)) add(`${k}[].${ik}`, iv);
        }
      }
    } else {
      add(k, v);
    }
  }
  return out;
}

interface Bucket {
  hour: number;
  /** "page_type|marketplace" → field → [filled, empty] */
  counts: Map<string, FieldCounts>;
}

export interface FieldHealth {
  field: string;
  last_hour: Rate | null;
  last_day: Rate | null;
  previous_day: Rate | null;
  /** The last day's fill rate fell below half of the day before's. */
  falling: boolean;
}

export interface Rate {
  filled: number;
  total: number;
  rate: number;
}

export interface HealthReport {
  page_type: string;
  marketplace: string;
  fields: FieldHealth[];
}

export class ParserHealth {
  private buckets: Bucket[] = [];

  add(pageType: string, marketplace: string, counts: FieldCounts, now: number): void {
    const hour = Math.floor(now / HOUR_MS);
    let b = this.buckets.at(-1);
    if (!b || b.hour !== hour) {
      b = { hour, counts: new Map() };
      this.buckets.push(b);
      this.buckets = this.buckets.filter((x) => x.hour > hour - KEEP_HOURS);
    }
    const key = `${pageType}|${marketplace}`;
    let fields = b.counts.get(key);
    if (!fields) b.counts.set(key, fields = new Map());
    for (const [field, [f, e]] of counts) {
      const c = fields.get(field) ?? [0, 0];
      c[0] += f;
      c[1] += e;
      fields.set(field, c);
    }
  }

  /** Fill rates per page type and marketplace over the last hour, last day and the day before. */
  report(now: number): HealthReport[] {
    const hour = Math.floor(now / HOUR_MS);
    const windows = {
      last_hour: (h: number) => h === hour,
      last_day: (h: number) => h > hour - 24 && h <= hour,
      previous_day: (h: number) => h > hour - 48 && h <= hour - 24,
    };
    const sums = new Map<string, Map<string, Record<keyof typeof windows, [number, number]>>>();
    for (const b of this.buckets) {
      for (const [key, fields] of b.counts) {
        let perField = sums.get(key);
        if (!perField) sums.set(key, perField = new Map());
        for (const [field, [f, e]] of fields) {
          let w = perField.get(field);
          if (!w) {
            perField.set(field, w = { last_hour: [0, 0], last_day: [0, 0], previous_day: [0, 0] });
          }
          for (const name of Object.keys(windows) as (keyof typeof windows)[]) {
            if (windows[name](b.hour)) {
              w[name][0] += f;
              w[name][1] += e;
            }
          }
        }
      }
    }
    const rate = ([f, e]: [number, number]): Rate | null =>
      f + e === 0
        ? null
        : { filled: f, total: f + e, rate: Math.round((f / (f + e)) * 1000) / 1000 };
    return [...sums].sort(([a], [b]) => a.localeCompare(b)).map(([key, perField]) => {
      const [page_type, marketplace] = key.split("|");
      const fields = [...perField].sort(([a], [b]) => a.localeCompare(b)).map(([field, w]) => {
        const day = rate(w.last_day), before = rate(w.previous_day);
        const falling = !!day && !!before && day.total >= MIN_SAMPLES &&
          before.total >= MIN_SAMPLES &&
          day.rate < before.rate * FALL_RATIO;
        return {
          field,
          last_hour: rate(w.last_hour),
          last_day: day,
          previous_day: before,
          falling,
        };
      });
      return { page_type, marketplace, fields };
    });
  }
}
